import { useEffect, useState, type KeyboardEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { MediaImage } from '../components/MediaImage'
import { OpenInEditor } from '../shell/OpenInEditor'
import { useAppStore } from '../store'
import { assetNameProblem, renameAsset } from './renameAsset'
import { UseInFlow } from './UseInFlow'
import { bytesWords, dateWords, durationWords } from './words'

/** One asset: its picture, what it is, and the runs that used it as an input. */
export function AssetDetailPanel() {
  const { detail, close, selection, deleteAssets, goTo, openRun } = useAppStore(
    useShallow((s) => ({
      detail: s.assetDetail,
      close: s.openAsset,
      selection: s.assetSelection,
      deleteAssets: s.deleteAssets,
      goTo: s.goTo,
      openRun: s.openRun,
    })),
  )
  if (!detail) return null
  const facts: [string, string][] = [
    ['Type', detail.contentType],
    ['Size', bytesWords(detail.sizeBytes)],
    ...(detail.width !== null && detail.height !== null
      ? [['Dimensions', `${detail.width} × ${detail.height}`] as [string, string]]
      : []),
    ...(detail.durationMs !== null
      ? [['Duration', durationWords(detail.durationMs)] as [string, string]]
      : []),
    ['Folder', detail.folderPath ?? 'Top level'],
    ['Added', dateWords(detail.createdAt)],
    ['Status', detail.status],
    ['SHA-256', `${detail.sha256.slice(0, 16)}…`],
  ]
  const isImage = detail.mediaType === 'image' || detail.contentType.startsWith('image/')
  return (
    <aside className="asset-detail" aria-label={`Asset ${detail.name}`}>
      <div className="asset-detail-head">
        <AssetName key={detail.id} id={detail.id} name={detail.name} />
        <button
          type="button"
          className="small-button"
          aria-label="Close the details"
          onClick={() => {
            void close(null)
          }}
        >
          ✕
        </button>
      </div>
      <div className="asset-detail-preview">
        {isImage ? (
          <MediaImage
            source={{ sha256: detail.sha256, ...(detail.url ? { url: detail.url } : {}) }}
            alt={detail.name}
            size={512}
          />
        ) : (
          <div className="asset-thumb placeholder">No preview for {detail.mediaType}</div>
        )}
      </div>
      {detail.pendingRename ? (
        <p
          className={`asset-rename-note ${detail.pendingRename.state}`}
          role={detail.pendingRename.state === 'refused' ? 'alert' : 'status'}
        >
          {detail.pendingRename.state === 'waiting'
            ? 'The new name is not sent yet: it will be, once Atelier is back online.'
            : `The service refused the name "${detail.pendingRename.name}": ${detail.pendingRename.message ?? 'try another name'}.`}
        </p>
      ) : null}
      <dl className="asset-facts">
        {facts.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd title={term === 'SHA-256' ? detail.sha256 : value}>{value}</dd>
          </div>
        ))}
      </dl>
      <section className="asset-uses" aria-label="Used as input by">
        <h3>Used as input by</h3>
        {detail.usedBy.length === 0 ? (
          <p className="muted">No run in the local copy used it yet.</p>
        ) : (
          <ul>
            {detail.usedBy.map((use) => (
              <li key={use.runId}>
                <button
                  type="button"
                  className="link-button"
                  onClick={() => {
                    goTo('runs')
                    openRun(use.runId)
                  }}
                >
                  {use.title}
                </button>
                <span className="muted">
                  {use.model ?? 'flow'} · {use.status} · {dateWords(use.createdAt)}
                </span>
              </li>
            ))}
            {detail.usedByMore ? <li className="muted">And more, older runs.</li> : null}
          </ul>
        )}
      </section>
      <div className="asset-detail-actions">
        {isImage ? <UseInFlow assetId={detail.id} assetName={detail.name} /> : null}
        {detail.url ? (
          // The service's own address for the file, fresh for a while: the browser saves it.
          <a className="small-button" href={detail.url} download={detail.name}>
            Download
          </a>
        ) : (
          <p className="muted asset-download-note">
            To download it, sync while online: the file’s address has expired.
          </p>
        )}
        {detail.contentType.startsWith('image/') ? (
          <OpenInEditor source={{ assetId: detail.id }} />
        ) : null}
        <button
          type="button"
          className="small-button danger"
          onClick={() => {
            const ids = selection.includes(detail.id) ? selection : [detail.id]
            void deleteAssets(ids)
          }}
        >
          {selection.length > 1 && selection.includes(detail.id)
            ? `Delete ${selection.length} assets`
            : 'Delete'}
        </button>
      </div>
    </aside>
  )
}

/**
 * The asset's name, a button that turns into a field: Enter keeps the new name, Escape the old
 * one. F2 anywhere outside a field starts it, as in a desktop file manager.
 */
function AssetName({ id, name }: { id: string; name: string }) {
  const [draft, setDraft] = useState<string | null>(null)
  const problem = draft === null ? null : assetNameProblem(draft)
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key !== 'F2' || draft !== null) return
      const target = event.target as HTMLElement | null
      if (target?.closest('input, textarea, select, [contenteditable="true"]')) return
      event.preventDefault()
      setDraft(name)
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [draft, name])

  if (draft === null) {
    return (
      <h2 title={name}>
        <button
          type="button"
          className="asset-name-button"
          title="Rename (F2)"
          onClick={() => {
            setDraft(name)
          }}
        >
          {name}
        </button>
      </h2>
    )
  }
  const save = () => {
    if (problem !== null) return
    setDraft(null)
    void renameAsset(id, draft, name)
  }
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault()
      save()
    } else if (event.key === 'Escape') {
      event.preventDefault()
      event.stopPropagation()
      setDraft(null)
    }
  }
  return (
    <div className="asset-name-edit">
      <input
        // The field appears because the person asked to rename: typing goes straight in.
        autoFocus
        aria-label="Asset name"
        aria-invalid={problem !== null}
        aria-describedby={problem === null ? undefined : `asset-name-problem-${id}`}
        value={draft}
        onChange={(event) => {
          setDraft(event.target.value)
        }}
        onKeyDown={onKeyDown}
        onFocus={(event) => {
          // The name without its extension is selected, as a file manager does.
          const dot = event.target.value.lastIndexOf('.')
          event.target.setSelectionRange(0, dot > 0 ? dot : event.target.value.length)
        }}
      />
      <button type="button" className="small-button" disabled={problem !== null} onClick={save}>
        Rename
      </button>
      <button
        type="button"
        className="small-button"
        onClick={() => {
          setDraft(null)
        }}
      >
        Cancel
      </button>
      {problem === null ? null : (
        <p id={`asset-name-problem-${id}`} className="asset-name-problem" role="alert">
          {problem}
        </p>
      )}
    </div>
  )
}

import { useShallow } from 'zustand/react/shallow'
import { MediaImage } from '../components/MediaImage'
import { useAppStore } from '../store'
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
        <h2 title={detail.name}>{detail.name}</h2>
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

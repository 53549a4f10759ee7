import { useEffect, useState } from 'react'
import type {
  RemixAs,
  RemixInspection,
  RemixPreview,
  RemixSource,
} from '../../../src-shared/domain/remix'
import type { IpcError } from '../../../src-shared/ipc/result'
import { errorText } from './errorWords'
import { Modal } from './Modal'
import { openRemix } from './remix'

/**
 * "Open in editor" (issue 20): a button that asks, in a small dialog, whether the flow that
 * made this should open as a new flow or as a new version of the original (offered only when
 * the original is one of the person's own flows here), with the seed, model and run it comes
 * from; then the Flows screen opens the editor on it.
 */
export function OpenInEditor({
  source,
  className = 'small-button',
}: {
  source: RemixSource
  className?: string
}) {
  const [asking, setAsking] = useState(false)
  return (
    <>
      <button
        type="button"
        className={className}
        title="Recreate the flow that made this, as it ran, and open it in the editor"
        onClick={() => {
          setAsking(true)
        }}
      >
        Open in editor
      </button>
      {asking ? (
        <RemixDialog
          source={source}
          onClose={() => {
            setAsking(false)
          }}
        />
      ) : null}
    </>
  )
}

type Inspected = { state: 'reading' } | { state: 'read'; value: RemixInspection } | IpcProblem
type IpcProblem = { state: 'failed'; error: IpcError }

function RemixDialog({ source, onClose }: { source: RemixSource; onClose: () => void }) {
  const [inspected, setInspected] = useState<Inspected>({ state: 'reading' })
  const [busy, setBusy] = useState<RemixAs | null>(null)

  useEffect(() => {
    let live = true
    const api = window.atelier
    if (!api) return
    void api.remix.inspect({ source }).then((result) => {
      if (!live) return
      setInspected(
        result.ok
          ? { state: 'read', value: result.value }
          : { state: 'failed', error: result.error },
      )
    })
    return () => {
      live = false
    }
  }, [source])

  const open = (as: RemixAs) => {
    setBusy(as)
    void openRemix(source, as).then((opened) => {
      setBusy(null)
      if (opened) onClose()
    })
  }

  const preview =
    inspected.state === 'read' && !('workflow' in inspected.value) ? inspected.value : null
  return (
    <Modal label="Open in editor" className="dialog remix-dialog" onClose={onClose}>
      <h2>Open the flow that made this</h2>
      {inspected.state === 'reading' ? (
        <p className="muted" role="status">
          Reading where it came from…
        </p>
      ) : null}
      {inspected.state === 'failed' ? (
        <div className="banner error" role="alert">
          {errorText(inspected.error)}
        </div>
      ) : null}
      {preview ? <Story preview={preview} /> : null}
      <div className="dialog-actions">
        <button type="button" className="small-button" onClick={onClose}>
          Cancel
        </button>
        {preview?.localFlow ? (
          <button
            type="button"
            className="small-button"
            disabled={busy !== null}
            title="The original flow takes the remix as its new state; what it was is kept as a version."
            onClick={() => {
              open('version')
            }}
          >
            {busy === 'version' ? 'Opening…' : `New version of “${preview.localFlow.name}”`}
          </button>
        ) : null}
        <button
          type="button"
          className="small-button primary"
          disabled={busy !== null || preview === null}
          onClick={() => {
            open('new')
          }}
        >
          {busy === 'new' ? 'Opening…' : 'New flow'}
        </button>
      </div>
    </Modal>
  )
}

/** What the record says: the flow, the seed, the model and the run it comes from. */
function Story({ preview }: { preview: RemixPreview }) {
  return (
    <>
      {preview.warning ? (
        <div className="banner warning" role="status">
          {preview.warning}
        </div>
      ) : null}
      <dl className="remix-story" data-testid="remix-story">
        <div>
          <dt>Flow</dt>
          <dd>
            {preview.flowName}
            {preview.nodeLabel ? <span className="muted"> · {preview.nodeLabel}</span> : null}
          </dd>
        </div>
        <div>
          <dt>Seed</dt>
          <dd>{preview.seed === null ? 'none' : preview.seed}</dd>
        </div>
        <div>
          <dt>Model</dt>
          <dd>
            {preview.model
              ? `${preview.model.slug}${preview.model.version ? ` ${preview.model.version}` : ''}`
              : 'none'}
          </dd>
        </div>
        <div>
          <dt>Run</dt>
          <dd className="run-id">{preview.runId ?? 'made on this computer'}</dd>
        </div>
        <div>
          <dt>Made</dt>
          <dd>{new Date(preview.createdAt).toLocaleString()}</dd>
        </div>
      </dl>
      <p className="muted">
        Its inputs are set as they were and every seed is locked, so a run makes the same picture
        again.
      </p>
    </>
  )
}

import { useRef, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { usePlacedUnder } from './placedUnder'
import { momentWords } from './words'

/** Named versions of the open flow: keep one, list them, go back to one. */
export function Versions() {
  const { editor, saveVersion, restoreVersion } = useAppStore(
    useShallow((s) => ({
      editor: s.editor,
      saveVersion: s.saveVersion,
      restoreVersion: s.restoreVersion,
    })),
  )
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [open, setOpen] = useState(false)
  const summary = useRef<HTMLElement>(null)
  const place = usePlacedUnder(open, summary)
  if (!editor) return null
  return (
    <details
      className="versions"
      open={open}
      onToggle={(event) => {
        setOpen(event.currentTarget.open)
      }}
    >
      <summary ref={summary} className="small-button">
        Versions ({editor.versions.length})
      </summary>
      <div className="versions-panel" style={place}>
        {editor.readOnly ? null : (
          <form
            className="versions-save"
            onSubmit={(event) => {
              event.preventDefault()
              const trimmed = name.trim()
              if (trimmed === '') return
              setBusy(true)
              void saveVersion(trimmed).then((saved) => {
                setBusy(false)
                if (saved) setName('')
              })
            }}
          >
            <input
              type="text"
              aria-label="Version name"
              placeholder="Name this version"
              maxLength={200}
              value={name}
              onChange={(event) => {
                setName(event.target.value)
              }}
            />
            <button type="submit" className="small-button" disabled={busy || name.trim() === ''}>
              Save version
            </button>
          </form>
        )}
        {editor.versions.length === 0 ? (
          <p className="muted">No versions yet. A version keeps the flow as it is now.</p>
        ) : (
          <ul className="versions-list">
            {editor.versions.map((version) => (
              <li key={version.version} data-testid={`version-${version.version}`}>
                <span>
                  <strong>{version.name}</strong>
                  <span className="muted"> · {momentWords(version.createdMs)}</span>
                </span>
                {editor.readOnly ? null : (
                  <button
                    type="button"
                    className="link-button"
                    onClick={() => {
                      void restoreVersion(version.version)
                    }}
                  >
                    Restore
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
    </details>
  )
}

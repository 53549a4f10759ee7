import { useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { FolderListing } from '../../../src-shared/domain/assets'
import type { IpcError } from '../../../src-shared/ipc/result'
import { Modal } from '../shell/Modal'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import { selectedAssetFolder } from '../store/uploads'

/**
 * "Choose folder…" in the browser mode, which has no native paths: the machine's folders are
 * browsed through the main process (`uploads.browse`), from home, or a path is typed.
 */
export function FolderPicker() {
  const { open, setOpen, startUpload, selected, folders } = useAppStore(
    useShallow((s) => ({
      open: s.folderPickerOpen,
      setOpen: s.setFolderPickerOpen,
      startUpload: s.startUpload,
      selected: selectedAssetFolder(s),
      folders: s.assetTree?.folders,
    })),
  )
  if (!open) return null
  return (
    <Picker
      selected={selected}
      places={(folders ?? [])
        .map((folder) => ({ id: folder.id, path: folder.path }))
        .sort((a, b) => a.path.localeCompare(b.path))}
      onClose={() => {
        setOpen(false)
      }}
      onChoose={async (path, watch, into) => {
        if (await startUpload(path, { watch, into })) setOpen(false)
      }}
    />
  )
}

const TOP_LEVEL = ''

function Picker(props: {
  /** The asset folder selected in the tree, where the upload goes unless changed here. */
  selected: string | null
  places: { id: string; path: string }[]
  onClose: () => void
  onChoose: (path: string, watch: boolean, into: string | null) => Promise<void>
}) {
  const [listing, setListing] = useState<FolderListing | null>(null)
  const [typed, setTyped] = useState('')
  const [problem, setProblem] = useState<IpcError | null>(null)
  const [watch, setWatch] = useState(false)
  const [busy, setBusy] = useState(false)
  const [into, setInto] = useState(props.selected ?? TOP_LEVEL)

  const browse = async (path?: string) => {
    const api = window.atelier
    if (!api) return
    const result = await api.uploads.browse(path === undefined ? {} : { path })
    if (result.ok) {
      setListing(result.value)
      setTyped(result.value.path)
      setProblem(null)
    } else {
      setProblem(result.error)
    }
  }

  useEffect(() => {
    let current = true
    const api = window.atelier
    if (!api) return
    void api.uploads.browse({}).then((result) => {
      if (!current) return
      if (result.ok) {
        setListing(result.value)
        setTyped(result.value.path)
      } else setProblem(result.error)
    })
    return () => {
      current = false
    }
  }, [])

  const choose = async () => {
    setBusy(true)
    await props.onChoose(typed.trim(), watch, watch || into === TOP_LEVEL ? null : into)
    setBusy(false)
  }

  return (
    <Modal
      label="Choose a folder to upload"
      className="dialog wide stack folder-picker"
      onClose={props.onClose}
    >
      <h2>Choose a folder to upload</h2>
      <form
        className="folder-picker-path"
        onSubmit={(event) => {
          event.preventDefault()
          void browse(typed.trim())
        }}
      >
        <input
          type="text"
          aria-label="Folder path"
          value={typed}
          spellCheck={false}
          onChange={(event) => {
            setTyped(event.target.value)
          }}
        />
        <button type="submit" className="small-button">
          Go
        </button>
      </form>
      {problem ? (
        <p className="banner error" role="alert">
          {errorText(problem)}
        </p>
      ) : null}
      <ul className="folder-picker-list" aria-label="Folders">
        {listing?.parent ? (
          <li>
            <button
              type="button"
              className="folder-picker-entry"
              onClick={() => {
                void browse(listing.parent ?? undefined)
              }}
            >
              ↑ Up to {listing.parent}
            </button>
          </li>
        ) : null}
        {listing?.folders.map((entry) => (
          <li key={entry.path}>
            <button
              type="button"
              className="folder-picker-entry"
              onClick={() => {
                void browse(entry.path)
              }}
            >
              📁 {entry.name}
            </button>
          </li>
        ))}
        {listing && listing.folders.length === 0 ? (
          <li className="muted">No folders inside; this one can be uploaded.</li>
        ) : null}
      </ul>
      <label className="folder-picker-watch">
        <input
          type="checkbox"
          checked={watch}
          onChange={(event) => {
            setWatch(event.target.checked)
          }}
        />
        Keep watching it, and upload what appears in it later
      </label>
      <label className="folder-picker-into">
        Into:{' '}
        {watch ? (
          <span>the top level (a watched folder always goes there)</span>
        ) : (
          <select
            aria-label="Into"
            value={into}
            onChange={(event) => {
              setInto(event.target.value)
            }}
          >
            <option value={TOP_LEVEL}>Top level</option>
            {props.places.map((place) => (
              <option key={place.id} value={place.id}>
                {place.path}
              </option>
            ))}
          </select>
        )}
      </label>
      <div className="dialog-actions">
        <button type="button" className="small-button" onClick={props.onClose}>
          Cancel
        </button>
        <button
          type="button"
          className="primary-button"
          disabled={busy || typed.trim() === ''}
          onClick={() => {
            void choose()
          }}
        >
          Upload this folder
        </button>
      </div>
    </Modal>
  )
}

import { useEffect, useState, type DragEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { MEDIA_TYPES } from '../../../src-shared/domain/search'
import type { MediaType } from '../../../src-shared/api'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import type { AssetFilters } from '../store/assets'
import { AssetBrowser } from './AssetBrowser'
import { AssetDetailPanel } from './AssetDetailPanel'
import { droppedPaths } from './dropped'
import { FolderPicker } from './FolderPicker'
import { FolderTree } from './FolderTree'
import { UploadsPanel } from './UploadsPanel'
import { plural } from './words'
import './assets.css'

const ADDED: { value: AssetFilters['added']; label: string }[] = [
  { value: 'any', label: 'Any time' },
  { value: 'day', label: 'Last 24 hours' },
  { value: 'week', label: 'Last 7 days' },
  { value: 'month', label: 'Last 30 days' },
]
const SIZES: { value: AssetFilters['size']; label: string }[] = [
  { value: 'any', label: 'Any size' },
  { value: 'small', label: 'Under 1 MB' },
  { value: 'medium', label: '1 – 10 MB' },
  { value: 'large', label: 'Over 10 MB' },
]

/** Files dragged in from the system, as opposed to assets dragged inside the page. */
const fromSystem = (event: DragEvent) => event.dataTransfer.types.includes('Files')

/** The Assets section: folders, the assets as a grid or a list, their details, the uploads. */
export function AssetsPage() {
  const state = useAppStore(
    useShallow((s) => ({
      connect: s.connectAssets,
      filters: s.assetFilters,
      setFilters: s.setAssetFilters,
      view: s.assetView,
      setView: s.setAssetView,
      items: s.assetItems,
      more: s.assetNext !== null,
      loading: s.assetLoading,
      error: s.assetError,
      selection: s.assetSelection,
      detailOpen: s.assetDetail !== null,
      uploadsOpen: s.uploadsOpen,
      setUploadsOpen: s.setUploadsOpen,
      running: s.uploads.filter((u) => ['scanning', 'folders', 'uploading'].includes(u.state))
        .length,
      choose: s.chooseUploadFolder,
      uploadDropped: s.uploadDropped,
      moveAssets: s.moveAssets,
      deleteAssets: s.deleteAssets,
      tree: s.assetTree,
      pushToast: s.pushToast,
    })),
  )
  const { connect, filters, setFilters } = state
  const [text, setText] = useState(filters.text)
  const [dropping, setDropping] = useState(false)

  useEffect(() => connect(), [connect])

  // Typing settles before the list is read again.
  useEffect(() => {
    if (text === useAppStore.getState().assetFilters.text) return
    const timer = setTimeout(() => {
      setFilters({ text })
    }, 200)
    return () => {
      clearTimeout(timer)
    }
  }, [text, setFilters])

  const filtered =
    filters.text !== '' ||
    filters.mediaType !== null ||
    filters.added !== 'any' ||
    filters.size !== 'any'

  return (
    <div
      className={`assets-page ${state.detailOpen || state.uploadsOpen ? 'with-side' : ''}`}
      onDragOver={(event) => {
        if (!fromSystem(event)) return
        event.preventDefault()
        setDropping(true)
      }}
      onDragLeave={(event) => {
        if (event.currentTarget === event.target) setDropping(false)
      }}
      onDrop={(event) => {
        if (!fromSystem(event)) return
        event.preventDefault()
        setDropping(false)
        // Read now: the drop's items are gone once this handler returns.
        const dropped = droppedPaths(event.dataTransfer)
        if (dropped && (dropped.folders.length > 0 || dropped.files.length > 0)) {
          if (dropped.unknown > 0) {
            state.pushToast({
              tone: 'warning',
              title: `${plural(dropped.unknown, 'item', 'items')} left out`,
              message: 'They are not files or folders of this machine.',
            })
          }
          void state.uploadDropped(dropped)
          return
        }
        // A browser gives no path for what is dropped (only the desktop window can tell it):
        // the folder is chosen by its path instead.
        state.pushToast({
          tone: 'info',
          title: 'Choose the folder to upload',
          message:
            'A browser does not say where dropped files are on this machine; pick their folder here.',
        })
        void state.choose()
      }}
    >
      <FolderTree />
      <section className="assets-main" aria-label="Asset list">
        <div className="assets-toolbar">
          <input
            type="search"
            className="assets-search"
            aria-label="Search assets"
            placeholder="Search assets"
            value={text}
            onChange={(event) => {
              setText(event.target.value)
            }}
          />
          <select
            aria-label="Type"
            value={filters.mediaType ?? ''}
            onChange={(event) => {
              setFilters({ mediaType: (event.target.value || null) as MediaType | null })
            }}
          >
            <option value="">All types</option>
            {MEDIA_TYPES.map((type) => (
              <option key={type} value={type}>
                {type[0]?.toUpperCase()}
                {type.slice(1)}
              </option>
            ))}
          </select>
          <select
            aria-label="Added"
            value={filters.added}
            onChange={(event) => {
              setFilters({ added: event.target.value as AssetFilters['added'] })
            }}
          >
            {ADDED.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
          <select
            aria-label="Size"
            value={filters.size}
            onChange={(event) => {
              setFilters({ size: event.target.value as AssetFilters['size'] })
            }}
          >
            {SIZES.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
          <div className="segmented view-toggle" role="radiogroup" aria-label="View">
            {(['grid', 'list'] as const).map((view) => (
              <label key={view} className={state.view === view ? 'checked' : ''}>
                <input
                  type="radio"
                  name="asset-view"
                  checked={state.view === view}
                  onChange={() => {
                    state.setView(view)
                  }}
                />
                {view === 'grid' ? 'Grid' : 'List'}
              </label>
            ))}
          </div>
          <span className="toolbar-gap" />
          <button
            type="button"
            className="small-button"
            aria-pressed={state.uploadsOpen}
            onClick={() => {
              state.setUploadsOpen(!state.uploadsOpen)
            }}
          >
            Uploads{state.running > 0 ? ` (${state.running})` : ''}
          </button>
          <button
            type="button"
            className="primary-button"
            onClick={() => {
              void state.choose()
            }}
          >
            Choose folder…
          </button>
        </div>
        <div className="assets-status" aria-live="polite">
          {state.selection.length > 0 ? (
            <>
              <span>{plural(state.selection.length, 'asset', 'assets')} selected</span>
              <select
                aria-label="Move the selected assets to"
                value=""
                onChange={(event) => {
                  const target = event.target.value
                  if (target === '') return
                  void state.moveAssets(state.selection, target === 'root' ? null : target)
                }}
              >
                <option value="">Move to…</option>
                <option value="root">Top level</option>
                {state.tree?.folders.map((folder) => (
                  <option key={folder.id} value={folder.id}>
                    {folder.path}
                  </option>
                ))}
              </select>
              <button
                type="button"
                className="small-button danger"
                onClick={() => {
                  void state.deleteAssets(state.selection)
                }}
              >
                Delete
              </button>
            </>
          ) : (
            <span className="muted">
              {plural(state.items.length, 'asset', 'assets')}
              {state.more ? '+' : ''}
              {filtered ? ' match' : ''}
            </span>
          )}
        </div>
        {state.error ? (
          <div className="banner error" role="alert">
            {errorText(state.error)}
          </div>
        ) : null}
        {state.items.length === 0 && !state.loading && !state.error ? (
          <div className="empty-state asset-empty" role="status">
            <h2>{filtered ? 'No asset matches' : 'No assets here yet'}</h2>
            <p>
              {filtered
                ? 'Try other words or filters.'
                : 'Drop folders or files here, or choose a folder: its sub-folders become asset folders.'}
            </p>
          </div>
        ) : (
          <AssetBrowser />
        )}
        {dropping ? (
          <div className="asset-drop-zone" aria-hidden="true">
            Drop to upload
          </div>
        ) : null}
      </section>
      {state.uploadsOpen ? <UploadsPanel /> : state.detailOpen ? <AssetDetailPanel /> : null}
      <FolderPicker />
    </div>
  )
}

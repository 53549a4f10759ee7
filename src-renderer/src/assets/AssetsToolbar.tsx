import { useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { MEDIA_TYPES } from '../../../src-shared/domain/search'
import type { MediaType } from '../../../src-shared/api'
import { useAppStore } from '../store'
import type { AssetFilters } from '../store/assets'

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

/** The search box's text, handed to the filters once typing has settled. */
function useSearchText(initial: string, setFilters: (filters: Partial<AssetFilters>) => void) {
  const [text, setText] = useState(initial)
  useEffect(() => {
    if (text === useAppStore.getState().assetFilters.text) return
    const timer = setTimeout(() => {
      setFilters({ text })
    }, 200)
    return () => {
      clearTimeout(timer)
    }
  }, [text, setFilters])
  return [text, setText] as const
}

/** Above the assets: the search and filters, grid or list, the uploads and the folder to upload. */
export function AssetsToolbar() {
  const state = useAppStore(
    useShallow((s) => ({
      filters: s.assetFilters,
      setFilters: s.setAssetFilters,
      view: s.assetView,
      setView: s.setAssetView,
      uploadsOpen: s.uploadsOpen,
      setUploadsOpen: s.setUploadsOpen,
      running: s.uploads.filter((u) => ['scanning', 'folders', 'uploading'].includes(u.state))
        .length,
      choose: s.chooseUploadFolder,
    })),
  )
  const { filters, setFilters } = state
  const [text, setText] = useSearchText(filters.text, setFilters)

  return (
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
  )
}

import { useEffect } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import type { AssetFilters } from '../store/assets'
import { selectedAssetFolder } from '../store/uploads'
import { AssetBrowser } from './AssetBrowser'
import { AssetDetailPanel } from './AssetDetailPanel'
import { AssetsStatus } from './AssetsStatus'
import { AssetsToolbar } from './AssetsToolbar'
import { FolderPicker } from './FolderPicker'
import { FolderTree } from './FolderTree'
import { UploadsPanel } from './UploadsPanel'
import { useFileDrop } from './useFileDrop'
import './assets.css'

/** Whether anything narrows the list: the status and the empty state say "match" then. */
const isFiltered = (filters: AssetFilters) =>
  filters.text !== '' ||
  filters.mediaType !== null ||
  filters.added !== 'any' ||
  filters.size !== 'any'

/** The list's place: why it could not be read, why it is empty, or the assets themselves. */
function AssetResults({ filtered }: { filtered: boolean }) {
  const { empty, loading, error } = useAppStore(
    useShallow((s) => ({
      empty: s.assetItems.length === 0,
      loading: s.assetLoading,
      error: s.assetError,
    })),
  )
  return (
    <>
      {error ? (
        <div className="banner error" role="alert">
          {errorText(error)}
        </div>
      ) : null}
      {empty && !loading && !error ? (
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
    </>
  )
}

/** The Assets section: folders, the assets as a grid or a list, their details, the uploads. */
export function AssetsPage() {
  const { connect, filtered, detailOpen, uploadsOpen, into } = useAppStore(
    useShallow((s) => {
      const selected = selectedAssetFolder(s)
      return {
        connect: s.connectAssets,
        filtered: isFiltered(s.assetFilters),
        detailOpen: s.assetDetail !== null,
        uploadsOpen: s.uploadsOpen,
        into:
          selected === null
            ? null
            : (s.assetTree?.folders.find((folder) => folder.id === selected)?.path ?? null),
      }
    }),
  )
  const { dropping, handlers } = useFileDrop()

  useEffect(() => connect(), [connect])

  return (
    <div className={`assets-page ${detailOpen || uploadsOpen ? 'with-side' : ''}`} {...handlers}>
      <FolderTree />
      <section className="assets-main" aria-label="Asset list">
        <AssetsToolbar />
        <AssetsStatus filtered={filtered} />
        <AssetResults filtered={filtered} />
        {dropping ? (
          <div className="asset-drop-zone" aria-hidden="true">
            {into === null ? 'Drop to upload' : `Drop to upload into ${into}`}
          </div>
        ) : null}
      </section>
      {uploadsOpen ? <UploadsPanel /> : detailOpen ? <AssetDetailPanel /> : null}
      <FolderPicker />
    </div>
  )
}

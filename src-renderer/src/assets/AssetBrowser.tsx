import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useState, type DragEvent, type KeyboardEvent, type MouseEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { AssetItem } from '../../../src-shared/domain/assets'
import { MediaImage } from '../components/MediaImage'
import { useAppStore } from '../store'
import { ASSETS_DRAG } from './drag'
import { bytesWords, dateWords } from './words'

const TILE = 168
const TILE_GAP = 12
const ROW = TILE + 44
const LIST_ROW = 40
/** Before the scroll element is measured (and in tests): a plausible size, so rows render. */
const INITIAL_RECT = { width: 900, height: 640 }

function modeOf(event: MouseEvent): 'only' | 'toggle' | 'range' {
  if (event.shiftKey) return 'range'
  if (event.metaKey || event.ctrlKey) return 'toggle'
  return 'only'
}

/** The width of an element, followed as it resizes. */
function useWidth(element: HTMLElement | null): number {
  const [width, setWidth] = useState(INITIAL_RECT.width)
  useEffect(() => {
    if (!element || typeof ResizeObserver === 'undefined') return
    const observer = new ResizeObserver((entries) => {
      const measured = entries[0]?.contentRect.width
      if (measured !== undefined && measured > 0) setWidth(measured)
    })
    observer.observe(element)
    return () => {
      observer.disconnect()
    }
  }, [element])
  return width
}

/** The assets as a grid of thumbnails or a list, virtualized: thousands scroll smoothly. */
export function AssetBrowser() {
  const { view, items, next, selection, loadMore, selectAll, clear, deleteAssets } = useAppStore(
    useShallow((s) => ({
      view: s.assetView,
      items: s.assetItems,
      next: s.assetNext,
      selection: s.assetSelection,
      loadMore: s.loadMoreAssets,
      selectAll: s.selectAllAssets,
      clear: s.clearAssetSelection,
      deleteAssets: s.deleteAssets,
    })),
  )
  const [scroller, setScroller] = useState<HTMLDivElement | null>(null)
  const width = useWidth(scroller)
  const columns =
    view === 'grid' ? Math.max(1, Math.floor((width + TILE_GAP) / (TILE + TILE_GAP))) : 1
  const rows = Math.ceil(items.length / columns)
  // The tiles share the row's width, so the grid fills the column at any size.
  const tileWidth = Math.floor((width - (columns - 1) * TILE_GAP) / columns)
  // eslint-disable-next-line react-hooks/incompatible-library -- its functions are read during render only
  const virtualizer = useVirtualizer({
    count: rows,
    getScrollElement: () => scroller,
    estimateSize: () => (view === 'grid' ? ROW : LIST_ROW),
    overscan: 4,
    initialRect: INITIAL_RECT,
  })
  const virtualRows = virtualizer.getVirtualItems()
  const lastRow = virtualRows.at(-1)?.index ?? 0
  // Near the end of what is loaded: the next page.
  useEffect(() => {
    if (next !== null && lastRow >= rows - 3) void loadMore()
  }, [lastRow, rows, next, loadMore])
  const selected = new Set(selection)

  const onKeyDown = (event: KeyboardEvent) => {
    const mod = event.ctrlKey || event.metaKey
    if (mod && event.key.toLowerCase() === 'a') {
      event.preventDefault()
      selectAll()
    } else if ((event.key === 'Delete' || event.key === 'Backspace') && selection.length > 0) {
      event.preventDefault()
      void deleteAssets(selection)
    } else if (event.key === 'Escape' && selection.length > 0) {
      clear()
    }
  }

  return (
    <div
      ref={setScroller}
      className={`asset-scroller ${view}`}
      role={view === 'grid' ? 'grid' : 'table'}
      aria-label="Assets"
      aria-multiselectable={view === 'grid' ? true : undefined}
      aria-rowcount={rows}
      tabIndex={0}
      onKeyDown={onKeyDown}
    >
      {view === 'list' ? (
        <div className="asset-list-head" role="row">
          <span role="columnheader">Name</span>
          <span role="columnheader">Type</span>
          <span role="columnheader">Size</span>
          <span role="columnheader">Dimensions</span>
          <span role="columnheader">Added</span>
        </div>
      ) : null}
      <div className="asset-rows" style={{ height: virtualizer.getTotalSize() }}>
        {virtualRows.map((row) => {
          const start = row.index * columns
          const rowItems = items.slice(start, start + columns)
          return (
            <div
              key={row.key}
              role={view === 'grid' ? 'row' : undefined}
              aria-rowindex={view === 'grid' ? row.index + 1 : undefined}
              className={view === 'grid' ? 'asset-grid-row' : 'asset-list-row-wrap'}
              style={{ transform: `translateY(${row.start}px)`, height: row.size }}
            >
              {rowItems.map((item) =>
                view === 'grid' ? (
                  <AssetTile
                    key={item.id}
                    item={item}
                    selected={selected.has(item.id)}
                    width={tileWidth}
                  />
                ) : (
                  <AssetRow key={item.id} item={item} selected={selected.has(item.id)} />
                ),
              )}
            </div>
          )
        })}
      </div>
    </div>
  )
}

function useItemHandlers(item: AssetItem) {
  const selectAsset = useAppStore((s) => s.selectAsset)
  return {
    onClick: (event: MouseEvent) => {
      selectAsset(item.id, modeOf(event))
    },
    draggable: true,
    onDragStart: (event: DragEvent) => {
      const { assetSelection } = useAppStore.getState()
      const ids = assetSelection.includes(item.id) ? assetSelection : [item.id]
      event.dataTransfer.setData(ASSETS_DRAG, JSON.stringify(ids))
      event.dataTransfer.effectAllowed = 'move'
    },
  }
}

function Thumbnail({ item, size }: { item: AssetItem; size: number }) {
  if (item.mediaType === 'image' || item.contentType.startsWith('image/')) {
    return (
      <MediaImage
        source={{ sha256: item.sha256, ...(item.url ? { url: item.url } : {}) }}
        alt={item.name}
        size={size}
        className="asset-thumb"
      />
    )
  }
  return (
    <div className="asset-thumb placeholder" aria-hidden="true">
      {item.mediaType === 'video' ? '▶' : item.mediaType === 'audio' ? '♪' : '□'}
    </div>
  )
}

function AssetTile(props: { item: AssetItem; selected: boolean; width: number }) {
  const { item, selected } = props
  const handlers = useItemHandlers(item)
  return (
    <div
      style={{ width: props.width, height: ROW - TILE_GAP }}
      role="gridcell"
      aria-selected={selected}
      aria-label={item.name}
      className={`asset-tile ${selected ? 'selected' : ''}`}
      {...handlers}
    >
      <div className="asset-tile-picture">
        <Thumbnail item={item} size={256} />
      </div>
      <div className="asset-tile-name" title={item.name}>
        {item.name}
      </div>
      <div className="asset-tile-meta">
        {bytesWords(item.sizeBytes)}
        {item.width !== null && item.height !== null ? ` · ${item.width}×${item.height}` : ''}
      </div>
    </div>
  )
}

function AssetRow({ item, selected }: { item: AssetItem; selected: boolean }) {
  const handlers = useItemHandlers(item)
  return (
    <div
      role="row"
      aria-selected={selected}
      aria-label={item.name}
      className={`asset-list-row ${selected ? 'selected' : ''}`}
      {...handlers}
    >
      <span role="cell" className="asset-list-name">
        <Thumbnail item={item} size={64} />
        <span title={item.name}>{item.name}</span>
      </span>
      <span role="cell">{item.contentType}</span>
      <span role="cell">{bytesWords(item.sizeBytes)}</span>
      <span role="cell">
        {item.width !== null && item.height !== null ? `${item.width}×${item.height}` : '—'}
      </span>
      <span role="cell">{dateWords(item.createdAt)}</span>
    </div>
  )
}

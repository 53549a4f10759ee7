import type { MediaType } from '../../../src-shared/api'
import type {
  AssetDetail,
  AssetFolderTree,
  AssetItem,
  HeldDelete,
} from '../../../src-shared/domain/assets'
import type { AtelierApi } from '../../../src-shared/ipc/api'
import type { IpcError } from '../../../src-shared/ipc/result'
import type { SliceWithApi } from './api'
import type { AppState } from './index'
import { toastedCalls } from './toastedCalls'

/** Which assets the list shows; the folder is an id, 'root' (top level) or null (all). */
export interface AssetFilters {
  folder: string | null
  text: string
  mediaType: MediaType | null
  added: 'any' | 'day' | 'week' | 'month'
  size: 'any' | 'small' | 'medium' | 'large'
}

export const NO_ASSET_FILTERS: AssetFilters = {
  folder: null,
  text: '',
  mediaType: null,
  added: 'any',
  size: 'any',
}

const DAY_MS = 24 * 60 * 60 * 1000
const ADDED_MS = { day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS } as const
const MB = 1024 * 1024
const SIZES = {
  small: { maxBytes: MB },
  medium: { minBytes: MB, maxBytes: 10 * MB },
  large: { minBytes: 10 * MB },
} as const
const PAGE = 200

export type SelectMode = 'only' | 'toggle' | 'range'

export interface AssetsSlice {
  assetView: 'grid' | 'list'
  assetFilters: AssetFilters
  assetItems: AssetItem[]
  assetNext: string | null
  assetLoading: boolean
  assetError: IpcError | null
  /** Selected ids, in the order they were chosen. */
  assetSelection: string[]
  /** Where a Shift+click range starts. */
  assetAnchor: string | null
  /** The asset the detail panel shows. */
  assetDetail: AssetDetail | null
  assetTree: AssetFolderTree | null

  setAssetView: (view: 'grid' | 'list') => void
  setAssetFilters: (change: Partial<AssetFilters>) => void
  loadAssets: () => Promise<void>
  loadMoreAssets: () => Promise<void>
  loadAssetFolders: () => Promise<void>
  selectAsset: (id: string, mode: SelectMode) => void
  selectAllAssets: () => void
  clearAssetSelection: () => void
  openAsset: (id: string | null) => Promise<void>
  createAssetFolder: (name: string, parentId: string | null) => Promise<boolean>
  renameAssetFolder: (id: string, name: string) => Promise<boolean>
  moveAssetFolder: (id: string, parentId: string | null) => Promise<void>
  deleteAssetFolder: (id: string) => Promise<void>
  moveAssets: (ids: string[], folderId: string | null) => Promise<void>
  deleteAssets: (ids: string[]) => Promise<void>
  /** Listens to asset changes and uploads, reads the first lists; returns the unsubscribe. */
  connectAssets: () => () => void
}

function listArgs(filters: AssetFilters, cursor: string | null) {
  const now = Date.now()
  return {
    text: filters.text,
    limit: PAGE,
    ...(filters.folder === null ? {} : { folder: filters.folder }),
    ...(filters.mediaType === null ? {} : { mediaType: filters.mediaType }),
    ...(filters.added === 'any' ? {} : { from: now - ADDED_MS[filters.added] }),
    ...(filters.size === 'any' ? {} : SIZES[filters.size]),
    ...(cursor === null ? {} : { cursor }),
  }
}

type AssetPicks = Pick<AssetsSlice, 'assetSelection' | 'assetAnchor' | 'assetItems'>

/** The selection after a click: alone, toggled (Ctrl) or a range from the anchor (Shift). */
function selectionAfter(
  { assetSelection, assetAnchor, assetItems }: AssetPicks,
  id: string,
  mode: SelectMode,
): Partial<AssetPicks> {
  if (mode === 'only') return { assetSelection: [id], assetAnchor: id }
  if (mode === 'toggle') {
    const has = assetSelection.includes(id)
    return {
      assetSelection: has ? assetSelection.filter((s) => s !== id) : [...assetSelection, id],
      assetAnchor: id,
    }
  }
  const ids = assetItems.map((item) => item.id)
  const from = ids.indexOf(assetAnchor ?? id)
  const to = ids.indexOf(id)
  if (from < 0 || to < 0) return { assetSelection: [id], assetAnchor: id }
  const [low, high] = from < to ? [from, to] : [to, from]
  return { assetSelection: ids.slice(low, high + 1) }
}

/**
 * A delete the main process holds back for a few seconds: a toast offers to undo it, and the
 * lists are read again after an undo.
 */
function offerUndo(
  get: () => AppState,
  undo: AtelierApi['assets']['undoDelete'] | undefined,
  held: HeldDelete,
  what: string,
) {
  get().pushToast({
    tone: 'info',
    title: `${what} deleted`,
    message: 'Undo within a few seconds to keep it.',
    durationMs: Math.max(1_000, held.sendsAt - Date.now()),
    action: {
      label: 'Undo',
      run: () => {
        if (!undo) return
        void undo({ undoId: held.undoId }).then((result) => {
          if (!result.ok) toastedCalls(get).fail(result.error)
          void get().loadAssets()
          void get().loadAssetFolders()
        })
      },
    },
  })
}

const unreachable: IpcError = {
  code: 'UNAVAILABLE',
  message: 'This page is not connected to Atelier.',
}

export const createAssetsSlice: SliceWithApi<AssetsSlice> = (api) => (set, get) => {
  /** Each list read counts; an answer to an older one is dropped. */
  let listGeneration = 0
  const { fail, attempt } = toastedCalls(get)

  return {
    assetView: 'grid',
    assetFilters: NO_ASSET_FILTERS,
    assetItems: [],
    assetNext: null,
    assetLoading: false,
    assetError: null,
    assetSelection: [],
    assetAnchor: null,
    assetDetail: null,
    assetTree: null,

    setAssetView: (view) => {
      set({ assetView: view })
    },

    setAssetFilters: (change) => {
      set({ assetFilters: { ...get().assetFilters, ...change } })
      void get().loadAssets()
    },

    loadAssets: async () => {
      const calls = api()
      if (!calls) {
        set({ assetError: unreachable })
        return
      }
      const generation = ++listGeneration
      set({ assetLoading: true })
      const result = await calls.assets.list(listArgs(get().assetFilters, null))
      if (generation !== listGeneration) return
      if (!result.ok) {
        set({ assetLoading: false, assetError: result.error })
        return
      }
      const ids = new Set(result.value.items.map((item) => item.id))
      set({
        assetItems: result.value.items,
        assetNext: result.value.next,
        assetLoading: false,
        assetError: null,
        assetSelection: get().assetSelection.filter((id) => ids.has(id)),
      })
    },

    loadMoreAssets: async () => {
      const calls = api()
      const { assetNext, assetLoading, assetFilters } = get()
      if (!calls || assetNext === null || assetLoading) return
      const generation = listGeneration
      set({ assetLoading: true })
      const result = await calls.assets.list(listArgs(assetFilters, assetNext))
      if (generation !== listGeneration) return
      if (!result.ok) {
        set({ assetLoading: false, assetError: result.error })
        return
      }
      set({
        assetItems: [...get().assetItems, ...result.value.items],
        assetNext: result.value.next,
        assetLoading: false,
      })
    },

    loadAssetFolders: async () => {
      const calls = api()
      if (!calls) return
      const result = await calls.assets.folders()
      if (result.ok) set({ assetTree: result.value })
    },

    selectAsset: (id, mode) => {
      set(selectionAfter(get(), id, mode))
      if (mode === 'only') void get().openAsset(id)
    },

    selectAllAssets: () => {
      set({ assetSelection: get().assetItems.map((item) => item.id) })
    },

    clearAssetSelection: () => {
      set({ assetSelection: [], assetAnchor: null })
    },

    openAsset: async (id) => {
      const calls = api()
      if (id === null || !calls) {
        set({ assetDetail: null })
        return
      }
      const result = await calls.assets.get({ id })
      if (result.ok) set({ assetDetail: result.value })
      else fail(result.error)
    },

    createAssetFolder: async (name, parentId) => {
      const calls = api()
      if (!calls) return false
      const made = await attempt(calls.assets.createFolder({ name, parentId }))
      if (made) void get().loadAssetFolders()
      return made !== null
    },

    renameAssetFolder: async (id, name) => {
      const calls = api()
      if (!calls) return false
      const renamed = await attempt(calls.assets.renameFolder({ id, name }))
      if (renamed) void get().loadAssetFolders()
      return renamed !== null
    },

    moveAssetFolder: async (id, parentId) => {
      const calls = api()
      if (!calls) return
      if (await attempt(calls.assets.moveFolder({ id, parentId }))) void get().loadAssetFolders()
    },

    deleteAssetFolder: async (id) => {
      const calls = api()
      if (!calls) return
      const name = get().assetTree?.folders.find((f) => f.id === id)?.name ?? 'The folder'
      const held = await attempt(calls.assets.deleteFolder({ id }))
      if (!held) return
      if (get().assetFilters.folder === id) get().setAssetFilters({ folder: null })
      void get().loadAssetFolders()
      offerUndo(get, api()?.assets.undoDelete, held, `"${name}"`)
    },

    moveAssets: async (ids, folderId) => {
      const calls = api()
      if (!calls || ids.length === 0) return
      const moved = await attempt(calls.assets.move({ ids, folderId }))
      if (!moved) return
      void get().loadAssets()
      void get().loadAssetFolders()
      get().pushToast({
        tone: 'success',
        title: moved.length === 1 ? '1 asset moved' : `${moved.length} assets moved`,
      })
    },

    deleteAssets: async (ids) => {
      const calls = api()
      if (!calls || ids.length === 0) return
      const held = await attempt(calls.assets.delete({ ids }))
      if (!held) return
      const gone = new Set(ids)
      set({
        assetItems: get().assetItems.filter((item) => !gone.has(item.id)),
        assetSelection: [],
        assetDetail: gone.has(get().assetDetail?.id ?? '') ? null : get().assetDetail,
      })
      void get().loadAssetFolders()
      offerUndo(
        get,
        api()?.assets.undoDelete,
        held,
        held.count === 1 ? '1 asset' : `${held.count} assets`,
      )
    },

    connectAssets: () => {
      const calls = api()
      void get().loadAssets()
      void get().loadAssetFolders()
      const offUploads = get().connectUploads()
      if (!calls) return offUploads
      const reload = () => {
        void get().loadAssets()
        void get().loadAssetFolders()
        const open = get().assetDetail
        if (open) void get().openAsset(open.id)
      }
      const offChanged = calls.on('assets.changed', reload)
      let syncing = false
      const offSync = calls.on('sync.status', (status) => {
        // A sync that just ended may have brought assets or folders.
        if (syncing && status.state !== 'syncing') reload()
        syncing = status.state === 'syncing'
      })
      return () => {
        offUploads()
        offChanged()
        offSync()
      }
    },
  }
}

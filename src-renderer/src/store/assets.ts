import type { StateCreator } from 'zustand'
import type { MediaType } from '../../../src-shared/api'
import {
  UPLOAD_FILES_MAX,
  type AssetDetail,
  type AssetFolderTree,
  type AssetItem,
  type HeldDelete,
  type UploadFileRow,
  type UploadSummary,
  type WatchedFolder,
} from '../../../src-shared/domain/assets'
import type { AtelierApi } from '../../../src-shared/ipc/api'
import type { IpcError, IpcResult } from '../../../src-shared/ipc/result'
import { explainError } from '../shell/errorWords'
import type { AppState } from './index'

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
  uploads: UploadSummary[]
  /** Each upload's file rows, by upload id, as `uploads.files` and the events tell them. */
  uploadFiles: Record<string, UploadFileRow[]>
  watchedFolders: WatchedFolder[]
  uploadsOpen: boolean
  folderPickerOpen: boolean

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
  setUploadsOpen: (open: boolean) => void
  setFolderPickerOpen: (open: boolean) => void
  /** Opens the system dialog in the desktop app, the browsing dialog in the browser. */
  chooseUploadFolder: () => Promise<void>
  /** Uploads a folder, or with `files` only those files of it (names inside it). */
  startUpload: (
    path: string,
    options?: { watch?: boolean; folder?: string | null; files?: string[] },
  ) => Promise<boolean>
  /** Uploads what was dropped from the desktop: each folder, and the files by their folder. */
  uploadDropped: (dropped: {
    folders: string[]
    files: { folder: string; names: string[] }[]
  }) => Promise<void>
  uploadAction: (id: string, action: 'pause' | 'resume' | 'cancel' | 'dismiss') => Promise<void>
  loadUploads: () => Promise<void>
  loadUploadFiles: (id: string) => Promise<void>
  unwatchFolder: (id: string) => Promise<void>
  /** Listens to uploads and asset changes, reads the first list; returns the unsubscribe. */
  connectAssets: () => () => void
}

function api(): AtelierApi | null {
  return window.atelier ?? null
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

const unreachable: IpcError = {
  code: 'UNAVAILABLE',
  message: 'This page is not connected to Atelier.',
}

export const createAssetsSlice: StateCreator<AppState, [], [], AssetsSlice> = (set, get) => {
  /** Each list read counts; an answer to an older one is dropped. */
  let listGeneration = 0

  const fail = (error: IpcError) => {
    const plain = explainError(error)
    get().pushToast({ tone: 'error', title: plain.title, message: plain.detail })
  }

  /** Runs a call and tells its failure as a toast; answers the value or null. */
  const attempt = async <T>(call: Promise<IpcResult<T>>): Promise<T | null> => {
    const result = await call
    if (result.ok) return result.value
    fail(result.error)
    return null
  }

  /** The same for a call that answers nothing: whether it went through. */
  const succeeded = async (call: Promise<IpcResult<unknown>>): Promise<boolean> => {
    const result = await call
    if (!result.ok) fail(result.error)
    return result.ok
  }

  const undoToast = (held: HeldDelete, what: string) => {
    const undo = api()?.assets.undoDelete
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
            if (!result.ok) fail(result.error)
            void get().loadAssets()
            void get().loadAssetFolders()
          })
        },
      },
    })
  }

  const mergeUpload = (upload: UploadSummary, files: UploadFileRow[]) => {
    const uploads = get().uploads
    const known = uploads.some((u) => u.id === upload.id)
    const next = known
      ? uploads.map((u) => (u.id === upload.id ? upload : u))
      : [upload, ...uploads]
    const rows = get().uploadFiles[upload.id]
    if (files.length === 0 || !rows) {
      set({ uploads: next })
      return
    }
    const bySeq = new Map(rows.map((row) => [row.seq, row]))
    for (const file of files) bySeq.set(file.seq, file)
    set({
      uploads: next,
      uploadFiles: {
        ...get().uploadFiles,
        [upload.id]: [...bySeq.values()].sort((a, b) => a.seq - b.seq),
      },
    })
  }

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
    uploads: [],
    uploadFiles: {},
    watchedFolders: [],
    uploadsOpen: false,
    folderPickerOpen: false,

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
      const { assetSelection, assetAnchor, assetItems } = get()
      if (mode === 'only') {
        set({ assetSelection: [id], assetAnchor: id })
        void get().openAsset(id)
        return
      }
      if (mode === 'toggle') {
        const has = assetSelection.includes(id)
        set({
          assetSelection: has ? assetSelection.filter((s) => s !== id) : [...assetSelection, id],
          assetAnchor: id,
        })
        return
      }
      const ids = assetItems.map((item) => item.id)
      const from = ids.indexOf(assetAnchor ?? id)
      const to = ids.indexOf(id)
      if (from < 0 || to < 0) {
        set({ assetSelection: [id], assetAnchor: id })
        return
      }
      const [low, high] = from < to ? [from, to] : [to, from]
      set({ assetSelection: ids.slice(low, high + 1) })
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
      undoToast(held, `"${name}"`)
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
      undoToast(held, held.count === 1 ? '1 asset' : `${held.count} assets`)
    },

    setUploadsOpen: (open) => {
      set({ uploadsOpen: open })
    },

    setFolderPickerOpen: (open) => {
      set({ folderPickerOpen: open })
    },

    chooseUploadFolder: async () => {
      const calls = api()
      if (!calls) return
      if (get().appInfo?.shell !== 'electron') {
        set({ folderPickerOpen: true })
        return
      }
      const chosen = await calls.uploads.chooseFolder()
      if (!chosen.ok) {
        // No native dialog after all: browse instead.
        set({ folderPickerOpen: true })
        return
      }
      if (chosen.value.path !== null) await get().startUpload(chosen.value.path)
    },

    startUpload: async (path, options = {}) => {
      const calls = api()
      if (!calls) return false
      const started = await attempt(
        calls.uploads.start({
          path,
          ...(options.files === undefined ? {} : { files: options.files }),
          watch: options.watch ?? false,
          ...(options.folder === undefined ? {} : { folder: options.folder }),
        }),
      )
      if (!started) return false
      mergeUpload(started, [])
      set({ uploadsOpen: true, uploadFiles: { ...get().uploadFiles, [started.id]: [] } })
      if (options.watch) void get().loadUploads()
      return true
    },

    uploadDropped: async ({ folders, files }) => {
      // One upload per dropped folder, and one per folder the dropped files come from (per
      // UPLOAD_FILES_MAX of them); each tells its own failure.
      const batches = files.flatMap(({ folder, names }) =>
        Array.from({ length: Math.ceil(names.length / UPLOAD_FILES_MAX) }, (_, i) => ({
          folder,
          names: names.slice(i * UPLOAD_FILES_MAX, (i + 1) * UPLOAD_FILES_MAX),
        })),
      )
      await Promise.all([
        ...folders.map((path) => get().startUpload(path)),
        ...batches.map(({ folder, names }) => get().startUpload(folder, { files: names })),
      ])
    },

    uploadAction: async (id, action) => {
      const calls = api()
      if (!calls) return
      if (action === 'dismiss') {
        if (await succeeded(calls.uploads.dismiss({ id }))) {
          set({ uploads: get().uploads.filter((u) => u.id !== id) })
        }
        return
      }
      const call =
        action === 'pause'
          ? calls.uploads.pause({ id })
          : action === 'resume'
            ? calls.uploads.resume({ id })
            : calls.uploads.cancel({ id })
      const summary = await attempt(call)
      if (summary) mergeUpload(summary, [])
    },

    loadUploads: async () => {
      const calls = api()
      if (!calls) return
      const [uploads, watches] = await Promise.all([calls.uploads.list(), calls.uploads.watches()])
      if (uploads.ok) set({ uploads: uploads.value })
      if (watches.ok) set({ watchedFolders: watches.value })
    },

    loadUploadFiles: async (id) => {
      const calls = api()
      if (!calls) return
      const rows = await calls.uploads.files({ id })
      if (rows.ok) set({ uploadFiles: { ...get().uploadFiles, [id]: rows.value } })
    },

    unwatchFolder: async (id) => {
      const calls = api()
      if (!calls) return
      if (await succeeded(calls.uploads.unwatch({ id }))) {
        set({ watchedFolders: get().watchedFolders.filter((w) => w.id !== id) })
      }
    },

    connectAssets: () => {
      const calls = api()
      void get().loadAssets()
      void get().loadAssetFolders()
      void get().loadUploads()
      if (!calls) return () => undefined
      const offProgress = calls.on('uploads.progress', ({ upload, files }) => {
        mergeUpload(upload, files)
        if (upload.watched) void get().loadUploads()
      })
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
        offProgress()
        offChanged()
        offSync()
      }
    },
  }
}

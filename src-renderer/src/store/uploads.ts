import {
  UPLOAD_FILES_MAX,
  type UploadFileRow,
  type UploadSummary,
  type WatchedFolder,
} from '../../../src-shared/domain/assets'
import type { SliceWithApi } from './api'
import { toastedCalls } from './toastedCalls'

/**
 * Uploads of folders and files, and the watched folders: a watched folder is an upload that goes
 * on, so both are read together and a watched upload's progress reads them again.
 */
export interface UploadsSlice {
  uploads: UploadSummary[]
  /** Each upload's file rows, by upload id, as `uploads.files` and the events tell them. */
  uploadFiles: Record<string, UploadFileRow[]>
  watchedFolders: WatchedFolder[]
  uploadsOpen: boolean
  folderPickerOpen: boolean

  setUploadsOpen: (open: boolean) => void
  setFolderPickerOpen: (open: boolean) => void
  /** Opens the system dialog in the desktop app, the browsing dialog in the browser. */
  chooseUploadFolder: () => Promise<void>
  /**
   * Uploads a folder, or with `files` only those files of it (names inside it), into `into` (an
   * asset folder id; null: the top level), the folder selected in the tree when left out.
   */
  startUpload: (
    path: string,
    options?: { watch?: boolean; folder?: string | null; files?: string[]; into?: string | null },
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
  /** Listens to the uploads' progress, reads the first list; returns the unsubscribe. */
  connectUploads: () => () => void
}

/**
 * The asset folder selected in the tree, where an upload goes: null when the tree shows every
 * asset or the top level.
 */
export function selectedAssetFolder(state: {
  assetFilters: { folder: string | null }
}): string | null {
  const folder = state.assetFilters.folder
  return folder === null || folder === 'root' ? null : folder
}

export const createUploadsSlice: SliceWithApi<UploadsSlice> = (api) => (set, get) => {
  const { attempt, succeeded } = toastedCalls(get)

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
    uploads: [],
    uploadFiles: {},
    watchedFolders: [],
    uploadsOpen: false,
    folderPickerOpen: false,

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
      // A watch does not remember a place: its folder stays at the top level.
      const into = options.watch
        ? null
        : options.into === undefined
          ? selectedAssetFolder(get())
          : options.into
      const started = await attempt(
        calls.uploads.start({
          path,
          ...(options.files === undefined ? {} : { files: options.files }),
          watch: options.watch ?? false,
          ...(options.folder === undefined ? {} : { folder: options.folder }),
          ...(into === null ? {} : { into }),
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

    connectUploads: () => {
      const calls = api()
      void get().loadUploads()
      if (!calls) return () => undefined
      return calls.on('uploads.progress', ({ upload, files }) => {
        mergeUpload(upload, files)
        if (upload.watched) void get().loadUploads()
      })
    },
  }
}

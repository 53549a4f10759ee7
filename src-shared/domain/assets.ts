import { z } from 'zod'
import type { AssetStatusCode, MediaType, RunStatusCode } from '../api'
import { MEDIA_TYPES, SEARCH_TEXT_MAX } from './search'

/**
 * The asset manager and its uploads, as both ends of the IPC boundary see them: what may be
 * asked (the zod schemas, checked before a handler runs) and what comes back. Runtime-free
 * apart from zod.
 */

export const ASSET_PAGE_MAX = 200
export const ASSET_PAGE_DEFAULT = 100

/** Service ids; loose on purpose: the mirror holds whatever the service gave. */
const id = z.string().trim().min(1).max(128)
const name = z
  .string()
  .trim()
  .min(1, 'A name cannot be empty.')
  .max(255, 'A name is at most 255 characters.')
  .refine((value) => !value.includes('/'), 'A folder name cannot contain "/".')
/** An asset's new name; spaces around it are dropped, as the service refuses them. */
const assetName = z
  .string()
  .trim()
  .min(1, 'A name cannot be empty.')
  .max(255, 'A name is at most 255 characters.')
  .refine((value) => !/\p{Cc}/u.test(value), 'A name cannot contain control characters.')
/** Epoch milliseconds. */
const time = z.number().int().min(0)
const bytes = z.number().int().min(0)

export const assetSchemas = {
  list: z
    .strictObject({
      /** Words of the name or of its folder's path, through the offline search. */
      text: z.string().max(SEARCH_TEXT_MAX).default(''),
      /** A folder's id, or 'root' for the assets outside every folder; left out: all of them. */
      folder: id.optional(),
      mediaType: z.enum(MEDIA_TYPES).optional(),
      /** Added at or after. */
      from: time.optional(),
      /** Added before. */
      to: time.optional(),
      minBytes: bytes.optional(),
      /** Smaller than this many bytes. */
      maxBytes: bytes.optional(),
      limit: z.number().int().min(1).max(ASSET_PAGE_MAX).default(ASSET_PAGE_DEFAULT),
      /** The `next` of the previous page of the same list. */
      cursor: z.string().min(1).max(4096).nullish(),
    })
    .refine((q) => q.from === undefined || q.to === undefined || q.from < q.to, {
      path: ['to'],
      message: 'must be after from',
    }),
  id: z.strictObject({ id }),
  ids: z.strictObject({ ids: z.array(id).min(1).max(10_000) }),
  createFolder: z.strictObject({ name, parentId: id.nullable().default(null) }),
  renameFolder: z.strictObject({ id, name }),
  moveFolder: z.strictObject({ id, parentId: id.nullable() }),
  move: z.strictObject({ ids: z.array(id).min(1).max(10_000), folderId: id.nullable() }),
  rename: z.strictObject({ id, name: assetName }),
  undo: z.strictObject({ undoId: id }),
}

/** The most files one `uploads.start` may name (a drop of a whole selection fits). */
export const UPLOAD_FILES_MAX = 10_000

/**
 * A file inside the upload's folder, '/'-separated, as the scan lists it: never absolute, never
 * an empty, '.' or '..' segment, so it cannot name anything outside the folder (the engine
 * checks that again on the resolved path).
 */
const relativeFile = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (value) =>
      !value.includes('\0') &&
      value.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'),
    'A file is named by its path inside the folder, such as "photo.png" or "day1/photo.png".',
  )

export const uploadSchemas = {
  start: z
    .strictObject({
      /** An absolute path of a folder on this machine. */
      path: z.string().trim().min(1).max(4096),
      /**
       * Only these files of the folder (paths inside it), not the whole folder: how files dropped
       * on the window are uploaded, one call per folder they come from. Left out: the whole folder.
       */
      files: z.array(relativeFile).min(1).max(UPLOAD_FILES_MAX).optional(),
      /**
       * The top-level asset folder that receives the tree (made when missing); the folder's own
       * name by default, null for the top level itself. With `files` the default is the top
       * level: the files were picked, not their folder.
       */
      folder: name.nullable().optional(),
      /**
       * The asset folder (an id) the upload goes inside: the folder selected in the tree. Left
       * out or null: the top level.
       */
      into: id.nullable().optional(),
      concurrency: z.number().int().min(1).max(16).optional(),
      /** Keep watching the folder and upload what appears in it. */
      watch: z.boolean().default(false),
    })
    .refine((args) => !(args.watch && args.files), {
      path: ['watch'],
      message: 'A watch is of a whole folder: leave out files, or watch the folder.',
    }),
  id: z.strictObject({ id }),
  files: z.strictObject({ id, limit: z.number().int().min(1).max(100_000).default(10_000) }),
  /** Left out: the home folder. */
  browse: z.strictObject({ path: z.string().trim().min(1).max(4096).optional() }),
  watch: z.strictObject({
    path: z.string().trim().min(1).max(4096),
    folder: name.nullable().optional(),
  }),
}

/** What the asset manager takes: each channel's arguments, as its schema makes them. */
export type AssetListQuery = z.output<typeof assetSchemas.list>
export type AssetRef = z.output<typeof assetSchemas.id>
export type AssetIds = z.output<typeof assetSchemas.ids>
export type FolderCreate = z.output<typeof assetSchemas.createFolder>
export type FolderRename = z.output<typeof assetSchemas.renameFolder>
export type FolderMove = z.output<typeof assetSchemas.moveFolder>
export type AssetMove = z.output<typeof assetSchemas.move>
export type AssetRename = z.output<typeof assetSchemas.rename>
export type DeleteUndo = z.output<typeof assetSchemas.undo>
export type UploadStart = z.output<typeof uploadSchemas.start>
export type UploadRef = z.output<typeof uploadSchemas.id>
export type UploadFilesQuery = z.output<typeof uploadSchemas.files>
export type FolderBrowse = z.output<typeof uploadSchemas.browse>
export type FolderWatch = z.output<typeof uploadSchemas.watch>

/** An asset as the grid and the list show it. */
export interface AssetItem {
  id: string
  name: string
  /** Null at the top level. */
  folderId: string | null
  mediaType: MediaType
  contentType: string
  sizeBytes: number
  sha256: string
  width: number | null
  height: number | null
  durationMs: number | null
  status: AssetStatusCode
  /** ISO 8601. */
  createdAt: string
  /** Where the bytes can be fetched when this machine lacks them; null once it expired. */
  url: string | null
  /**
   * A rename made here that the service has not taken yet: `name` already shows it while it
   * waits; refused, `name` is the service's again and `message` says why. Absent when none.
   */
  pendingRename?: PendingRename
}

export interface PendingRename {
  state: 'waiting' | 'refused'
  /** The name asked for. */
  name: string
  /** Why the last attempt did not go through; null before any attempt. */
  message: string | null
}

export interface AssetPage {
  items: AssetItem[]
  next: string | null
}

/** A run of the mirror whose inputs name the asset. */
export interface AssetUse {
  runId: string
  createdAt: string
  status: RunStatusCode
  model: string | null
  /** The prompt when it has one. */
  title: string
}

export interface AssetDetail extends AssetItem {
  /** `/a/b`; null at the top level. */
  folderPath: string | null
  updatedAt: string
  metadata: Record<string, unknown>
  /** The newest runs that used it as an input, from the mirror. */
  usedBy: AssetUse[]
  /** More runs used it than are listed. */
  usedByMore: boolean
}

export interface AssetFolderItem {
  id: string
  parentId: string | null
  name: string
  path: string
  /** Assets directly in it (not in its sub-folders). */
  assetCount: number
}

export interface AssetFolderTree {
  /** Sorted by path, so parents come before their children. */
  folders: AssetFolderItem[]
  /** Assets outside every folder. */
  rootCount: number
  /** Every asset of the organization in the mirror. */
  total: number
}

/** A delete held back so that it can be undone; sent when `sendsAt` comes. */
export interface HeldDelete {
  undoId: string
  count: number
  /** Epoch milliseconds. */
  sendsAt: number
}

/** Where a whole upload stands, in the words the uploads panel uses. */
export type UploadState =
  | 'scanning'
  | 'folders'
  | 'uploading'
  | 'paused'
  | 'finished'
  | 'failed'
  | 'canceled'
  /** Left unfinished by an earlier session: resume goes on where it stopped. */
  | 'interrupted'

export type UploadFileState =
  'queued' | 'hashing' | 'uploading' | 'confirming' | 'done' | 'duplicate' | 'failed'

export interface UploadFailure {
  relativePath: string
  code: string
  message: string
}

export interface UploadSummary {
  id: string
  /** The local folder. */
  root: string
  /** The top-level asset folder it goes into; null: the top level itself. */
  folderName: string | null
  state: UploadState
  /** Started by a watch folder. */
  watched: boolean
  /** Epoch milliseconds. */
  startedAt: number
  finishedAt: number | null
  files: { total: number; done: number; duplicates: number; failed: number }
  bytes: { total: number; done: number }
  /** Bytes per second. */
  rate: number
  etaSeconds: number | null
  /** The first failures with their reasons (at most `FAILURES_SHOWN`). */
  failures: UploadFailure[]
  /** Files the scan left out (hidden, system, not media…) and files it could not read. */
  skipped: number
  unreadable: number
  /** What was left out, named with the reason (the first `LEFT_OUT_SHOWN`), once scanned. */
  leftOut?: { relativePath: string; reason: LeftOutReason }[]
  /** Why the whole upload stopped, when it did not even start (a folder that is gone). */
  error: { code: string; message: string } | null
  /**
   * Present when the upload is of some files of `root` only (files dropped on the window): how
   * many were named, and the first one's path inside `root`, for the panel to name the upload.
   */
  named?: { count: number; first: string }
}

export const FAILURES_SHOWN = 50
export const LEFT_OUT_SHOWN = 200

/** Why the scan left a file or folder out of an upload. */
export type LeftOutReason =
  'system' | 'hidden' | 'symlink' | 'specialFile' | 'excluded' | 'notIncluded' | 'notMedia'

export interface UploadFileRow {
  seq: number
  relativePath: string
  sizeBytes: number
  state: UploadFileState
  bytesDone: number
  error: { code: string; message: string } | null
}

/** Pushed as an upload moves: at most ten times a second per upload. */
export interface UploadProgressEvent {
  upload: UploadSummary
  /** The files whose state changed since the previous event of this upload. */
  files: UploadFileRow[]
}

export interface WatchedFolder {
  id: string
  path: string
  folderName: string | null
  state: 'watching' | 'uploading' | 'stopped' | 'failed'
  /** The upload of its latest pass, in `uploads.list`. */
  uploadId: string | null
  lastPassAt: number | null
  error: { code: string; message: string } | null
}

export interface FolderEntry {
  name: string
  path: string
}

/** One folder of this machine, for the "Choose folder…" dialog of the browser mode. */
export interface FolderListing {
  path: string
  /** Null at the top of the file system. */
  parent: string | null
  home: string
  /** Sub-folders only, by name; hidden ones left out. */
  folders: FolderEntry[]
}

/**
 * The local media store: outputs, assets and thumbnails kept under `--home` by their sha256, with
 * a size cap, least-recently-used eviction that spares what the ledger pins, and thumbnails made
 * with sharp. Refs record which run output or asset each file is, so the app finds a run's
 * pixels by its id offline, and the pin hook can ask what a file belongs to.
 */
export {
  MediaStore,
  type DownloadOptions,
  type EvictionReport,
  type MediaEntry,
  type MediaStoreOptions,
  type MediaUsage,
  type RecoveryReport,
  type StoredMedia,
  type WriteOptions,
} from './store'
export type { MediaKind } from './index-db'
export type {
  FetchOutcome,
  FetchRecord,
  FetchState,
  MediaOwner,
  MediaOwnerKind,
  MediaRef,
  NewMediaRef,
} from './refs'
export {
  isMediaStoreError,
  MediaStoreError,
  type MediaStoreErrorCode,
  type MediaStoreErrorDetails,
  redactUrl,
} from './errors'
export { DEFAULT_THUMBNAIL_SIZE } from './thumbnails'
export { MAX_PREVIEW_SIZE, previewOf, type Preview, type PreviewRequest } from './preview'

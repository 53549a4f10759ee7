/**
 * The local media store: outputs, assets and thumbnails kept under `--home` by their sha256, with
 * a size cap, least-recently-used eviction that spares what the ledger pins, and thumbnails made
 * with sharp.
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
export {
  isMediaStoreError,
  MediaStoreError,
  type MediaStoreErrorCode,
  type MediaStoreErrorDetails,
} from './errors'
export { DEFAULT_THUMBNAIL_SIZE } from './thumbnails'

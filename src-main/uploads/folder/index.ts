export {
  DEFAULT_FILE_CONCURRENCY,
  DEFAULT_PARTS_IN_FLIGHT,
  defaultTarget,
  startFolderUpload,
  type FolderUpload,
  type FolderUploadOptions,
  type FolderUploadSummary,
  type UploadFailure,
} from './upload'
export { watchFolder, type FolderWatch, type FolderWatchOptions } from './watch'
export type { FileProgress, FileState, UploadPhase, UploadProgress } from './progress'
export { AssetFolders } from './folders'

import type {
  AssetDetail,
  AssetFolderItem,
  AssetFolderTree,
  AssetIds,
  AssetItem,
  AssetListQuery,
  AssetMove,
  AssetPage,
  AssetRef,
  AssetRename,
  DeleteUndo,
  FolderBrowse,
  FolderCreate,
  FolderListing,
  FolderMove,
  FolderRename,
  FolderWatch,
  HeldDelete,
  UploadFileRow,
  UploadFilesQuery,
  UploadRef,
  UploadStart,
  UploadSummary,
  WatchedFolder,
} from '../../../src-shared/domain/assets'

type Awaitable<T> = T | Promise<T>

/**
 * The Assets section's services: one method per channel, taking the domain's requests. A
 * refusal is an `AssetsError` (a coded error), which reaches the window as its code and message.
 */
export interface AssetManager {
  list(query: AssetListQuery): Awaitable<AssetPage>
  get(request: AssetRef): Awaitable<AssetDetail>
  folders(): Awaitable<AssetFolderTree>
  createFolder(request: FolderCreate): Awaitable<AssetFolderItem>
  renameFolder(request: FolderRename): Awaitable<AssetFolderItem>
  moveFolder(request: FolderMove): Awaitable<AssetFolderItem>
  deleteFolder(request: AssetRef): Awaitable<HeldDelete>
  move(request: AssetMove): Awaitable<AssetItem[]>
  delete(request: AssetIds): Awaitable<HeldDelete>
  undoDelete(request: DeleteUndo): Awaitable<null>
  /** Through the outbox: the answer already shows the new name, pending until it is sent. */
  rename(request: AssetRename): Awaitable<AssetDetail>
  startUpload(request: UploadStart): Awaitable<UploadSummary>
  pauseUpload(request: UploadRef): Awaitable<UploadSummary>
  resumeUpload(request: UploadRef): Awaitable<UploadSummary>
  cancelUpload(request: UploadRef): Awaitable<UploadSummary>
  uploads(): Awaitable<UploadSummary[]>
  uploadFiles(request: UploadFilesQuery): Awaitable<UploadFileRow[]>
  dismissUpload(request: UploadRef): Awaitable<null>
  browse(request: FolderBrowse): Awaitable<FolderListing>
  watches(): Awaitable<WatchedFolder[]>
  watch(request: FolderWatch): Awaitable<WatchedFolder>
  unwatch(request: UploadRef): Awaitable<null>
  /** Sends the held deletes, cancels the uploads, stops the watches. */
  close(): Promise<void>
}

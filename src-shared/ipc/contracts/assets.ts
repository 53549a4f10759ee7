import { z } from 'zod'
import {
  assetSchemas as assets,
  uploadSchemas as uploads,
  type AssetDetail,
  type AssetFolderItem,
  type AssetFolderTree,
  type AssetItem,
  type AssetPage,
  type FolderListing,
  type HeldDelete,
  type UploadFileRow,
  type UploadSummary,
  type WatchedFolder,
} from '../../domain/assets'
import { channel } from '../channel'

const noArgs = z.undefined()

/**
 * The asset manager's channels (reads from the mirror, changes through the service) and the
 * uploads it starts, spread into `ipcContract`.
 */
export const assetsContract = {
  /** A page of the mirror's assets, newest first; with words, ranked by the offline search. */
  'assets.list': channel<AssetPage>()(assets.list),
  /** One asset with where it was used as an input (runs of the mirror). NOT_FOUND when gone. */
  'assets.get': channel<AssetDetail>()(assets.id),
  /** Every folder with its count of assets, by path. */
  'assets.folders': channel<AssetFolderTree>()(noArgs),
  'assets.createFolder': channel<AssetFolderItem>()(assets.createFolder),
  'assets.renameFolder': channel<AssetFolderItem>()(assets.renameFolder),
  /** parentId null: to the top level. */
  'assets.moveFolder': channel<AssetFolderItem>()(assets.moveFolder),
  /** An empty folder only (FOLDER_NOT_EMPTY otherwise); held back a few seconds for undo. */
  'assets.deleteFolder': channel<HeldDelete>()(assets.id),
  /** folderId null: to the top level. */
  'assets.move': channel<AssetItem[]>()(assets.move),
  /** Hidden at once, sent a few seconds later unless `assets.undoDelete` comes first. */
  'assets.delete': channel<HeldDelete>()(assets.ids),
  'assets.undoDelete': channel<null>()(assets.undo),
  /**
   * Kept in the outbox and sent at once when online: the answer shows the new name either way,
   * marked `pendingRename` until the service has it (offline, after the next sync).
   */
  'assets.rename': channel<AssetDetail>()(assets.rename),
  /** Uploads a local folder; its progress follows as `uploads.progress`. */
  'uploads.start': channel<UploadSummary>()(uploads.start),
  'uploads.pause': channel<UploadSummary>()(uploads.id),
  /** Goes on with a paused upload, or one an earlier session left unfinished. */
  'uploads.resume': channel<UploadSummary>()(uploads.id),
  'uploads.cancel': channel<UploadSummary>()(uploads.id),
  /** The uploads of this session, newest first, and the unfinished ones of earlier sessions. */
  'uploads.list': channel<UploadSummary[]>()(noArgs),
  /** Where each file of an upload of this session stands. */
  'uploads.files': channel<UploadFileRow[]>()(uploads.files),
  /** Forgets a finished, failed or canceled upload from the list. */
  'uploads.dismiss': channel<null>()(uploads.id),
  /** The folder picker of the browser mode: the sub-folders of a folder of this machine. */
  'uploads.browse': channel<FolderListing>()(uploads.browse),
  /** The system's folder dialog (the desktop app only); null when it was closed. */
  'uploads.chooseFolder': channel<{ path: string | null }>()(noArgs),
  'uploads.watches': channel<WatchedFolder[]>()(noArgs),
  /** Uploads the folder, then whatever appears or changes in it, until `uploads.unwatch`. */
  'uploads.watch': channel<WatchedFolder>()(uploads.watch),
  'uploads.unwatch': channel<null>()(uploads.id),
} as const

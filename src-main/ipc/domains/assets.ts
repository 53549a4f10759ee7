import type {
  AssetDetail,
  AssetFolderItem,
  AssetFolderTree,
  AssetItem,
  AssetPage,
  FolderListing,
  HeldDelete,
  UploadFileRow,
  UploadSummary,
  WatchedFolder,
} from '../../../src-shared/domain/assets'
import type { IpcParsedArgs } from '../../../src-shared/ipc'
import type { ASSETS_CHANNELS } from '../../../src-shared/ipc/channels/assets'
import { isAssetsError } from '../../review/assets/errors'
import { coreOf, type Awaitable, type HandlerDeps } from '../core-access'
import { IpcHandlerError, type IpcHandlers } from '../dispatch'

/** What the assets and uploads channels call on the core (`src-main/review/assets`). */
export interface AssetsControl {
  list(args: IpcParsedArgs<'assets.list'>): Awaitable<AssetPage>
  get(args: IpcParsedArgs<'assets.get'>): Awaitable<AssetDetail>
  folders(): Awaitable<AssetFolderTree>
  createFolder(args: IpcParsedArgs<'assets.createFolder'>): Awaitable<AssetFolderItem>
  renameFolder(args: IpcParsedArgs<'assets.renameFolder'>): Awaitable<AssetFolderItem>
  moveFolder(args: IpcParsedArgs<'assets.moveFolder'>): Awaitable<AssetFolderItem>
  deleteFolder(args: IpcParsedArgs<'assets.deleteFolder'>): Awaitable<HeldDelete>
  move(args: IpcParsedArgs<'assets.move'>): Awaitable<AssetItem[]>
  delete(args: IpcParsedArgs<'assets.delete'>): Awaitable<HeldDelete>
  undoDelete(args: IpcParsedArgs<'assets.undoDelete'>): Awaitable<null>
  startUpload(args: IpcParsedArgs<'uploads.start'>): Awaitable<UploadSummary>
  pauseUpload(args: IpcParsedArgs<'uploads.pause'>): Awaitable<UploadSummary>
  resumeUpload(args: IpcParsedArgs<'uploads.resume'>): Awaitable<UploadSummary>
  cancelUpload(args: IpcParsedArgs<'uploads.cancel'>): Awaitable<UploadSummary>
  uploads(): Awaitable<UploadSummary[]>
  uploadFiles(args: IpcParsedArgs<'uploads.files'>): Awaitable<UploadFileRow[]>
  dismissUpload(args: IpcParsedArgs<'uploads.dismiss'>): Awaitable<null>
  browse(args: IpcParsedArgs<'uploads.browse'>): Awaitable<FolderListing>
  watches(): Awaitable<WatchedFolder[]>
  watch(args: IpcParsedArgs<'uploads.watch'>): Awaitable<WatchedFolder>
  unwatch(args: IpcParsedArgs<'uploads.unwatch'>): Awaitable<null>
}

/** Calls the asset manager, turning its refusals into the channel's error. */
async function manager<T>(deps: HandlerDeps, call: (assets: AssetsControl) => Awaitable<T>) {
  const assets = coreOf(deps).assets
  if (!assets) {
    throw new IpcHandlerError('UNAVAILABLE', 'The asset manager is not available in this window.')
  }
  try {
    return await call(assets)
  } catch (error) {
    if (isAssetsError(error)) throw new IpcHandlerError(error.code, error.message)
    throw error
  }
}

export function assetsHandlers(
  deps: HandlerDeps,
): Pick<IpcHandlers, (typeof ASSETS_CHANNELS)[number]> {
  return {
    'assets.list': (args) => manager(deps, (a) => a.list(args)),
    'assets.get': (args) => manager(deps, (a) => a.get(args)),
    'assets.folders': () => manager(deps, (a) => a.folders()),
    'assets.createFolder': (args) => manager(deps, (a) => a.createFolder(args)),
    'assets.renameFolder': (args) => manager(deps, (a) => a.renameFolder(args)),
    'assets.moveFolder': (args) => manager(deps, (a) => a.moveFolder(args)),
    'assets.deleteFolder': (args) => manager(deps, (a) => a.deleteFolder(args)),
    'assets.move': (args) => manager(deps, (a) => a.move(args)),
    'assets.delete': (args) => manager(deps, (a) => a.delete(args)),
    'assets.undoDelete': (args) => manager(deps, (a) => a.undoDelete(args)),
    'uploads.start': (args) => manager(deps, (a) => a.startUpload(args)),
    'uploads.pause': (args) => manager(deps, (a) => a.pauseUpload(args)),
    'uploads.resume': (args) => manager(deps, (a) => a.resumeUpload(args)),
    'uploads.cancel': (args) => manager(deps, (a) => a.cancelUpload(args)),
    'uploads.list': () => manager(deps, (a) => a.uploads()),
    'uploads.files': (args) => manager(deps, (a) => a.uploadFiles(args)),
    'uploads.dismiss': (args) => manager(deps, (a) => a.dismissUpload(args)),
    'uploads.browse': (args) => manager(deps, (a) => a.browse(args)),
    'uploads.chooseFolder': async () => {
      if (!deps.chooseFolder) {
        throw new IpcHandlerError(
          'UNAVAILABLE',
          'This window has no system folder dialog: browse to the folder, or type its path.',
        )
      }
      return { path: await deps.chooseFolder() }
    },
    'uploads.watches': () => manager(deps, (a) => a.watches()),
    'uploads.watch': (args) => manager(deps, (a) => a.watch(args)),
    'uploads.unwatch': (args) => manager(deps, (a) => a.unwatch(args)),
  }
}

import type { ASSETS_CHANNELS } from '../../../src-shared/ipc/channels/assets'
import type { FeatureAccess } from '../feature-access'
import { IpcHandlerError, type IpcHandlers } from '../dispatch'

/** The Assets section and its uploads (`src-main/review/assets`), and the folder dialog. */
export function assetsHandlers(
  { core }: FeatureAccess,
  /** The system's folder dialog (Electron only); null when it was closed without a choice. */
  chooseFolder: (() => Promise<string | null>) | undefined,
): Pick<IpcHandlers, (typeof ASSETS_CHANNELS)[number]> {
  return {
    'assets.list': (query) => core().assets.list(query),
    'assets.get': (request) => core().assets.get(request),
    'assets.folders': () => core().assets.folders(),
    'assets.createFolder': (request) => core().assets.createFolder(request),
    'assets.renameFolder': (request) => core().assets.renameFolder(request),
    'assets.moveFolder': (request) => core().assets.moveFolder(request),
    'assets.deleteFolder': (request) => core().assets.deleteFolder(request),
    'assets.move': (request) => core().assets.move(request),
    'assets.delete': (request) => core().assets.delete(request),
    'assets.undoDelete': (request) => core().assets.undoDelete(request),
    'assets.rename': (request) => core().assets.rename(request),
    'uploads.start': (request) => core().assets.startUpload(request),
    'uploads.pause': (request) => core().assets.pauseUpload(request),
    'uploads.resume': (request) => core().assets.resumeUpload(request),
    'uploads.cancel': (request) => core().assets.cancelUpload(request),
    'uploads.list': () => core().assets.uploads(),
    'uploads.files': (request) => core().assets.uploadFiles(request),
    'uploads.dismiss': (request) => core().assets.dismissUpload(request),
    'uploads.browse': (request) => core().assets.browse(request),
    'uploads.chooseFolder': async () => {
      if (!chooseFolder) {
        throw new IpcHandlerError(
          'UNAVAILABLE',
          'This window has no system folder dialog: browse to the folder, or type its path.',
        )
      }
      return { path: await chooseFolder() }
    },
    'uploads.watches': () => core().assets.watches(),
    'uploads.watch': (request) => core().assets.watch(request),
    'uploads.unwatch': (request) => core().assets.unwatch(request),
  }
}

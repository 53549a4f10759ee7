import type { IpcEvents } from '../../../src-shared/ipc'
import type { Databases } from '../../db'
import type { Logger } from '../../log'
import type { ServiceClient } from '../../service'
import { browseFolders } from './browse'
import { AssetChanges } from './changes'
import { AssetLibrary } from './library'
import { AssetRenames } from './renames'
import type { AssetManager } from './types'
import { UploadManager } from './upload-jobs'

export interface AssetManagerOptions {
  client: ServiceClient
  databases: Databases
  profile: string
  orgId: string
  /** Where the watched folders are kept. */
  home: string
  logger: Logger
  clock?: () => number
  /** Pushes `uploads.progress`, `assets.changed` and the notices of refused deletes. */
  emit: <E extends 'uploads.progress' | 'assets.changed' | 'app.notice'>(
    event: E,
    payload: IpcEvents[E],
  ) => void
  /** A sync, after an upload: the new assets and folders reach the mirror through it. */
  syncNow: () => Promise<unknown>
  /** How long a delete waits for an undo (tests shorten it). */
  undoMs?: number
  /** True while the service is known to be unreachable: a rename then waits in the outbox. */
  offline?: () => boolean
  /** How long a rename waits for the service before it answers with the name pending. */
  renameSendMs?: number
  watchSettleMs?: number
}

/** The asset manager of one profile and organization: reads, changes, uploads, watches. */
export function openAssetManager(options: AssetManagerOptions): AssetManager {
  const { client, databases, orgId, logger, emit } = options
  const clock = options.clock ?? Date.now
  let changes: AssetChanges | null = null
  const renames = new AssetRenames({
    client,
    databases,
    profile: options.profile,
    orgId,
    logger,
    ...(options.offline ? { offline: options.offline } : {}),
    ...(options.renameSendMs === undefined ? {} : { sendTimeoutMs: options.renameSendMs }),
  })
  const library = new AssetLibrary(
    databases.mirror,
    orgId,
    {
      assets: () => changes?.hiddenAssets() ?? new Set(),
      folders: () => changes?.hiddenFolders() ?? new Set(),
    },
    clock,
    (item) => renames.overlay(item),
  )
  changes = new AssetChanges({
    client,
    mirror: databases.mirror,
    library,
    logger,
    clock,
    ...(options.undoMs === undefined ? {} : { undoMs: options.undoMs }),
    onDeleted: ({ failed, message }) => {
      if (failed > 0) {
        emit('app.notice', {
          level: 'warning',
          message: `${failed === 1 ? 'One item' : `${failed} items`} could not be deleted and ${failed === 1 ? 'is' : 'are'} shown again: ${message ?? 'the service refused'}.`,
        })
      }
      emit('assets.changed', { reason: failed > 0 ? 'delete-failed' : 'deleted' })
    },
  })
  const held = changes
  const uploads = new UploadManager({
    client,
    databases,
    profile: options.profile,
    orgId,
    home: options.home,
    logger,
    clock,
    progress: (event) => {
      emit('uploads.progress', event)
    },
    // The new assets are in the mirror as soon as the service confirmed them: the views show
    // them at once; the sync after it brings the folders an upload made.
    written: () => {
      emit('assets.changed', { reason: 'written' })
    },
    uploaded: () => {
      void options.syncNow().then(
        () => {
          emit('assets.changed', { reason: 'uploaded' })
        },
        (error: unknown) => {
          logger.warn('the sync after an upload failed', { err: error })
        },
      )
    },
    ...(options.watchSettleMs === undefined ? {} : { watchSettleMs: options.watchSettleMs }),
  })
  uploads.restoreWatches()

  let closing: Promise<void> | null = null
  return {
    list: (args) => library.list(args),
    get: ({ id }) => library.get(id),
    folders: () => library.folders(),
    createFolder: ({ name, parentId }) => held.createFolder(name, parentId),
    renameFolder: ({ id, name }) => held.renameFolder(id, name),
    moveFolder: ({ id, parentId }) => held.moveFolder(id, parentId),
    deleteFolder: ({ id }) => held.deleteFolder(id),
    move: ({ ids, folderId }) => held.move(ids, folderId),
    delete: ({ ids }) => held.deleteAssets(ids),
    undoDelete: ({ undoId }) => {
      held.undo(undoId)
      return null
    },
    rename: async ({ id, name }) => {
      const before = library.get(id)
      // The same name again, with nothing waiting: there is nothing to send.
      if (before.name === name && before.pendingRename === undefined) return before
      await renames.rename(id, name)
      return library.get(id)
    },
    startUpload: (args) => uploads.start(args),
    pauseUpload: ({ id }) => uploads.pause(id),
    resumeUpload: ({ id }) => uploads.resume(id),
    cancelUpload: ({ id }) => uploads.cancel(id),
    uploads: () => uploads.list(),
    uploadFiles: ({ id, limit }) => uploads.files(id, limit),
    dismissUpload: ({ id }) => {
      uploads.dismiss(id)
      return null
    },
    browse: ({ path }) => browseFolders(path),
    watches: () => uploads.watchList(),
    watch: (args) => uploads.watch(args),
    unwatch: async ({ id }) => {
      await uploads.unwatch(id)
      return null
    },
    close: () => {
      closing ??= (async () => {
        renames.close()
        await held.flush()
        await uploads.close()
      })()
      return closing
    },
  }
}

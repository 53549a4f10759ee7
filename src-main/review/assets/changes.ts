import { randomUUID } from 'node:crypto'
import type { AssetFolder } from '../../../src-shared/api'
import type { AssetFolderItem, AssetItem, HeldDelete } from '../../../src-shared/domain/assets'
import type { Mirror } from '../../db'
import type { Logger } from '../../log'
import { isServiceError, type ServiceClient } from '../../service'
import { AssetsError } from './errors'
import { folderItem, type AssetLibrary } from './library'

/** How long a delete waits for an undo before it is sent. */
export const UNDO_MS = 6_000
/** Requests in flight for a move or a delete of many assets. */
const AT_ONCE = 4

interface Held {
  kind: 'assets' | 'folder'
  ids: string[]
  sendsAt: number
  timer: NodeJS.Timeout
}

export interface ChangesOptions {
  client: ServiceClient
  mirror: Mirror
  library: AssetLibrary
  logger: Logger
  clock: () => number
  undoMs?: number
  /** A held delete was sent (or refused): the lists should be read again. */
  onDeleted: (outcome: { sent: number; failed: number; message: string | null }) => void
}

/**
 * Changes to assets and folders, made on the service at once; its answer goes into the mirror
 * like a page of a sync, so the lists show the change without waiting for one.
 *
 * Deletes: the contract has no restore, so a delete is held here for `UNDO_MS` (hidden from every
 * list meanwhile) and only then sent; undo just drops it. Closing Atelier sends what is held, as
 * the person meant. A held delete that the service refuses brings the records back, with a
 * notice. Offline, a change fails with the service's code rather than waiting in the outbox: the
 * mirror never shows a change the service has not made (see the report of issue 8).
 */
export class AssetChanges {
  private readonly held = new Map<string, Held>()
  private readonly sending = new Set<Promise<void>>()
  private readonly undoMs: number

  constructor(private readonly options: ChangesOptions) {
    this.undoMs = options.undoMs ?? UNDO_MS
  }

  hiddenAssets(): ReadonlySet<string> {
    return this.hiddenOf('assets')
  }

  hiddenFolders(): ReadonlySet<string> {
    return this.hiddenOf('folder')
  }

  private hiddenOf(kind: Held['kind']): ReadonlySet<string> {
    const ids = new Set<string>()
    for (const held of this.held.values()) {
      if (held.kind === kind) for (const id of held.ids) ids.add(id)
    }
    return ids
  }

  async createFolder(name: string, parentId: string | null): Promise<AssetFolderItem> {
    if (parentId !== null) this.existingFolder(parentId)
    const folder = await this.named(name, () =>
      this.options.client.post('/v1/asset-folders', { body: { name, parent_id: parentId } }),
    )
    this.options.mirror.assetFolders.upsertPage([folder])
    return folderItem(folder)
  }

  async renameFolder(id: string, name: string): Promise<AssetFolderItem> {
    this.existingFolder(id)
    const folder = await this.named(name, () =>
      this.options.client.patch('/v1/asset-folders/{id}', {
        params: { path: { id } },
        body: { name },
      }),
    )
    await this.foldersChanged(folder)
    return this.withCount(folder)
  }

  async moveFolder(id: string, parentId: string | null): Promise<AssetFolderItem> {
    const moving = this.existingFolder(id)
    if (parentId !== null) {
      // Up the new parent's chain: reaching the folder itself would make a loop.
      for (let at: string | null = parentId; at !== null;) {
        if (at === id) {
          throw new AssetsError(
            'FOLDER_INTO_ITSELF',
            `"${moving.name}" cannot go into itself or one of its own sub-folders. Choose another folder.`,
          )
        }
        at = this.existingFolder(at).parent_id
      }
    }
    const folder = await this.named(moving.name, () =>
      this.options.client.patch('/v1/asset-folders/{id}', {
        params: { path: { id } },
        body: { parent_id: parentId },
      }),
    )
    await this.foldersChanged(folder)
    return this.withCount(folder)
  }

  deleteFolder(id: string): HeldDelete {
    const folder = this.existingFolder(id)
    if (this.options.library.holdsSomething(id)) {
      throw new AssetsError(
        'FOLDER_NOT_EMPTY',
        `"${folder.name}" still holds assets or folders. Move or delete them first, then delete the folder.`,
      )
    }
    return this.hold('folder', [id])
  }

  async move(ids: readonly string[], folderId: string | null): Promise<AssetItem[]> {
    if (folderId !== null) this.existingFolder(folderId)
    const moved: AssetItem[] = []
    await eachAtOnce(ids, async (assetId) => {
      const asset = await this.options.client.patch('/v1/assets/{asset_id}', {
        params: { path: { asset_id: assetId } },
        body: { folder_id: folderId },
      })
      this.options.mirror.assets.upsertPage([asset])
      moved.push(this.options.library.item(asset))
    })
    return moved
  }

  deleteAssets(ids: readonly string[]): HeldDelete {
    const hidden = this.hiddenAssets()
    const known = [...new Set(ids)].filter((id) => !hidden.has(id))
    if (known.length === 0) {
      throw new AssetsError('NOT_FOUND', 'These assets are already being deleted.')
    }
    return this.hold('assets', known)
  }

  undo(undoId: string): void {
    const held = this.held.get(undoId)
    if (!held) {
      throw new AssetsError(
        'UNDO_EXPIRED',
        'It is too late to undo: the delete was already sent to the service.',
      )
    }
    clearTimeout(held.timer)
    this.held.delete(undoId)
  }

  /** Sends every held delete now and waits for all of them (Atelier is closing). */
  async flush(): Promise<void> {
    for (const [undoId, held] of [...this.held]) {
      clearTimeout(held.timer)
      this.send(undoId)
    }
    await Promise.allSettled([...this.sending])
  }

  private hold(kind: Held['kind'], ids: string[]): HeldDelete {
    const undoId = randomUUID()
    const sendsAt = this.options.clock() + this.undoMs
    const timer = setTimeout(() => {
      this.send(undoId)
    }, this.undoMs)
    this.held.set(undoId, { kind, ids, sendsAt, timer })
    return { undoId, count: ids.length, sendsAt }
  }

  private send(undoId: string): void {
    const held = this.held.get(undoId)
    if (!held) return
    const sending = this.deleteNow(undoId, held).finally(() => {
      this.sending.delete(sending)
    })
    this.sending.add(sending)
  }

  private async deleteNow(undoId: string, held: Held): Promise<void> {
    const { client, mirror, logger } = this.options
    let sent = 0
    let failed = 0
    let message: string | null = null
    const done = (id: string) => {
      sent++
      if (held.kind === 'assets') mirror.assets.remove([id])
      else mirror.assetFolders.remove([id])
    }
    await eachAtOnce(held.ids, async (id) => {
      try {
        if (held.kind === 'assets') {
          await client.delete('/v1/assets/{asset_id}', { params: { path: { asset_id: id } } })
        } else {
          await client.delete('/v1/asset-folders/{id}', { params: { path: { id } } })
        }
        done(id)
      } catch (error) {
        // Already gone on the service: what the person wanted.
        if (isServiceError(error) && error.status === 404) {
          done(id)
          return
        }
        failed++
        message ??= error instanceof Error ? error.message : String(error)
        logger.warn('a held delete was refused', { kind: held.kind, err: error })
      }
    })
    // Hidden until the mirror no longer holds them, so they do not flash back meanwhile; shown
    // again before anyone hears, so a list read on the news sees the refused ones.
    this.held.delete(undoId)
    this.options.onDeleted({ sent, failed, message })
  }

  private existingFolder(id: string): AssetFolder {
    const folder = this.options.library.folder(id)
    if (!folder) {
      throw new AssetsError(
        'NOT_FOUND',
        'This folder is not in the local copy: it was deleted, or it has not been synced yet. Sync, then try again.',
      )
    }
    return folder
  }

  /** Runs a create, rename or move; a clash of names becomes a message that says what to do. */
  private async named(name: string, call: () => Promise<AssetFolder>): Promise<AssetFolder> {
    try {
      return await call()
    } catch (error) {
      if (isServiceError(error) && error.status === 409) {
        throw new AssetsError(
          'FOLDER_NAME_TAKEN',
          `There is already a folder named "${name}" there. Choose another name or place.`,
        )
      }
      throw error
    }
  }

  /**
   * A rename or a move changes the path of every folder under it: the folders are read again
   * from the service (a few pages at most) so that paths, which the search filters on, stay true.
   */
  private async foldersChanged(folder: AssetFolder): Promise<void> {
    const { client, mirror, logger } = this.options
    mirror.assetFolders.upsertPage([folder])
    try {
      const all: AssetFolder[] = []
      for await (const each of client.list('/v1/asset-folders', {
        params: { query: { limit: 500 } },
      })) {
        all.push(each)
      }
      mirror.assetFolders.upsertPage(all)
    } catch (error) {
      // The folder itself is right; the next sync brings its sub-folders' paths.
      logger.warn('the folders could not be read again after a change', { err: error })
    }
  }

  private withCount(folder: AssetFolder): AssetFolderItem {
    const counted = this.options.library.folders().folders.find((f) => f.id === folder.id)
    return counted ?? folderItem(folder)
  }
}

async function eachAtOnce<T>(items: readonly T[], work: (item: T) => Promise<void>) {
  let next = 0
  const failures: unknown[] = []
  const worker = async () => {
    while (next < items.length && failures.length === 0) {
      const item = items[next++]
      if (item === undefined) continue
      try {
        await work(item)
      } catch (error) {
        failures.push(error)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, items.length) }, worker))
  // The first failure, as it came; the items after it were not tried.
  if (failures.length > 0) throw failures[0]
}

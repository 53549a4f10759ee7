import { SandboxError } from '../errors'
import { getOne, listOf } from '../handlers/common'
import type { Handlers } from '../handlers/types'
import type { RecordStore } from '../store'
import { ASSETS, checkName, FOLDERS, requireTargetFolder, type AssetFolder } from './records'

/**
 * Names compare without case: Atelier mirrors folders to disks where `Photos` and `photos` are
 * the same folder, so the service must never hold both side by side.
 */
function sameName(a: string, b: string): boolean {
  return a.normalize('NFC').toLowerCase() === b.normalize('NFC').toLowerCase()
}

function refuseSiblingClash(
  store: RecordStore,
  orgId: string,
  parentId: string | null,
  name: string,
  self: string | null,
): void {
  const rows = store.db
    .prepare(
      `SELECT doc FROM records WHERE collection = ? AND org_id = ? AND parent_id IS ?
         AND deleted_at IS NULL`,
    )
    .all(FOLDERS, orgId, parentId) as { doc: string }[]
  const clash = rows
    .map((row) => JSON.parse(row.doc) as AssetFolder)
    .find((sibling) => sibling.id !== self && sameName(sibling.name, name))
  if (clash) {
    throw new SandboxError(
      409,
      'CONFLICT',
      `A folder named ${JSON.stringify(clash.name)} already exists at ${clash.path} (names are unique among siblings, ignoring case); choose another name or use that folder (${clash.id}).`,
    )
  }
}

/** Every live folder below this one, at any depth. */
function descendantsOf(store: RecordStore, orgId: string, folderId: string): AssetFolder[] {
  const rows = store.db
    .prepare(
      `WITH RECURSIVE below(id) AS (
         SELECT id FROM records WHERE collection = @collection AND org_id = @orgId AND parent_id = @folderId
           AND deleted_at IS NULL
         UNION
         SELECT r.id FROM records r JOIN below ON r.parent_id = below.id
           WHERE r.collection = @collection AND r.org_id = @orgId AND r.deleted_at IS NULL)
       SELECT doc FROM records WHERE collection = @collection AND org_id = @orgId
         AND id IN (SELECT id FROM below)`,
    )
    .all({ collection: FOLDERS, orgId, folderId }) as { doc: string }[]
  return rows.map((row) => JSON.parse(row.doc) as AssetFolder)
}

function pathUnder(parent: AssetFolder | null, name: string): string {
  return `${parent ? parent.path : ''}/${name}`
}

export const folderHandlers: Handlers = {
  listAssetFolders: listOf({ collection: FOLDERS, schema: 'AssetFolder' }),

  getAssetFolder: getOne({ collection: FOLDERS, idParam: 'id', what: 'The asset folder' }),

  createAssetFolder: ({ body, auth, sandbox }) => {
    const { store } = sandbox
    checkName(body.name, 'name', 'folder')
    return store.transaction(() => {
      const parentId = body.parent_id ?? null
      const parent =
        parentId === null ? null : requireTargetFolder(store, auth.orgId, parentId, 'parent_id')
      refuseSiblingClash(store, auth.orgId, parentId, body.name, null)
      const now = store.now()
      const folder: AssetFolder = {
        id: store.newId(),
        org_id: auth.orgId,
        parent_id: parentId,
        name: body.name,
        path: pathUnder(parent, body.name),
        created_at: now,
        updated_at: now,
        deleted_at: null,
      }
      return store.insert(FOLDERS, auth.orgId, folder, parentId)
    })
  },

  updateAssetFolder: ({ params, body, auth, sandbox }) => {
    const { store } = sandbox
    if (body.name !== undefined) checkName(body.name, 'name', 'folder')
    return store.transaction(() => {
      const folder = store.require<AssetFolder>(FOLDERS, params.id, auth.orgId, 'The asset folder')
      const name = body.name ?? folder.name
      const parentId = body.parent_id === undefined ? folder.parent_id : body.parent_id
      const descendants = descendantsOf(store, auth.orgId, folder.id)
      let parent: AssetFolder | null = null
      if (parentId !== null) {
        if (parentId === folder.id || descendants.some((d) => d.id === parentId)) {
          throw new SandboxError(
            409,
            'CONFLICT',
            `The folder ${folder.path} cannot move into itself or one of its own subfolders; pick a parent_id outside it.`,
          )
        }
        parent = requireTargetFolder(store, auth.orgId, parentId, 'parent_id')
      }
      refuseSiblingClash(store, auth.orgId, parentId, name, folder.id)
      const path = pathUnder(parent, name)
      const updated = store.update<AssetFolder>(
        FOLDERS,
        folder.id,
        auth.orgId,
        (current) => ({ ...current, name, parent_id: parentId, path }),
        'The folder',
        { parentId },
      )
      if (path !== folder.path) {
        // Each descendant's own updated_at moves too, so an incremental sync learns the new paths.
        for (const descendant of descendants) {
          store.update<AssetFolder>(FOLDERS, descendant.id, auth.orgId, (current) => ({
            ...current,
            path: path + current.path.slice(folder.path.length),
          }))
        }
      }
      return updated
    })
  },

  deleteAssetFolder: ({ params, auth, sandbox }) => {
    const { store } = sandbox
    return store.transaction(() => {
      const folder = store.require<AssetFolder>(FOLDERS, params.id, auth.orgId, 'The asset folder')
      const folders = store.count(FOLDERS, auth.orgId, folder.id)
      const assets = store.count(ASSETS, auth.orgId, folder.id)
      if (folders + assets > 0) {
        throw new SandboxError(
          409,
          'CONFLICT',
          `The folder ${folder.path} still holds ${folders} folder(s) and ${assets} asset(s); move or delete them first.`,
        )
      }
      const deletedAt = store.remove(FOLDERS, folder.id, auth.orgId, 'The asset folder')
      return { ...folder, deleted_at: deletedAt, updated_at: deletedAt }
    })
  },
}

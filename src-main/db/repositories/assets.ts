import type Database from 'better-sqlite3'
import type { Asset, AssetFolder, MediaType } from '../../../src-shared/api'
import { decodeCursor, idList, pageLimit, timeMs } from '../values'
import { RowWriter } from './rows'
import {
  Conditions,
  newestFirstPage,
  StatementCache,
  toPage,
  type NewestFirstQuery,
  type Page,
} from './statements'

export interface AssetListQuery extends NewestFirstQuery {
  /** A folder's assets; null for the root's. Left out: every folder. */
  folderId?: string | null
  mediaType?: MediaType
}

/**
 * Assets. The mirror holds live records only: a record that comes back soft-deleted
 * (deleted_at set) is removed like a tombstone would remove it. thumbnail_sha256 is ours, not
 * the service's, so a sync never overwrites it.
 */
export class AssetsRepository {
  private readonly rows: RowWriter
  private readonly deleteOne: Database.Statement
  private readonly byId: Database.Statement
  private readonly bySha: Database.Statement
  private readonly deleteByIds: Database.Statement
  private readonly thumbnail: Database.Statement
  private readonly thumbnailOf: Database.Statement
  private readonly countByOrg: Database.Statement
  private readonly lists: StatementCache
  private readonly writePage: Database.Transaction<(records: readonly Asset[]) => number>

  constructor(db: Database.Database) {
    this.rows = new RowWriter(db, {
      table: 'assets',
      key: ['id'],
      columns: [
        'org_id',
        'folder_id',
        'name',
        'media_type',
        'content_type',
        'size_bytes',
        'sha256',
        'status_code',
        'created_ms',
        'updated_ms',
        'json',
      ],
      fts: ['name'],
    })
    this.deleteOne = db.prepare('DELETE FROM assets WHERE id = ? AND updated_ms <= ?')
    this.byId = db.prepare('SELECT json FROM assets WHERE id = ?').pluck()
    this.bySha = db
      .prepare('SELECT json FROM assets WHERE org_id = ? AND sha256 = ? ORDER BY created_ms, seq')
      .pluck()
    this.deleteByIds = db.prepare('DELETE FROM assets WHERE id IN (SELECT value FROM json_each(?))')
    this.thumbnail = db.prepare('UPDATE assets SET thumbnail_sha256 = ? WHERE id = ?')
    this.thumbnailOf = db.prepare('SELECT thumbnail_sha256 FROM assets WHERE id = ?').pluck()
    this.countByOrg = db.prepare('SELECT count(*) FROM assets WHERE org_id = ?').pluck()
    this.lists = new StatementCache(db)
    this.writePage = db.transaction((records: readonly Asset[]) => {
      let written = 0
      for (const a of records) {
        const updatedMs = timeMs(a.updated_at, 'asset.updated_at')
        if (a.deleted_at !== null) {
          written += this.deleteOne.run(a.id, updatedMs).changes
          continue
        }
        const result = this.rows.write([
          a.id,
          a.org_id,
          a.folder_id,
          a.name,
          a.media_type,
          a.content_type,
          a.size_bytes,
          a.sha256,
          a.status_code,
          timeMs(a.created_at, 'asset.created_at'),
          updatedMs,
          JSON.stringify(a),
        ])
        if (result !== 'stale') written++
      }
      return written
    })
  }

  /** Writes a page in one transaction; returns how many rows were written or removed. */
  upsertPage(records: readonly Asset[]): number {
    return this.writePage.immediate(records)
  }

  get(id: string): Asset | null {
    const json = this.byId.get(id) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as Asset)
  }

  /** Assets of the organization with these bytes: what an upload can skip. */
  withSha256(orgId: string, sha256: string): Asset[] {
    return (this.bySha.all(orgId, sha256) as string[]).map((json) => JSON.parse(json) as Asset)
  }

  /** Records the thumbnail downloaded into the local store (null: forget it). */
  setThumbnail(id: string, sha256: string | null): boolean {
    return this.thumbnail.run(sha256, id).changes > 0
  }

  thumbnailSha256(id: string): string | null {
    return (this.thumbnailOf.get(id) as string | null | undefined) ?? null
  }

  remove(ids: readonly string[]): number {
    return ids.length === 0 ? 0 : this.deleteByIds.run(idList(ids)).changes
  }

  count(orgId: string): number {
    return this.countByOrg.get(orgId) as number
  }

  /** Newest first, keyset-paged on (created, seq). */
  list(query: AssetListQuery): Page<Asset> {
    return newestFirstPage<Asset>(this.lists, 'assets', query, (where) => {
      if (query.folderId !== undefined) where.add('folder_id IS ?', query.folderId)
      if (query.mediaType !== undefined) where.add('media_type = ?', query.mediaType)
    })
  }
}

export interface AssetFolderListQuery {
  orgId: string
  /** A folder's subfolders; null for the top level. Left out: every folder. */
  parentId?: string | null
  limit?: number
  after?: string | null
}

/** Asset folders, live ones only, like assets. Listed by path. */
export class AssetFoldersRepository {
  private readonly rows: RowWriter
  private readonly deleteOne: Database.Statement
  private readonly byId: Database.Statement
  private readonly byPath: Database.Statement
  private readonly deleteByIds: Database.Statement
  private readonly lists: StatementCache
  private readonly writePage: Database.Transaction<(records: readonly AssetFolder[]) => number>

  constructor(db: Database.Database) {
    this.rows = new RowWriter(db, {
      table: 'asset_folders',
      key: ['id'],
      columns: ['org_id', 'parent_id', 'name', 'path', 'created_ms', 'updated_ms', 'json'],
      fts: ['path'],
    })
    this.deleteOne = db.prepare('DELETE FROM asset_folders WHERE id = ? AND updated_ms <= ?')
    this.byId = db.prepare('SELECT json FROM asset_folders WHERE id = ?').pluck()
    this.byPath = db
      .prepare('SELECT json FROM asset_folders WHERE org_id = ? AND path = ? ORDER BY seq LIMIT 1')
      .pluck()
    this.deleteByIds = db.prepare(
      'DELETE FROM asset_folders WHERE id IN (SELECT value FROM json_each(?))',
    )
    this.lists = new StatementCache(db)
    this.writePage = db.transaction((records: readonly AssetFolder[]) => {
      let written = 0
      for (const f of records) {
        const updatedMs = timeMs(f.updated_at, 'asset_folder.updated_at')
        if (f.deleted_at !== null) {
          written += this.deleteOne.run(f.id, updatedMs).changes
          continue
        }
        const result = this.rows.write([
          f.id,
          f.org_id,
          f.parent_id,
          f.name,
          f.path,
          timeMs(f.created_at, 'asset_folder.created_at'),
          updatedMs,
          JSON.stringify(f),
        ])
        if (result !== 'stale') written++
      }
      return written
    })
  }

  upsertPage(records: readonly AssetFolder[]): number {
    return this.writePage.immediate(records)
  }

  get(id: string): AssetFolder | null {
    const json = this.byId.get(id) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as AssetFolder)
  }

  /** The folder at `/a/b`, which an upload reuses instead of creating it again. */
  atPath(orgId: string, path: string): AssetFolder | null {
    const json = this.byPath.get(orgId, path) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as AssetFolder)
  }

  remove(ids: readonly string[]): number {
    return ids.length === 0 ? 0 : this.deleteByIds.run(idList(ids)).changes
  }

  /** By path, keyset-paged on (path, seq). */
  list(query: AssetFolderListQuery): Page<AssetFolder> {
    const limit = pageLimit(query.limit)
    const where = new Conditions().add('org_id = ?', query.orgId)
    if (query.parentId !== undefined) where.add('parent_id IS ?', query.parentId)
    if (query.after) where.add('(path, seq) > (?, ?)', ...decodeCursor(query.after, 'string'))
    const rows = this.lists
      .get(
        `SELECT path, seq, json FROM asset_folders WHERE ${where.sql}
         ORDER BY path, seq LIMIT ?`,
      )
      .raw()
      .all(...where.values, limit + 1) as unknown[][]
    return toPage<AssetFolder>(rows, limit)
  }
}

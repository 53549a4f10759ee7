import type Database from 'better-sqlite3'
import { isoTime, uuidv7, type Clock } from './clock'
import type { SandboxDb } from './db'
import { notFound } from './errors'
import { listRecords, type ListOptions, type ListParams, type ListScope, type Page } from './list'

export interface BaseRecord {
  id: string
  created_at: string
  updated_at: string
}

interface Row {
  doc: string
}

/** Collections whose deletions are published as tombstones, so a mirror can learn about them. */
const TOMBSTONED = new Set([
  'runs',
  'assets',
  'asset_folders',
  'evaluations',
  'flows',
  'webhooks',
  'wfengine_workflows',
  'batches',
])

/**
 * Typed access to the `records` table. Every write bumps `updated_at`, which is what incremental
 * sync follows; every deletion of a mirrored collection leaves a tombstone.
 */
export class RecordStore {
  private readonly statements = new Map<string, Database.Statement>()

  constructor(
    readonly db: SandboxDb,
    readonly clock: Clock,
  ) {}

  /** A statement prepared once per store: the areas' own queries share this cache too. */
  prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql)
    if (!statement) {
      statement = this.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    return statement
  }

  now(): string {
    return isoTime(this.clock())
  }

  newId(): string {
    return uuidv7(this.clock())
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)()
  }

  insert<T extends BaseRecord>(
    collection: string,
    orgId: string | null,
    record: T,
    parentId: string | null = null,
  ): T {
    this.insertRow(collection, orgId, record, parentId, record.updated_at)
    return record
  }

  /**
   * Stores a record whose contract shape has no `updated_at` (a delivery attempt never changes),
   * so its JSON stays exactly that shape; the column still gets the creation time.
   */
  insertImmutable(
    collection: string,
    orgId: string,
    record: { id: string; created_at: string },
    parentId: string | null = null,
  ): void {
    this.insertRow(collection, orgId, record, parentId, record.created_at)
  }

  private insertRow(
    collection: string,
    orgId: string | null,
    record: { id: string; created_at: string },
    parentId: string | null,
    updatedAt: string,
  ): void {
    this.prepared(
      `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      collection,
      record.id,
      orgId,
      parentId,
      record.created_at,
      updatedAt,
      JSON.stringify(record),
    )
  }

  /** Records of the organization, and global ones (catalogs, public models) when asked. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the type it stored
  get<T extends BaseRecord>(
    collection: string,
    id: string,
    orgId: string,
    options: { includeGlobal?: boolean; includeDeleted?: boolean } = {},
  ): T | undefined {
    const row = this.prepared(
      `SELECT doc FROM records WHERE collection = ? AND id = ?
         AND (org_id = ? OR (? AND org_id IS NULL)) AND (? OR deleted_at IS NULL)`,
    ).get(collection, id, orgId, options.includeGlobal ? 1 : 0, options.includeDeleted ? 1 : 0) as
      Row | undefined
    return row ? (JSON.parse(row.doc) as T) : undefined
  }

  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- as for get
  require<T extends BaseRecord>(
    collection: string,
    id: string,
    orgId: string,
    what: string,
    options: { includeGlobal?: boolean; notFoundCode?: string } = {},
  ): T {
    const record = this.get<T>(collection, id, orgId, options)
    if (!record) throw notFound(what, options.notFoundCode)
    return record
  }

  /** Replaces a record with what `change` makes of it; `updated_at` is set here. */
  update<T extends BaseRecord>(
    collection: string,
    id: string,
    orgId: string,
    change: (current: T) => T,
    what = 'The record',
    options: { parentId?: string | null } = {},
  ): T {
    return this.transaction(() => {
      const current = this.require<T>(collection, id, orgId, what)
      const next = { ...change(current), updated_at: this.now() }
      this.prepared(
        `UPDATE records SET doc = ?, updated_at = ? WHERE collection = ? AND id = ? AND org_id = ?`,
      ).run(JSON.stringify(next), next.updated_at, collection, id, orgId)
      // A move changes the parent that lists, counts and the `any` rule filter on.
      if (options.parentId !== undefined) {
        this.prepared(
          `UPDATE records SET parent_id = ? WHERE collection = ? AND id = ? AND org_id = ?`,
        ).run(options.parentId, collection, id, orgId)
      }
      return next
    })
  }

  /** Soft-deletes (the row stays, hidden from lists and reads) and publishes a tombstone. */
  remove(collection: string, id: string, orgId: string, what = 'The record'): string {
    return this.transaction(() => {
      this.require(collection, id, orgId, what)
      const deletedAt = this.now()
      this.prepared(
        `UPDATE records SET deleted_at = ?, updated_at = ?,
           doc = json_set(doc, '$.deleted_at', ?, '$.updated_at', ?)
         WHERE collection = ? AND id = ? AND org_id = ?`,
      ).run(deletedAt, deletedAt, deletedAt, deletedAt, collection, id, orgId)
      if (TOMBSTONED.has(collection)) {
        const tombstone = {
          id: this.newId(),
          collection,
          record_id: id,
          deleted_at: deletedAt,
          created_at: deletedAt,
          updated_at: deletedAt,
        }
        this.insert('tombstones', orgId, tombstone)
      }
      return deletedAt
    })
  }

  list<T>(scope: ListScope, params: ListParams, options: ListOptions): Page<T> {
    return listRecords<T>(this.db, scope, params, options)
  }

  /** How many live records of a collection an organization has under a parent. */
  count(collection: string, orgId: string, parentId: string): number {
    const row = this.prepared(
      `SELECT count(*) AS n FROM records WHERE collection = ? AND org_id = ? AND parent_id = ? AND deleted_at IS NULL`,
    ).get(collection, orgId, parentId) as { n: number }
    return row.n
  }
}

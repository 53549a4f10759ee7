import type Database from 'better-sqlite3'
import { decodeCursorParts, encodeCursor, idList, pageLimit, timeMs } from '../values'
import type { Page } from './statements'

/** Which collection of which organization's view a call reads or writes. */
export interface RecordsScope {
  /** The sync's name of the collection (`batches`), also the type its tombstones carry. */
  collection: string
  orgId: string
}

export interface RecordsListQuery {
  limit?: number
  /** The `next` of the previous page. */
  after?: string | null
}

/** What a record needs to be mirrored here: the service's id and times. */
export interface MirroredRecord {
  id?: string | null
  updated_at?: string | null
  created_at?: string | null
  deleted_at?: string | null
}

/**
 * The records of every collection registered with `mirrored()` (`sync/collections.ts`), kept
 * whole as the service sent them, in one table (`records`, mirror step 4). A collection that is
 * only listed and read back needs no table or repository of its own, so a new review screen
 * adds none.
 */
export class MirroredRecordsRepository {
  private readonly upsert: Database.Statement
  private readonly deleteOne: Database.Statement
  private readonly byId: Database.Statement
  private readonly deleteByIds: Database.Statement
  private readonly deleteOthers: Database.Statement
  private readonly countOf: Database.Statement
  private readonly firstPage: Database.Statement
  private readonly nextPage: Database.Statement
  private readonly writePage: Database.Transaction<
    (scope: RecordsScope, records: readonly MirroredRecord[]) => number
  >

  constructor(db: Database.Database) {
    // An older copy (by updated_at) never replaces a newer one: pages can arrive out of order
    // around a resumed sync.
    this.upsert = db.prepare(
      `INSERT INTO records (collection, org_id, id, listed_ms, updated_ms, json)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (collection, org_id, id) DO UPDATE SET
         listed_ms = excluded.listed_ms, updated_ms = excluded.updated_ms, json = excluded.json
       WHERE excluded.updated_ms >= records.updated_ms`,
    )
    this.deleteOne = db.prepare(
      `DELETE FROM records WHERE collection = ? AND org_id = ? AND id = ? AND updated_ms <= ?`,
    )
    this.byId = db
      .prepare(`SELECT json FROM records WHERE collection = ? AND org_id = ? AND id = ?`)
      .pluck()
    this.deleteByIds = db.prepare(
      `DELETE FROM records WHERE collection = ? AND id IN (SELECT value FROM json_each(?))`,
    )
    this.deleteOthers = db.prepare(
      `DELETE FROM records WHERE collection = ? AND org_id = ?
         AND id NOT IN (SELECT value FROM json_each(?))`,
    )
    this.countOf = db
      .prepare(`SELECT count(*) FROM records WHERE collection = ? AND org_id = ?`)
      .pluck()
    const select = `SELECT listed_ms, id, json FROM records WHERE collection = ? AND org_id = ?`
    const sort = `ORDER BY listed_ms DESC, id DESC LIMIT ?`
    this.firstPage = db.prepare(`${select} ${sort}`).raw()
    this.nextPage = db.prepare(`${select} AND (listed_ms, id) < (?, ?) ${sort}`).raw()
    this.writePage = db.transaction((scope: RecordsScope, records: readonly MirroredRecord[]) => {
      let written = 0
      for (const record of records) written += this.writeOne(scope, record)
      return written
    })
  }

  /**
   * Writes a page in one transaction (a savepoint inside the caller's); returns how many
   * records were written or removed. A record without an id or an updated_at cannot be kept
   * apart from the others or ordered against a newer copy, so it is left out; one that comes
   * back deleted is removed.
   */
  upsertPage(scope: RecordsScope, records: readonly MirroredRecord[]): number {
    return this.writePage.immediate(scope, records)
  }

  /** The record as the service sent it; its shape is the collection's, known to the caller. */
  get(scope: RecordsScope, id: string): unknown {
    const json = this.byId.get(scope.collection, scope.orgId, id) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as unknown)
  }

  /**
   * Newest first (created_at, else updated_at), keyset-paged: the cursor is the last row's time
   * and id, opaque to callers.
   */
  list(scope: RecordsScope, query: RecordsListQuery = {}): Page<unknown> {
    const limit = pageLimit(query.limit)
    const rows = (
      query.after
        ? this.nextPage.all(
            scope.collection,
            scope.orgId,
            ...decodeCursorParts(query.after, 'integer', 'string'),
            limit + 1,
          )
        : this.firstPage.all(scope.collection, scope.orgId, limit + 1)
    ) as [number, string, string][]
    const more = rows.length > limit
    const kept = more ? rows.slice(0, limit) : rows
    const last = kept.at(-1)
    return {
      items: kept.map((row) => JSON.parse(row[2]) as unknown),
      next: more && last ? encodeCursor(last[0], last[1]) : null,
    }
  }

  /** Deleted on the service (a tombstone): gone from every organization's view. */
  remove(collection: string, ids: readonly string[]): number {
    return ids.length === 0 ? 0 : this.deleteByIds.run(collection, idList(ids)).changes
  }

  /** For a collection read whole, having no tombstones: drops every record but these. */
  retainOnly(scope: RecordsScope, ids: readonly string[]): number {
    return this.deleteOthers.run(scope.collection, scope.orgId, idList(ids)).changes
  }

  count(scope: RecordsScope): number {
    return this.countOf.get(scope.collection, scope.orgId) as number
  }

  private writeOne(scope: RecordsScope, record: MirroredRecord): number {
    const { id, updated_at: updatedAt } = record
    if (typeof id !== 'string' || typeof updatedAt !== 'string') return 0
    const updatedMs = timeMs(updatedAt, `${scope.collection} ${id} updated_at`)
    if (record.deleted_at) {
      return this.deleteOne.run(scope.collection, scope.orgId, id, updatedMs).changes
    }
    const listedMs =
      typeof record.created_at === 'string'
        ? timeMs(record.created_at, `${scope.collection} ${id} created_at`)
        : updatedMs
    return this.upsert.run(
      scope.collection,
      scope.orgId,
      id,
      listedMs,
      updatedMs,
      JSON.stringify(record),
    ).changes
  }
}

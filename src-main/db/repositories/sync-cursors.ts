import type Database from 'better-sqlite3'

export interface SyncCursorKey {
  profile: string
  orgId: string
  /** `runs`, `evaluations`, `tombstones`, `catalogs/units`… whatever the sync engine reads. */
  collection: string
}

export interface SyncCursor extends SyncCursorKey {
  /** The newest updated_at written, exactly as the service wrote it; null before the first page. */
  updatedAt: string | null
  /** The id of the last record at that updated_at. */
  id: string | null
  lastSyncMs: number | null
  lastFullSyncMs: number | null
}

export interface SyncCursorUpdate extends SyncCursorKey {
  updatedAt: string | null
  id: string | null
  /** Set when this write finishes a full sync of the collection. */
  fullSync?: boolean
}

type Row = [string | null, string | null, number | null, number | null]

/**
 * Where each incremental sync stands. Write the cursor in the same transaction as the page it
 * follows (`mirror.transaction(() => { runs.upsertPage(items); syncCursors.set(…) })`), so a
 * crash can never leave a cursor ahead of the records it claims were written.
 */
export class SyncCursorsRepository {
  private readonly one: Database.Statement
  private readonly ofOrg: Database.Statement
  private readonly upsert: Database.Statement
  private readonly clearOne: Database.Statement
  private readonly clearOrg: Database.Statement

  constructor(
    db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {
    this.one = db
      .prepare(
        `SELECT cursor_updated_at, cursor_id, last_sync_ms, last_full_sync_ms FROM sync_cursors
         WHERE profile = ? AND org_id = ? AND collection = ?`,
      )
      .raw()
    this.ofOrg = db
      .prepare(
        `SELECT collection, cursor_updated_at, cursor_id, last_sync_ms, last_full_sync_ms
         FROM sync_cursors WHERE profile = ? AND org_id = ? ORDER BY collection`,
      )
      .raw()
    this.upsert = db.prepare(`
      INSERT INTO sync_cursors (profile, org_id, collection, cursor_updated_at, cursor_id,
        last_sync_ms, last_full_sync_ms, updated_ms)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (profile, org_id, collection) DO UPDATE SET
        cursor_updated_at = excluded.cursor_updated_at, cursor_id = excluded.cursor_id,
        last_sync_ms = excluded.last_sync_ms,
        last_full_sync_ms = coalesce(excluded.last_full_sync_ms, sync_cursors.last_full_sync_ms),
        updated_ms = excluded.updated_ms`)
    this.clearOne = db.prepare(
      'DELETE FROM sync_cursors WHERE profile = ? AND org_id = ? AND collection = ?',
    )
    this.clearOrg = db.prepare('DELETE FROM sync_cursors WHERE profile = ? AND org_id = ?')
  }

  get(key: SyncCursorKey): SyncCursor | null {
    const row = this.one.get(key.profile, key.orgId, key.collection) as Row | undefined
    return row === undefined ? null : toCursor(key, row)
  }

  list(profile: string, orgId: string): SyncCursor[] {
    return (this.ofOrg.all(profile, orgId) as [string, ...Row][]).map(([collection, ...row]) =>
      toCursor({ profile, orgId, collection }, row),
    )
  }

  set(update: SyncCursorUpdate): SyncCursor {
    const now = this.clock()
    const full = update.fullSync ? now : null
    this.upsert.run(
      update.profile,
      update.orgId,
      update.collection,
      update.updatedAt,
      update.id,
      now,
      full,
      now,
    )
    const cursor = this.get(update)
    if (!cursor) throw new Error('The sync cursor was not stored.')
    return cursor
  }

  /** Forgets one cursor (the next sync of it is a full one), or every cursor of an organization. */
  reset(key: SyncCursorKey | Omit<SyncCursorKey, 'collection'>): number {
    return 'collection' in key
      ? this.clearOne.run(key.profile, key.orgId, key.collection).changes
      : this.clearOrg.run(key.profile, key.orgId).changes
  }
}

function toCursor(
  key: SyncCursorKey,
  [updatedAt, id, lastSyncMs, lastFullSyncMs]: Row,
): SyncCursor {
  return {
    profile: key.profile,
    orgId: key.orgId,
    collection: key.collection,
    updatedAt,
    id,
    lastSyncMs,
    lastFullSyncMs,
  }
}

import type { RecordStore } from '../store'
import { OPEN_STATES, type DeliveryCollection } from './records'

interface DocRow {
  doc: string
}

export interface OpenDelivery {
  collection: DeliveryCollection
  id: string
  orgId: string
  dueAt: string | null
}

/**
 * The few reads the generic list engine does not cover: whole small sets (a run's deliveries, an
 * organization's webhooks) and the sweep over every organization's unfinished deliveries at start.
 */
export class DeliveryQueries {
  constructor(private readonly store: RecordStore) {}

  /** Live records of one parent, oldest first (insertion order breaks a tie within a millisecond). */
  children<T>(collection: string, orgId: string, parentId: string): T[] {
    const rows = this.store
      .prepared(
        `SELECT doc FROM records WHERE collection = ? AND org_id = ? AND parent_id = ?
         AND deleted_at IS NULL ORDER BY created_at, rowid`,
      )
      .all(collection, orgId, parentId) as DocRow[]
    return rows.map((row) => JSON.parse(row.doc) as T)
  }

  /** Every live record of a collection in the organization, oldest first. */
  all<T>(collection: string, orgId: string): T[] {
    const rows = this.store
      .prepared(
        `SELECT doc FROM records WHERE collection = ? AND org_id = ? AND deleted_at IS NULL
         ORDER BY created_at, rowid`,
      )
      .all(collection, orgId) as DocRow[]
    return rows.map((row) => JSON.parse(row.doc) as T)
  }

  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the type it stored
  newest<T>(collection: string, orgId: string): T | undefined {
    const row = this.store
      .prepared(
        `SELECT doc FROM records WHERE collection = ? AND org_id = ? AND deleted_at IS NULL
         ORDER BY created_at DESC, rowid DESC LIMIT 1`,
      )
      .get(collection, orgId) as DocRow | undefined
    return row ? (JSON.parse(row.doc) as T) : undefined
  }

  /** Deliveries of every organization that still have an attempt to make. */
  open(collections: readonly DeliveryCollection[]): OpenDelivery[] {
    const marks = collections.map(() => '?').join(', ')
    const states = OPEN_STATES.map(() => '?').join(', ')
    const rows = this.store
      .prepared(
        `SELECT collection, id, org_id, json_extract(doc, '$.next_attempt_at') AS due_at
         FROM records WHERE collection IN (${marks}) AND deleted_at IS NULL AND org_id IS NOT NULL
         AND json_extract(doc, '$.status_code') IN (${states})
         ORDER BY created_at, id`,
      )
      .all(...collections, ...OPEN_STATES) as {
      collection: DeliveryCollection
      id: string
      org_id: string
      due_at: string | null
    }[]
    return rows.map((row) => ({
      collection: row.collection,
      id: row.id,
      orgId: row.org_id,
      dueAt: row.due_at,
    }))
  }
}

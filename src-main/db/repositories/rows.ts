import type Database from 'better-sqlite3'

/**
 * Writing cache rows and their search index together.
 *
 * The FTS5 indexes are external-content tables over the cache tables. Inserts and updates
 * reach them from here, as single-row statements, and deletions through AFTER DELETE triggers
 * (so tombstones and foreign-key cascades can never leave a stale entry). Not insert or update
 * triggers: a statement that fires a trigger opens a statement savepoint, and FTS5 flushes its
 * pending terms to a new segment at every savepoint, so each row's terms went to disk on their
 * own and were merged again later — over twice as slow per page as writing the index here.
 */

export type WriteResult = 'inserted' | 'updated' | 'stale'

export interface RowTable {
  table: string
  /** The columns of the table's UNIQUE key (`id`, or `org_id, id`), first in every row. */
  key: readonly string[]
  /** The other columns written, after the key, in row order. Must include updated_ms unless immutable. */
  columns: readonly string[]
  /** The columns the table's `<table>_fts` index covers, each also in `columns`. */
  fts?: readonly string[]
  /** Rows never change once written (log lines): a row seen again is left alone. */
  immutable?: boolean
}

export class RowWriter {
  private readonly insert: Database.Statement
  private readonly existing: Database.Statement | null
  private readonly update: Database.Statement | null
  private readonly ftsAdd: Database.Statement | null
  private readonly ftsDrop: Database.Statement | null
  /** Positions in a row (key first) of the search columns and of updated_ms. */
  private readonly ftsAt: readonly number[]
  private readonly updatedAt: number
  private readonly keyLength: number

  constructor(db: Database.Database, spec: RowTable) {
    const { table, key, columns } = spec
    const fts = spec.fts ?? []
    const all = [...key, ...columns]
    this.keyLength = key.length
    this.insert = db.prepare(
      `INSERT INTO ${table} (${all.join(', ')}) VALUES (${all.map(() => '?').join(', ')})
       ON CONFLICT (${key.join(', ')}) DO NOTHING`,
    )
    this.ftsAt = fts.map((column) => {
      const at = columns.indexOf(column)
      if (at < 0) throw new Error(`${table}: the search column ${column} is not written`)
      return key.length + at
    })
    this.updatedAt = key.length + columns.indexOf('updated_ms')
    if (spec.immutable) {
      this.existing = null
      this.update = null
    } else {
      if (this.updatedAt < key.length) throw new Error(`${table}: updated_ms is not written`)
      const where = key.map((k) => `${k} = ?`).join(' AND ')
      this.existing = db
        .prepare(`SELECT ${['seq', 'updated_ms', ...fts].join(', ')} FROM ${table} WHERE ${where}`)
        .raw()
      // The key stays out of SET: a parent key that is not written needs no foreign-key work.
      this.update = db.prepare(
        `UPDATE ${table} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`,
      )
    }
    if (fts.length > 0) {
      const index = `${table}_fts`
      const marks = fts.map(() => '?').join(', ')
      this.ftsAdd = db.prepare(
        `INSERT INTO ${index} (rowid, ${fts.join(', ')}) VALUES (?, ${marks})`,
      )
      this.ftsDrop = db.prepare(
        `INSERT INTO ${index} (${index}, rowid, ${fts.join(', ')}) VALUES ('delete', ?, ${marks})`,
      )
    } else {
      this.ftsAdd = null
      this.ftsDrop = null
    }
  }

  /**
   * Inserts `row` (key columns, then `columns`), or updates the stored row when it is not
   * newer (by updated_ms), keeping the search index in step. Inserting first makes the common
   * case — a record not seen before — one statement; the stored row is read only on a conflict.
   */
  write(row: unknown[]): WriteResult {
    const inserted = this.insert.run(row)
    if (inserted.changes > 0) {
      if (this.ftsAdd)
        this.ftsAdd.run(
          inserted.lastInsertRowid,
          this.ftsAt.map((at) => row[at]),
        )
      return 'inserted'
    }
    if (!this.existing || !this.update) return 'stale'
    const old = this.existing.get(row.slice(0, this.keyLength)) as unknown[] | undefined
    if (old === undefined) throw new Error('A row conflicted on its key but cannot be read back.')
    const seq = old[0] as number
    if ((row[this.updatedAt] as number) < (old[1] as number)) return 'stale'
    const values = row.slice(this.keyLength)
    values.push(seq)
    this.update.run(values)
    if (this.ftsAdd && this.ftsDrop) {
      const before = old.slice(2)
      const after = this.ftsAt.map((at) => row[at])
      if (before.some((value, i) => value !== after[i])) {
        this.ftsDrop.run(seq, before)
        this.ftsAdd.run(seq, after)
      }
    }
    return 'updated'
  }
}

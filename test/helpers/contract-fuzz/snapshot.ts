import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { SandboxServices } from '../../../src-main/sandbox/services'

/** Every row of the sandbox's database and every file of its blob store, at one moment. */
export interface DataSnapshot {
  /**
   * The database's count of written rows and the blob store's listing: when both are as they
   * were, nothing was written, and the full rows need not be read again.
   */
  stamp: string
  /** `table` → row key → the row as JSON text (every column, blobs as hex). */
  tables: Map<string, Map<string, string>>
  /** Blob store path → size in bytes. */
  files: Map<string, number>
  /** What differs from an earlier snapshot, one line per row or file (at most `limit`). */
  differencesFrom: (earlier: DataSnapshot, limit?: number) => string[]
  /** Writes this snapshot's rows back (the blob store is left as it is). */
  restore: () => void
}

interface Column {
  name: string
  pk: number
}

function listFiles(root: string): Map<string, number> {
  const files = new Map<string, number>()
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) visit(path)
      else files.set(relative(root, path), statSync(path).size)
    }
  }
  visit(root)
  return files
}

/** A row as text: `[column, value]` pairs, a blob as `[column, 'blob', hex]`. */
const rowText = (row: Record<string, unknown>) =>
  JSON.stringify(
    Object.entries(row).map(([column, value]) =>
      Buffer.isBuffer(value) ? [column, 'blob', value.toString('hex')] : [column, value],
    ),
  )

const rowOf = (text: string): [string, unknown][] =>
  (JSON.parse(text) as unknown[][]).map(([column, value, hex]) => [
    String(column),
    value === 'blob' && typeof hex === 'string' ? Buffer.from(hex, 'hex') : value,
  ])

/**
 * A read-only dump of the sandbox's data: every table found in `sqlite_master` (so a table
 * added later is covered too), every column, rows keyed by their primary key and compared as
 * text, plus the blob store's listing. It reads the database the running sandbox writes, through
 * the same connection, so it sees exactly what the service would serve.
 *
 * Given an earlier snapshot whose stamp still holds (SQLite's `total_changes()` of the
 * sandbox's one connection has not moved, and the blob store lists the same files), that
 * snapshot is the answer: no row can differ, and a case then costs no dump at all.
 */
export function snapshotData(services: SandboxServices, earlier?: DataSnapshot): DataSnapshot {
  const db = services.db
  const files = listFiles(join(services.config.dataDir, 'blobs'))
  const written = (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n
  const stamp = `${written} ${JSON.stringify([...files])}`
  if (earlier?.stamp === stamp) return earlier
  const tableNames = (
    db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
      .all() as { name: string }[]
  ).map((row) => row.name)
  const tables = new Map<string, Map<string, string>>()
  const keyColumns = new Map<string, string[]>()
  for (const table of tableNames) {
    const columns = db.prepare(`PRAGMA table_info("${table}")`).all() as Column[]
    const keys = columns
      .filter((column) => column.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((column) => column.name)
    keyColumns.set(table, keys)
    const rows = db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]
    const byKey = new Map<string, string>()
    for (const row of rows) {
      // Without a primary key the whole row is its own key: a changed row reads as one gone, one new.
      const key = keys.length > 0 ? JSON.stringify(keys.map((k) => row[k])) : rowText(row)
      byKey.set(key, rowText(row))
    }
    tables.set(table, byKey)
  }
  const snapshot: DataSnapshot = {
    stamp,
    tables,
    files,
    differencesFrom: (earlier, limit = 8) => {
      const lines: string[] = []
      const note = (line: string) => {
        if (lines.length < limit) lines.push(line)
      }
      for (const name of new Set([...earlier.tables.keys(), ...tables.keys()])) {
        const before = earlier.tables.get(name) ?? new Map<string, string>()
        const after = tables.get(name) ?? new Map<string, string>()
        for (const [key, row] of after) {
          const old = before.get(key)
          if (old === undefined) note(`${name} ${key}: added ${row.slice(0, 300)}`)
          else if (old !== row) note(`${name} ${key}: changed to ${row.slice(0, 300)}`)
        }
        for (const key of before.keys()) if (!after.has(key)) note(`${name} ${key}: removed`)
      }
      for (const [path, size] of files) {
        const old = earlier.files.get(path)
        if (old === undefined) note(`blob store: ${path} added (${size} bytes)`)
        else if (old !== size) note(`blob store: ${path} is now ${size} bytes, was ${old}`)
      }
      for (const path of earlier.files.keys()) {
        if (!files.has(path)) note(`blob store: ${path} removed`)
      }
      return lines
    },
    restore: () => {
      db.transaction(() => {
        // The rows go back as a whole; references between tables hold again at commit.
        db.pragma('defer_foreign_keys = ON')
        for (const [table, rows] of tables) {
          db.prepare(`DELETE FROM "${table}"`).run()
          for (const text of rows.values()) {
            const row = rowOf(text)
            db.prepare(
              `INSERT INTO "${table}" (${row.map(([n]) => `"${n}"`).join(', ')})
               VALUES (${row.map(() => '?').join(', ')})`,
            ).run(...row.map(([, value]) => value))
          }
        }
      })()
    },
  }
  return snapshot
}

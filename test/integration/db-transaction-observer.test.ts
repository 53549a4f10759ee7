import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { openDatabases, type Databases } from '../../src-main/db'
import { observeTransactions, type TransactionTiming } from '../../src-main/db/connection'

const root = mkdtempSync(join(tmpdir(), 'atelier-db-observer-'))
let homes = 0
const open: Databases[] = []
const databases = () => {
  const dbs = openDatabases(join(root, String(++homes)))
  open.push(dbs)
  return dbs
}

afterEach(() => {
  observeTransactions(null)
})

afterAll(() => {
  for (const dbs of open) dbs.close()
  rmSync(root, { recursive: true, force: true })
})

const key = { profile: 'p', orgId: 'org', collection: 'runs' }

/** Databases opened while an observer collects what they report. */
function observed(): { dbs: Databases; seen: TransactionTiming[] } {
  const seen: TransactionTiming[] = []
  observeTransactions((timing) => seen.push(timing))
  return { dbs: databases(), seen }
}

describe('observeTransactions', () => {
  it('leaves connections opened without an observer exactly as better-sqlite3 made them', () => {
    const { mirror, ledger } = databases()
    for (const db of [mirror.db, ledger.db]) {
      expect(Object.hasOwn(db, 'prepare')).toBe(false)
      expect(Object.hasOwn(db, 'transaction')).toBe(false)
      expect(Object.getPrototypeOf(db)).toBe(Database.prototype)
    }
    const seen: TransactionTiming[] = []
    // Set after they opened: they still report nothing.
    observeTransactions((timing) => seen.push(timing))
    mirror.transaction(() => mirror.syncCursors.set({ ...key, updatedAt: 'a', id: '1' }))
    expect(seen).toEqual([])
  })

  it('reports an outer transaction once, named by where it was made, with the nested work in it', () => {
    const { dbs, seen } = observed()
    const { mirror } = dbs
    seen.length = 0
    const writeTwo = () => {
      mirror.transaction(() => {
        mirror.syncCursors.set({ ...key, updatedAt: '2026-01-01T00:00:00Z', id: '1' })
        mirror.syncCursors.set({ ...key, collection: 'assets', updatedAt: null, id: null })
        // A transaction function made elsewhere, nested: a savepoint of this one.
        mirror.applyTombstonePage([])
      })
    }
    writeTwo()
    expect(seen).toHaveLength(1)
    const [outer] = seen
    expect(outer?.kind).toBe('transaction')
    expect(outer?.file).toBe('mirror.sqlite')
    expect(outer?.label).toMatch(/^writeTwo \(.*db-transaction-observer\.test\.ts\)$/)
    expect(outer?.ms).toBeGreaterThanOrEqual(0)
    expect(mirror.syncCursors.list('p', 'org').map((c) => c.collection)).toEqual(['assets', 'runs'])
  })

  it('names a repository-made transaction by the constructor that made it', () => {
    const { dbs, seen } = observed()
    seen.length = 0
    dbs.mirror.applyTombstonePage([])
    expect(seen.map((t) => [t.kind, t.label])).toEqual([
      ['transaction', 'new Mirror (db/stores.ts)'],
    ])
  })

  it('reports statements run outside a transaction with their SQL, reads and writes alike', () => {
    const { dbs, seen } = observed()
    const { mirror } = dbs
    seen.length = 0
    mirror.syncCursors.set({ ...key, updatedAt: 'a', id: '1' })
    expect(mirror.syncCursors.get(key)?.id).toBe('1')
    // `set` writes, then reads the cursor back; `get` reads it: three statements, each its own.
    expect(seen.map((t) => [t.kind, t.file, t.label.split(' ')[0]])).toEqual([
      ['statement', 'mirror.sqlite', 'INSERT'],
      ['statement', 'mirror.sqlite', 'SELECT'],
      ['statement', 'mirror.sqlite', 'SELECT'],
    ])
    expect(seen[0]?.label).toMatch(/^INSERT INTO sync_cursors \(profile, org_id, collection,/)
    expect(seen[2]?.label).toMatch(/^SELECT cursor_updated_at, cursor_id,/)
  })

  it('keeps what a transaction does: the variants, the rollback on a throw, the result', () => {
    const { dbs, seen } = observed()
    const { ledger } = dbs
    seen.length = 0
    const write = ledger.db.transaction((n: number) => {
      ledger.db.prepare('CREATE TABLE IF NOT EXISTS t (n INTEGER) STRICT').run()
      ledger.db.prepare('INSERT INTO t (n) VALUES (?)').run(n)
      if (n < 0) throw new Error('negative')
      return n * 2
    })
    expect(write.immediate(2)).toBe(4)
    expect(write.deferred(3)).toBe(6)
    // As in better-sqlite3, every variant carries the others.
    expect(Reflect.get(write, 'deferred')).toBe(
      Reflect.get(Reflect.get(write, 'immediate'), 'deferred'),
    )
    expect(() => write.exclusive(-1)).toThrow('negative')
    expect(ledger.db.inTransaction).toBe(false)
    expect(ledger.db.prepare('SELECT n FROM t ORDER BY n').pluck().all()).toEqual([2, 3])
    expect(Reflect.get(write, 'database')).toBe(ledger.db)
    const transactions = seen.filter((t) => t.kind === 'transaction')
    expect(transactions).toHaveLength(3)
    expect(transactions.every((t) => t.file === 'ledger.sqlite')).toBe(true)
  })

  it('stops reporting once the observer is taken away', () => {
    const { dbs, seen } = observed()
    seen.length = 0
    observeTransactions(null)
    dbs.mirror.transaction(() => dbs.mirror.syncCursors.set({ ...key, updatedAt: 'b', id: '2' }))
    dbs.mirror.syncCursors.get(key)
    expect(seen).toEqual([])
  })
})

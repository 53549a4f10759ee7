import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench, describe } from 'vitest'
import {
  listRecords,
  type ListOptions,
  type ListScope,
  type Page,
} from '../../src-main/sandbox/list'
import { openSandboxDb } from '../../src-main/sandbox/db'

/**
 * The keyset list engine against an OFFSET-based baseline over the same 100,000 rows of one
 * collection (plus 20,000 rows of another organization). The summary vitest prints ("… x faster
 * than …") is the ratio. Every case has a fixed number of iterations, so the run stays short.
 */

const ROWS = 100_000
const BASE = Date.UTC(2026, 0, 1)
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

const dir = mkdtempSync(join(tmpdir(), 'atelier-sandbox-list-bench-'))
const db = openSandboxDb(join(dir, 'bench.db'))
{
  const insert = db.prepare('INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, NULL, ?)')
  db.transaction(() => {
    for (let i = 0; i < ROWS + 20_000; i++) {
      const org = i < ROWS ? 'org-a' : 'org-b'
      const id = `run-${String(i).padStart(7, '0')}`
      const created = iso(BASE + Math.floor(i / 2) * 1000)
      const updated = iso(BASE + ((i * 7919) % ROWS) * 1000)
      const doc = {
        id,
        created_at: created,
        updated_at: updated,
        status_code: i % 3 ? 'succeeded' : 'failed',
        cost: i % 97,
        name: `Run ${i}`,
      }
      insert.run('runs', id, org, `model-${i % 10}`, created, updated, JSON.stringify(doc))
    }
  })()
  db.pragma('optimize')
}

afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const scope: ListScope = { collection: 'runs', orgId: 'org-a' }
const options: ListOptions = {
  fields: new Set(['id', 'created_at', 'updated_at', 'status_code', 'cost', 'name']),
}

/** The baseline: the same scope and order with LIMIT/OFFSET. */
const offsetStatements = {
  created_at: db.prepare(
    `SELECT id, doc FROM records WHERE collection = ? AND org_id = ? AND deleted_at IS NULL
       ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
  ),
  updated_at: db.prepare(
    `SELECT id, doc FROM records WHERE collection = ? AND org_id = ? AND deleted_at IS NULL
       ORDER BY updated_at ASC, id ASC LIMIT ? OFFSET ?`,
  ),
}

function offsetPage(sort: 'created_at' | 'updated_at', limit: number, offset: number): unknown[] {
  const rows = offsetStatements[sort].all(scope.collection, scope.orgId, limit, offset) as {
    doc: string
  }[]
  return rows.map((row) => JSON.parse(row.doc) as unknown)
}

function keysetWalk(sortBy: string, limit: number): number {
  let seen = 0
  let pq: string | null = null
  for (;;) {
    const page: Page<unknown> = listRecords(db, scope, { sort_by: sortBy, limit, pq }, options)
    seen += page.items.length
    if (page.next === null) break
    pq = page.next
  }
  if (seen !== ROWS) throw new Error(`keyset walk saw ${seen} rows`)
  return seen
}

function offsetWalk(sort: 'created_at', limit: number): number {
  let seen = 0
  for (;;) {
    const items = offsetPage(sort, limit, seen)
    seen += items.length
    if (items.length < limit) break
  }
  if (seen !== ROWS) throw new Error(`offset walk saw ${seen} rows`)
  return seen
}

/** A cursor to the page at a depth, found once by walking there. */
function cursorAt(sortBy: string, depth: number): string {
  let pq: string | null = null
  for (let seen = 0; seen < depth; seen += 500) {
    const page: Page<unknown> = listRecords(db, scope, { sort_by: sortBy, limit: 500, pq }, options)
    if (page.next === null) throw new Error('not that deep')
    pq = page.next
  }
  if (pq === null) throw new Error('no cursor')
  return pq
}

const walk = { time: 0, iterations: 2, warmupTime: 0, warmupIterations: 0 }
const single = { time: 200, iterations: 10, warmupTime: 0, warmupIterations: 2 }

describe('walk all 100,000 rows, 500 per page, created_at:desc', () => {
  bench('keyset (listRecords)', () => void keysetWalk('created_at:desc', 500), walk)
  bench('offset baseline', () => void offsetWalk('created_at', 500), walk)
})

describe('one page of 100 at depth 90,000, created_at:desc', () => {
  const deep = cursorAt('created_at:desc', 90_000)
  bench(
    'keyset (listRecords)',
    () =>
      void listRecords(db, scope, { sort_by: 'created_at:desc', limit: 100, pq: deep }, options),
    single,
  )
  bench('offset baseline', () => void offsetPage('created_at', 100, 90_000), single)
})

describe('one page of 100 at depth 90,000, updated_at:asc', () => {
  const deep = cursorAt('updated_at:asc', 90_000)
  bench(
    'keyset (listRecords)',
    () => void listRecords(db, scope, { sort_by: 'updated_at:asc', limit: 100, pq: deep }, options),
    single,
  )
  bench('offset baseline', () => void offsetPage('updated_at', 100, 90_000), single)
})

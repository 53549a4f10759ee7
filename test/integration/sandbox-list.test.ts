import type Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ListError,
  listRecords,
  type ListOptions,
  type ListParams,
  type ListScope,
  type Page,
} from '../../src-main/sandbox/list'
import { openSandboxDb } from '../../src-main/sandbox/db'

interface Doc {
  id: string
  created_at: string
  updated_at: string
  [key: string]: unknown
}

const dir = mkdtempSync(join(tmpdir(), 'atelier-sandbox-list-'))
let db: Database.Database

const BASE = Date.UTC(2026, 0, 1)
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

function insert(
  collection: string,
  doc: Doc,
  orgId: string | null = 'org-a',
  parentId: string | null = null,
  deletedAt: string | null = null,
) {
  db.prepare('INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
    collection,
    doc.id,
    orgId,
    parentId,
    doc.created_at,
    doc.updated_at,
    deletedAt,
    JSON.stringify(doc),
  )
}

const list = (scope: ListScope, params: ListParams, options: ListOptions) =>
  listRecords<Doc>(db, scope, params, options)

const ids = (page: Page<Doc>) => page.items.map((item) => item.id)

/** The ListError a call throws. */
function refusal(call: () => unknown): ListError {
  try {
    call()
  } catch (error) {
    expect(error).toBeInstanceOf(ListError)
    return error as ListError
  }
  throw new Error('expected a ListError')
}

/** Follows `next` from the first page; the pages' ids and the last page. */
function walkForward(scope: ListScope, params: ListParams, options: ListOptions) {
  const pages: string[][] = []
  let page = list(scope, params, options)
  expect(page.previous).toBeNull()
  for (;;) {
    pages.push(ids(page))
    if (page.next === null) return { pages, last: page }
    expect(pages.length).toBeLessThan(1000)
    page = list(scope, { ...params, pq: page.next }, options)
  }
}

/** Follows `previous` with from_prev=true from a page; the pages' ids, nearest first. */
function walkBackward(
  from: Page<Doc>,
  scope: ListScope,
  params: ListParams,
  options: ListOptions,
): string[][] {
  const pages: string[][] = []
  let previous = from.previous
  while (previous !== null) {
    const page = list(scope, { ...params, pq: previous, from_prev: true }, options)
    pages.push(ids(page))
    previous = page.previous
    expect(pages.length).toBeLessThan(1000)
  }
  return pages
}

/** SQLite's order: NULL first, numbers before text, then by id; `desc` reverses it all. */
function compareKeys(x: unknown, y: unknown): number {
  const a = x ?? null
  const b = y ?? null
  if (a === b) return 0
  if (a === null) return -1
  if (b === null) return 1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'number') return -1
  if (typeof b === 'number') return 1
  if (typeof a !== 'string' || typeof b !== 'string') throw new Error('unexpected sort value')
  return a < b ? -1 : 1
}

function expectedOrder(docs: readonly Doc[], field: string, dir: 'asc' | 'desc'): string[] {
  const sign = dir === 'asc' ? 1 : -1
  return [...docs]
    .sort(
      (a, b) =>
        sign * (compareKeys(a[field], b[field]) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    )
    .map((doc) => doc.id)
}

beforeAll(() => {
  // The sandbox's own schema, so these tests see exactly the table the server lists from.
  db = openSandboxDb(join(dir, 'sandbox.db'))
})

afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('paging through 1,234 rows', () => {
  const scope: ListScope = { collection: 'runs', orgId: 'org-a' }
  const options: ListOptions = {
    fields: new Set(['id', 'created_at', 'updated_at', 'score', 'name']),
  }
  const docs: Doc[] = []

  beforeAll(() => {
    db.transaction(() => {
      for (let i = 0; i < 1234; i++) {
        const doc: Doc = {
          // Ids in another order than creation, so ties show the id tie-break.
          id: `run-${String((i * 7919) % 1234).padStart(4, '0')}`,
          // Three rows per millisecond: ties on created_at too.
          created_at: iso(BASE + Math.floor(i / 3)),
          updated_at: iso(BASE + 10_000_000 + ((i * 389) % 1234) * 1000),
          // Ties, nulls (explicit and missing), integers and reals.
          score: i % 5 === 0 ? null : ((i * 7) % 13) / (i % 2 ? 1 : 2),
          name: `Run ${i}`,
        }
        if (i % 10 === 5) delete doc.score
        docs.push(doc)
        insert('runs', doc)
      }
    })()
  })

  it.each([
    ['created_at', 'asc'],
    ['created_at', 'desc'],
    ['updated_at', 'asc'],
    ['updated_at', 'desc'],
    ['score', 'asc'],
    ['score', 'desc'],
    ['id', 'asc'],
  ] as const)('by %s %s, forward and back', (field, dir) => {
    const params: ListParams = { limit: 100, sort_by: `${field}:${dir}` }
    const { pages, last } = walkForward(scope, params, options)
    expect(pages).toHaveLength(13)
    expect(pages.slice(0, -1).every((page) => page.length === 100)).toBe(true)
    expect(pages.flat()).toEqual(expectedOrder(docs, field, dir))

    const back = walkBackward(last, scope, params, options)
    expect(back).toEqual(pages.slice(0, -1).reverse())
  })

  it('uses created_at:desc and a limit of 50 by default', () => {
    const page = list(scope, {}, options)
    expect(ids(page)).toEqual(expectedOrder(docs, 'created_at', 'desc').slice(0, 50))
    const custom = list(scope, {}, { ...options, defaultSort: 'score:asc', defaultLimit: 7 })
    expect(ids(custom)).toEqual(expectedOrder(docs, 'score', 'asc').slice(0, 7))
  })

  it('gives first always, previous only after the first page', () => {
    const params: ListParams = { limit: 100, sort_by: 'created_at:asc' }
    const one = list(scope, params, options)
    expect(one.first).toEqual(expect.any(String))
    expect(one.previous).toBeNull()
    const two = list(scope, { ...params, pq: one.next }, options)
    expect(two.previous).not.toBeNull()
    expect(ids(list(scope, { ...params, pq: two.first }, options))).toEqual(ids(one))
    // A previous cursor reads backward by itself; from_prev is optional for it.
    expect(ids(list(scope, { ...params, pq: two.previous }, options))).toEqual(ids(one))
    // from_prev on a next cursor reads the page that next came from.
    expect(ids(list(scope, { ...params, pq: one.next, from_prev: true }, options))).toEqual(
      ids(one),
    )
    // from_prev on first: nothing before the start, but a way back to the rows.
    const before = list(scope, { ...params, pq: one.first, from_prev: true }, options)
    expect(before.items).toEqual([])
    expect(before.previous).toBeNull()
    expect(ids(list(scope, { ...params, pq: before.next }, options))).toEqual(ids(one))
  })

  it('reads the last page with from_prev and no cursor', () => {
    const params: ListParams = { limit: 100, sort_by: 'created_at:asc' }
    const last = list(scope, { ...params, from_prev: true }, options)
    expect(ids(last)).toEqual(expectedOrder(docs, 'created_at', 'asc').slice(-100))
    expect(last.next).toBeNull()
    expect(last.previous).not.toBeNull()
  })

  it('keeps an empty page anchored so its cursors lead back', () => {
    const tiny: ListScope = { collection: 'tiny', orgId: 'org-a' }
    for (let i = 0; i < 6; i++) {
      insert('tiny', { id: `t${i}`, created_at: iso(BASE + i), updated_at: iso(BASE + i) })
    }
    const params: ListParams = { limit: 3, sort_by: 'created_at:asc' }
    const one = list(tiny, params, options)
    expect(ids(one)).toEqual(['t0', 't1', 't2'])
    db.prepare(`UPDATE records SET deleted_at = ? WHERE collection = 'tiny' AND id >= 't3'`).run(
      iso(BASE),
    )
    const empty = list(tiny, { ...params, pq: one.next }, options)
    expect(empty.items).toEqual([])
    expect(empty.next).toBeNull()
    expect(ids(list(tiny, { ...params, pq: empty.previous }, options))).toEqual(ids(one))

    const none = list({ collection: 'nothing', orgId: 'org-a' }, params, options)
    expect(none).toMatchObject({ items: [], next: null, previous: null })
    expect(typeof none.first).toBe('string')
  })

  it('stays put when the boundary row is deleted', () => {
    const params: ListParams = { limit: 100, sort_by: 'score:desc' }
    const one = list(scope, params, options)
    const two = list(scope, { ...params, pq: one.next }, options)
    const boundary = one.items.at(-1)?.id
    db.prepare(`UPDATE records SET deleted_at = ? WHERE collection = 'runs' AND id = ?`).run(
      iso(BASE),
      boundary,
    )
    try {
      expect(ids(list(scope, { ...params, pq: one.next }, options))).toEqual(ids(two))
    } finally {
      db.prepare(`UPDATE records SET deleted_at = NULL WHERE collection = 'runs' AND id = ?`).run(
        boundary,
      )
    }
  })
})

describe('paging while rows are inserted', () => {
  const options: ListOptions = { fields: new Set(['id', 'created_at', 'updated_at']) }

  it.each(['asc', 'desc'] as const)(
    'by created_at %s: no duplicate and no gap among the rows that existed',
    (dir) => {
      const collection = `jobs_${dir}`
      const scope: ListScope = { collection, orgId: 'org-a' }
      const original: string[] = []
      for (let i = 0; i < 300; i++) {
        const id = `job-${String(i).padStart(4, '0')}`
        original.push(id)
        insert(collection, { id, created_at: iso(BASE + i), updated_at: iso(BASE + i) })
      }
      let fresh = 0
      const addAt = (ms: number) => {
        const id = `new-${String(fresh++).padStart(4, '0')}`
        insert(collection, { id, created_at: iso(ms), updated_at: iso(ms) })
        return id
      }
      const params: ListParams = { limit: 50, sort_by: `created_at:${dir}` }
      const seen: string[] = []
      const atTheEnd: string[] = []
      let page = list(scope, params, options)
      for (;;) {
        seen.push(...ids(page))
        // At the end and at the start of the order, and a tie with the first original row.
        const later = dir === 'asc' ? BASE + 10_000 + fresh : BASE - 10_000 - fresh
        const earlier = dir === 'asc' ? BASE - 10_000 - fresh : BASE + 10_000 + fresh
        atTheEnd.push(addAt(later))
        addAt(earlier)
        addAt(dir === 'asc' ? BASE : BASE + 299)
        if (page.next === null) break
        page = list(scope, { ...params, pq: page.next }, options)
        expect(seen.length).toBeLessThan(1000)
      }
      expect(new Set(seen).size).toBe(seen.length)
      expect(seen.filter((id) => id.startsWith('job-')).sort()).toEqual(original)
      // Rows added past the boundary show up on later pages (all but the very last one).
      expect(atTheEnd.slice(0, -1).every((id) => seen.includes(id))).toBe(true)
    },
  )
})

describe('q filters', () => {
  const scope: ListScope = { collection: 'assets', orgId: 'org-a' }
  const options: ListOptions = {
    fields: new Set(['id', 'created_at', 'updated_at', 'name', 'status', 'size', 'public', 'note']),
  }
  const docs: Doc[] = [
    { id: 'a1', name: 'Red Fox', status: 'ready', size: 10, public: true, note: null },
    { id: 'a2', name: 'blue 100% cotton', status: 'failed', size: 2, public: false, note: 'x' },
    { id: 'a3', name: 'under_score', status: 'pending', size: 100, public: true, note: 'y' },
    { id: 'a4', name: 'RED FOXES', status: 'ready', size: 9.5, public: false, note: null },
    { id: 'a5', name: 'Élan "vital"', status: 'ready', size: 7, public: false },
  ].map((doc, i) => {
    const at = iso(BASE - 3_600_000 + i * 3_600_000)
    return { ...doc, created_at: at, updated_at: at }
  })

  beforeAll(() => {
    for (const doc of docs) insert('assets', doc)
  })

  const matching = (q: string) => ids(list(scope, { q, sort_by: 'id:asc' }, options)).join(',')

  it('filters by equality and any-of', () => {
    expect(matching('status=ready')).toBe('a1,a4,a5')
    expect(matching('status=ready|failed')).toBe('a1,a2,a4,a5')
    expect(matching('status="ready"|"pending"')).toBe('a1,a3,a4,a5')
    expect(matching('status!=ready')).toBe('a2,a3')
    expect(matching('name="Élan \\"vital\\""')).toBe('a5')
    expect(matching('id=a2|a3')).toBe('a2,a3')
    expect(matching('status=ready and size>=9.5')).toBe('a1,a4')
    expect(matching('status=nope')).toBe('')
  })

  it('compares date-times as instants, whatever the offset', () => {
    // a2 was created at exactly 2026-01-01T00:00:00.000+00:00.
    expect(matching('created_at>=2026-01-01T00:00:00Z')).toBe('a2,a3,a4,a5')
    expect(matching('created_at>2026-01-01T00:00:00Z')).toBe('a3,a4,a5')
    expect(matching('created_at=2026-01-01T00:00:00.000Z')).toBe('a2')
    expect(matching('created_at<2026-01-01T01:00:00+01:00')).toBe('a1')
    expect(matching('created_at<=2025-12-31T19:00:00-05:00')).toBe('a1,a2')
    expect(matching('updated_at>=2026-01-01T02:00:00+00:00 and updated_at<2026-01-01T03:00')).toBe(
      'a4',
    )
    expect(refusal(() => matching('created_at>2026-02-30T00:00:00Z')).message).toMatch(
      /`2026-02-30T00:00:00Z` is not a valid date-time \(no such day\)/,
    )
  })

  it('matches ~ as a case-insensitive contains with % and _ literal', () => {
    expect(matching('name~fox')).toBe('a1,a4')
    expect(matching('name~"red fox"')).toBe('a1,a4')
    expect(matching('name~"100%"')).toBe('a2')
    expect(matching('name~%')).toBe('a2')
    expect(matching('name~_')).toBe('a3')
    expect(matching('name~ÉLAN')).toBe('a5')
    expect(matching('name~"\\"vital"')).toBe('a5')
  })

  it('compares json numbers numerically', () => {
    expect(matching('size>9')).toBe('a1,a3,a4')
    expect(matching('size<=2')).toBe('a2')
    expect(matching('size=10')).toBe('a1')
    expect(matching('size=10.0')).toBe('a1')
    expect(matching('size=1e1|7')).toBe('a1,a5')
    expect(matching('size>=7 and size<10')).toBe('a4,a5')
    expect(matching('size!=2')).toBe('a1,a3,a4,a5')
  })

  it('compares booleans', () => {
    expect(matching('public=true')).toBe('a1,a3')
    expect(matching('public=false')).toBe('a2,a4,a5')
    expect(matching('public!=true')).toBe('a2,a4,a5')
  })

  it('tests for null with =null and !=null (a missing field is null)', () => {
    expect(matching('note=null')).toBe('a1,a4,a5')
    expect(matching('note!=null')).toBe('a2,a3')
    expect(matching('note=null|x')).toBe('a1,a2,a4,a5')
    expect(matching('note="null"')).toBe('')
    expect(matching('note!=x')).toBe('a1,a3,a4,a5')
  })
})

describe('scope', () => {
  const options: ListOptions = { fields: new Set(['id', 'created_at', 'updated_at', 'name']) }
  const at = (i: number) => ({ created_at: iso(BASE + i * 1000), updated_at: iso(BASE + i * 1000) })

  beforeAll(() => {
    db.transaction(() => {
      for (let i = 0; i < 30; i++) insert('models', { id: `a-${i}`, ...at(i) }, 'org-a')
      for (let i = 0; i < 25; i++) insert('models', { id: `g-${i}`, ...at(i * 2 + 1) }, null)
      for (let i = 0; i < 20; i++) insert('models', { id: `b-${i}`, ...at(i) }, 'org-b')
      insert('models', { id: 'a-deleted', ...at(99) }, 'org-a', null, iso(BASE))
      for (let i = 0; i < 6; i++) {
        insert('versions', { id: `v-${i}`, ...at(i) }, 'org-a', i % 2 ? 'model-1' : 'model-2')
      }
      insert('versions', { id: 'v-b', ...at(9) }, 'org-b', 'model-1')
    })()
  })

  it('never lists the rows of another organization', () => {
    const { pages } = walkForward({ collection: 'models', orgId: 'org-a' }, { limit: 7 }, options)
    const seen = pages.flat()
    expect(seen).toHaveLength(30)
    expect(seen.every((id) => id.startsWith('a-'))).toBe(true)
    expect(ids(list({ collection: 'models', orgId: 'org-a' }, { q: 'id=b-1' }, options))).toEqual(
      [],
    )
    const other = ids(list({ collection: 'models', orgId: 'org-b' }, { limit: 500 }, options))
    expect(other).toHaveLength(20)
    expect(other.every((id) => id.startsWith('b-'))).toBe(true)
  })

  it('adds the global rows only with includeGlobal, in order, forward and back', () => {
    const scope: ListScope = { collection: 'models', orgId: 'org-a', includeGlobal: true }
    const params: ListParams = { limit: 7, sort_by: 'created_at:asc' }
    const { pages, last } = walkForward(scope, params, options)
    const seen = pages.flat()
    expect(seen).toHaveLength(55)
    expect(new Set(seen).size).toBe(55)
    expect(seen.some((id) => id.startsWith('g-'))).toBe(true)
    expect(seen.some((id) => id.startsWith('b-'))).toBe(false)
    const rows = db
      .prepare(
        `SELECT id FROM records WHERE collection = 'models' AND (org_id = 'org-a' OR org_id IS NULL)
           AND deleted_at IS NULL ORDER BY created_at, id`,
      )
      .all() as { id: string }[]
    expect(seen).toEqual(rows.map((row) => row.id))
    expect(walkBackward(last, scope, params, options)).toEqual(pages.slice(0, -1).reverse())
  })

  it('hides soft-deleted rows', () => {
    const seen = ids(list({ collection: 'models', orgId: 'org-a' }, { limit: 500 }, options))
    expect(seen).not.toContain('a-deleted')
    expect(
      ids(list({ collection: 'models', orgId: 'org-a' }, { q: 'id=a-deleted' }, options)),
    ).toEqual([])
  })

  it('filters by parent, with `any` and omitted meaning every parent', () => {
    const versions = (parentId?: string) =>
      ids(
        list({ collection: 'versions', orgId: 'org-a', parentId }, { sort_by: 'id:asc' }, options),
      )
    expect(versions('model-1')).toEqual(['v-1', 'v-3', 'v-5'])
    expect(versions('model-2')).toEqual(['v-0', 'v-2', 'v-4'])
    expect(versions('any')).toEqual(['v-0', 'v-1', 'v-2', 'v-3', 'v-4', 'v-5'])
    expect(versions()).toEqual(versions('any'))
    expect(versions('model-3')).toEqual([])
  })

  it('applies the handler-specific condition', () => {
    const scope: ListScope = {
      collection: 'models',
      orgId: 'org-a',
      extraWhere: { sql: `json_extract(doc, '$.id') IN (?, ?)`, args: ['a-3', 'a-4'] },
    }
    expect(ids(list(scope, { sort_by: 'id:asc' }, options))).toEqual(['a-3', 'a-4'])
  })
})

describe('projection and errors', () => {
  const scope: ListScope = { collection: 'assets', orgId: 'org-a' }
  const options: ListOptions = {
    fields: new Set(['id', 'created_at', 'updated_at', 'name', 'status', 'size']),
  }

  it('returns only the requested fields, and always id', () => {
    const page = list(scope, { fields: 'size,name', sort_by: 'id:asc', limit: 2 }, options)
    expect(page.items).toEqual([
      { id: 'a1', name: 'Red Fox', size: 10 },
      { id: 'a2', name: 'blue 100% cotton', size: 2 },
    ])
    // A cursor stays valid when the projection changes.
    expect(ids(list(scope, { sort_by: 'id:asc', limit: 2, pq: page.next }, options))).toEqual([
      'a3',
      'a4',
    ])
    const error = refusal(() => list(scope, { fields: 'name,secret' }, options))
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST' })
    expect(error.message).toMatch(
      /fields: unknown field `secret`; fields you can use: created_at, id,/,
    )
    expect(refusal(() => list(scope, { fields: 'name,,size' }, options)).message).toMatch(
      /empty name/,
    )
  })

  it('refuses a field that is not listable in q', () => {
    const error = refusal(() => list(scope, { q: 'status=ready and colour=red' }, options))
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST', errors: null })
    expect(error.message).toBe(
      'q clause `colour=red`: unknown field `colour`; fields you can use: created_at, id, name, size, status, updated_at.',
    )
    // A field of the record that the handler does not list is refused too.
    expect(refusal(() => list(scope, { q: 'public=true' }, options)).message).toMatch(
      /unknown field `public`/,
    )
  })

  it('refuses a bad operator', () => {
    const error = refusal(() => list(scope, { q: 'size=>3' }, options))
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST' })
    expect(error.message).toMatch(/unknown operator `=>`; allowed operators: = != > >= < <= ~/)
  })

  it.each([
    ['name:up', /sort_by `name:up` is not `field:asc` or `field:desc`/],
    ['name', /sort_by `name` is not `field:asc`/],
    ['colour:asc', /sort_by: unknown field `colour`; fields you can use: created_at, id/],
    ['Name:asc', /unknown field `Name`/],
  ])('refuses sort_by=%s', (sortBy, message) => {
    const error = refusal(() => list(scope, { sort_by: sortBy }, options))
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST' })
    expect(error.message).toMatch(message)
  })

  it.each([0, 501, 2.5, -1])('refuses limit=%s with a 422', (limit) => {
    const error = refusal(() => list(scope, { limit }, options))
    expect(error).toMatchObject({ status: 422, code: 'VALIDATION_FAILED' })
    expect(error.errors).toEqual([
      {
        field: 'limit',
        code: 'out_of_range',
        message: `limit must be an integer from 1 to 500; got ${limit}.`,
      },
    ])
  })

  it('accepts limits 1 and 500', () => {
    expect(list(scope, { limit: 1 }, options).items).toHaveLength(1)
    expect(list(scope, { limit: 500 }, options).items).toHaveLength(5)
  })

  it('refuses a cursor reused with another q, sort or list', () => {
    const page = list(scope, { q: 'status=ready', limit: 1 }, options)
    expect(page.next).not.toBeNull()
    const withQ = refusal(() => list(scope, { q: 'status=failed', pq: page.next }, options))
    expect(withQ).toMatchObject({ status: 400, code: 'BAD_REQUEST' })
    expect(withQ.message).toMatch(/^this cursor belongs to another query/)
    expect(refusal(() => list(scope, { pq: page.next }, options)).message).toMatch(
      /^this cursor belongs to another query/,
    )
    const withSort = refusal(() =>
      list(scope, { q: 'status=ready', sort_by: 'size:asc', pq: page.next }, options),
    )
    expect(withSort.message).toMatch(
      /^this cursor belongs to another query: it was made for sort_by=created_at:desc, not size:asc/,
    )
    const elsewhere = refusal(() =>
      list({ ...scope, orgId: 'org-b' }, { q: 'status=ready', pq: page.next }, options),
    )
    expect(elsewhere.message).toMatch(/^this cursor belongs to another query/)
    // The same q (even spaced differently) and sort is fine.
    expect(
      list(scope, { q: ' status=ready ', pq: page.next, limit: 1 }, options).items,
    ).toHaveLength(1)
  })

  it.each([
    ['garbage', '!!!not a cursor!!!'],
    ['base64 of garbage', Buffer.from('hello').toString('base64url')],
    ['base64 of the wrong JSON', Buffer.from('{"v":1,"s":"x"}').toString('base64url')],
    [
      'a key of the wrong type',
      Buffer.from('{"v":1,"s":"created_at:desc","h":"x","p":"a","k":[{},"a"],"d":"f"}').toString(
        'base64url',
      ),
    ],
    ['a huge string', 'A'.repeat(20_000)],
  ])('refuses a cursor that is %s', (_name, pq) => {
    const error = refusal(() => list(scope, { pq }, options))
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST' })
    expect(error.message).toMatch(
      /^pq is not a valid cursor; pass back one of the first, next or previous values/,
    )
  })
})

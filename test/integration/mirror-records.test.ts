import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabases, type Databases } from '../../src-main/db'

/**
 * The mirror's one table for the collections registered with `mirrored()` (mirror step 4):
 * real SQLite in a temp folder, through the repository and the tombstone path the sync uses.
 */

const root = mkdtempSync(join(tmpdir(), 'atelier-records-'))
const open: Databases[] = []
afterAll(() => {
  for (const dbs of open) dbs.close()
  rmSync(root, { recursive: true, force: true })
})

function databases(): Databases {
  const dbs = openDatabases(mkdtempSync(join(root, 'home-')))
  open.push(dbs)
  return dbs
}

const ORG = 'org-a'
const OTHER = 'org-b'
const batches = { collection: 'batches', orgId: ORG }

function batch(n: number, over: Record<string, unknown> = {}) {
  const at = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString()
  return { id: `b${String(n).padStart(3, '0')}`, created_at: at, updated_at: at, n, ...over }
}

describe('mirrored records', () => {
  it('lists a collection newest first, a keyset page at a time, without repeats or gaps', () => {
    const { mirror } = databases()
    const written = mirror.records.upsertPage(
      batches,
      Array.from({ length: 7 }, (_, i) => batch(i)),
    )
    expect(written).toBe(7)
    const seen: string[] = []
    let after: string | null = null
    for (let page = 0; page < 10; page++) {
      const listed = mirror.records.list(batches, { limit: 3, after })
      seen.push(...listed.items.map((item) => (item as { id: string }).id))
      after = listed.next
      if (after === null) break
    }
    expect(seen).toEqual(['b006', 'b005', 'b004', 'b003', 'b002', 'b001', 'b000'])
    expect(mirror.records.count(batches)).toBe(7)
    expect(() => mirror.records.list(batches, { after: 'not-a-cursor' })).toThrow(
      /not a cursor of this list/,
    )
  })

  it('keeps the newer copy, and leaves out records it cannot key', () => {
    const { mirror } = databases()
    mirror.records.upsertPage(batches, [batch(1, { updated_at: '2026-02-01T00:00:00Z', v: 2 })])
    // An older copy arriving late does not replace it; a newer one does.
    expect(
      mirror.records.upsertPage(batches, [batch(1, { updated_at: '2026-01-15T00:00:00Z', v: 1 })]),
    ).toBe(0)
    expect(mirror.records.get(batches, 'b001')).toMatchObject({ v: 2 })
    mirror.records.upsertPage(batches, [batch(1, { updated_at: '2026-03-01T00:00:00Z', v: 3 })])
    expect(mirror.records.get(batches, 'b001')).toMatchObject({ v: 3 })
    expect(mirror.records.upsertPage(batches, [{ id: 'no-time' }, { updated_at: 'x' }])).toBe(0)
    // One that comes back deleted is removed.
    mirror.records.upsertPage(batches, [
      batch(1, { updated_at: '2026-04-01T00:00:00Z', deleted_at: '2026-04-01T00:00:00Z' }),
    ])
    expect(mirror.records.get(batches, 'b001')).toBeNull()
  })

  it("keeps each organization's view and each collection apart", () => {
    const { mirror } = databases()
    mirror.records.upsertPage(batches, [batch(1), batch(2)])
    mirror.records.upsertPage({ collection: 'batches', orgId: OTHER }, [batch(2), batch(3)])
    mirror.records.upsertPage({ collection: 'webhooks', orgId: ORG }, [batch(9)])
    const ids = (orgId: string, collection = 'batches') =>
      mirror.records.list({ collection, orgId }).items.map((item) => (item as { id: string }).id)
    expect(ids(ORG)).toEqual(['b002', 'b001'])
    expect(ids(OTHER)).toEqual(['b003', 'b002'])
    expect(ids(ORG, 'webhooks')).toEqual(['b009'])
    expect(mirror.records.get({ collection: 'batches', orgId: OTHER }, 'b001')).toBeNull()

    // retainOnly drops the rest of one organization's view of one collection, nothing else.
    expect(mirror.records.retainOnly(batches, ['b002'])).toBe(1)
    expect(ids(ORG)).toEqual(['b002'])
    expect(ids(OTHER)).toEqual(['b003', 'b002'])
    expect(ids(ORG, 'webhooks')).toEqual(['b009'])
  })

  it('removes what a tombstone names from every view of its collection, in one page', () => {
    const { mirror } = databases()
    mirror.records.upsertPage(batches, [batch(1), batch(2)])
    mirror.records.upsertPage({ collection: 'batches', orgId: OTHER }, [batch(2)])
    mirror.records.upsertPage({ collection: 'webhooks', orgId: ORG }, [batch(2)])
    const removed = mirror.applyTombstonePage([
      {
        id: 't1',
        collection: 'batches',
        record_id: 'b002',
        deleted_at: '2026-05-01T00:00:00Z',
      },
    ])
    expect(removed).toBe(2)
    expect(mirror.records.get(batches, 'b002')).toBeNull()
    expect(mirror.records.get({ collection: 'batches', orgId: OTHER }, 'b002')).toBeNull()
    expect(mirror.records.get(batches, 'b001')).not.toBeNull()
    // A tombstone of another collection leaves a record with the same id alone.
    expect(mirror.records.get({ collection: 'webhooks', orgId: ORG }, 'b002')).not.toBeNull()
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  LEDGER_FILE,
  LEDGER_MIGRATIONS,
  migrate,
  openConnection,
  openDatabases,
  schemaVersion,
  type Databases,
} from '../../src-main/db'

const root = mkdtempSync(join(tmpdir(), 'atelier-outbox-ledger-'))
const open: Databases[] = []
let count = 0

function databases(clock: () => number): Databases {
  const dbs = openDatabases(join(root, `home-${++count}`), { clock })
  open.push(dbs)
  return dbs
}

afterAll(() => {
  for (const dbs of open) dbs.close()
  rmSync(root, { recursive: true, force: true })
})

describe('ledger step 3: outbox answers', () => {
  it('adds the columns to a file at step 2 and keeps its entries', () => {
    const file = join(root, LEDGER_FILE)
    const db = openConnection(file, 'FULL')
    try {
      migrate(db, LEDGER_MIGRATIONS, file, 2)
      db.prepare(
        `INSERT INTO outbox (profile, org_id, kind, payload, idempotency_key, created_ms, updated_ms)
         VALUES ('p', 'o', 'folder.create', '{}', 'k1', 0, 0)`,
      ).run()
      migrate(db, LEDGER_MIGRATIONS, file, 3)
      expect(schemaVersion(db)).toBe(3)
      expect(
        db
          .prepare(
            'SELECT kind, last_error_code, placeholder_id, result_id, result_updated_at FROM outbox',
          )
          .all(),
      ).toEqual([
        {
          kind: 'folder.create',
          last_error_code: null,
          placeholder_id: null,
          result_id: null,
          result_updated_at: null,
        },
      ])
      // One create per placeholder: two would make the placeholder mean two folders.
      const withPlaceholder = db.prepare(
        `INSERT INTO outbox (profile, org_id, kind, payload, idempotency_key, created_ms,
           updated_ms, placeholder_id) VALUES ('p', 'o', 'folder.create', '{}', ?, 0, 0, 'local:x')`,
      )
      withPlaceholder.run('k2')
      expect(() => withPlaceholder.run('k3')).toThrow(/UNIQUE/)
    } finally {
      db.close()
    }
  })
})

describe('the outbox repository, for replay', () => {
  const scope = { profile: 'default', orgId: 'org-1' }

  it('keeps the answer of a sent create and moves the writes about its placeholder to the id', () => {
    let now = 1
    const { ledger } = databases(() => now++)
    const create = ledger.outbox.enqueue({
      ...scope,
      kind: 'folder.create',
      subjectId: 'local:a',
      placeholderId: 'local:a',
      payload: { name: 'Picks' },
    })
    const rename = ledger.outbox.enqueue({
      ...scope,
      kind: 'folder.rename',
      subjectId: 'local:a',
      payload: { name: 'Picks, sorted' },
    })
    expect(ledger.outbox.withPlaceholder('local:a')?.seq).toBe(create.seq)
    expect(ledger.outbox.withPlaceholder('local:b')).toBeNull()
    expect(ledger.outbox.countPending(scope)).toBe(2)
    expect(ledger.outbox.pendingScopes()).toEqual([scope])

    expect(
      ledger.outbox.markSent(create.seq, { id: 'f-1', updatedAt: '2026-01-01T00:00:00Z' }),
    ).toBe(true)
    expect(ledger.outbox.get(create.seq)).toMatchObject({
      state: 'sent',
      resultId: 'f-1',
      resultUpdatedAt: '2026-01-01T00:00:00Z',
      // The create keeps its own subject: it is the history of the placeholder.
      subjectId: 'local:a',
    })
    expect(ledger.outbox.get(rename.seq)?.subjectId).toBe('f-1')
    expect(ledger.outbox.forSubject('f-1').map((e) => e.seq)).toEqual([rename.seq])
    // A late second answer changes nothing.
    expect(ledger.outbox.markSent(create.seq, { id: 'f-2' })).toBe(false)
    expect(ledger.outbox.get(create.seq)?.resultId).toBe('f-1')
  })

  it('records codes, counts only real attempts, and discards refused entries only', () => {
    const { ledger } = databases(() => 5)
    const a = ledger.outbox.enqueue({ ...scope, kind: 'asset.move', payload: {} })
    const b = ledger.outbox.enqueue({ ...scope, kind: 'asset.move', payload: {} })
    expect(ledger.outbox.noteFailure(a.seq, 'offline', 'NETWORK_ERROR')).toBe(true)
    expect(ledger.outbox.get(a.seq)).toMatchObject({
      attempts: 1,
      lastError: 'offline',
      lastErrorCode: 'NETWORK_ERROR',
    })
    expect(ledger.outbox.markRejected(a.seq, 'no such asset', { code: 'NOT_FOUND' })).toBe(true)
    expect(ledger.outbox.get(a.seq)).toMatchObject({ attempts: 2, lastErrorCode: 'NOT_FOUND' })
    // Refused here because of another write: no request was made.
    ledger.outbox.markRejected(b.seq, 'depends on #1', { code: 'DEPENDENCY_REJECTED', sent: false })
    expect(ledger.outbox.get(b.seq)).toMatchObject({ state: 'rejected', attempts: 0 })

    const c = ledger.outbox.enqueue({ ...scope, kind: 'asset.move', payload: {} })
    expect(ledger.outbox.discard(c.seq)).toBe(false)
    ledger.outbox.markSent(c.seq)
    expect(ledger.outbox.discard(c.seq)).toBe(false)
    expect(ledger.outbox.discard(a.seq)).toBe(true)
    expect(ledger.outbox.get(a.seq)).toBeNull()
    expect(ledger.outbox.pendingScopes()).toEqual([])
  })
})

import { afterEach, describe, expect, it } from 'vitest'
import { BlobStore } from '../../src-main/sandbox/blobs'
import { openSandboxDb, type SandboxDb } from '../../src-main/sandbox/db'
import { SandboxError } from '../../src-main/sandbox/errors'
import { BulkIds, MonotonicIds } from '../../src-main/sandbox/runs/ids'
import {
  canonicalJson,
  fingerprintOf,
  IdempotencyKeys,
} from '../../src-main/sandbox/runs/idempotency'
import { presentRun, withUrls } from '../../src-main/sandbox/runs/present'
import { modelStats } from '../../src-main/sandbox/runs/stats'
import type { StoredRun } from '../../src-main/sandbox/runs/types'
import type { SandboxServices } from '../../src-main/sandbox/services'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const SHA = 'a'.repeat(64)

let db: SandboxDb | undefined
const memoryDb = () => {
  db = openSandboxDb(':memory:')
  return db
}
afterEach(() => {
  db?.close()
  db = undefined
})

describe('canonical JSON and request fingerprints', () => {
  it('ignores key order at every level but keeps array order', () => {
    const a = { b: [1, { y: 2, x: 1 }], a: 'é', c: null }
    const b = { c: null, a: 'é', b: [1, { x: 1, y: 2 }] }
    expect(canonicalJson(a)).toBe(canonicalJson(b))
    expect(canonicalJson(a)).toBe('{"a":"é","b":[1,{"x":1,"y":2}],"c":null}')
    expect(fingerprintOf(a)).toBe(fingerprintOf(b))
    expect(fingerprintOf({ b: [{ x: 1, y: 2 }, 1] })).not.toBe(fingerprintOf({ b: [1, { x: 1 }] }))
  })

  it('drops undefined members, as JSON does', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}')
  })
})

describe('run ids', () => {
  it('strictly increase within one millisecond and when the clock goes back', () => {
    const ids = new MonotonicIds()
    const made: string[] = []
    for (let i = 0; i < 5_000; i++) made.push(ids.next(1_700_000_000_000))
    made.push(ids.next(1_600_000_000_000))
    made.push(ids.next(1_700_000_000_123))
    for (const id of made) expect(id).toMatch(UUID_V7)
    expect([...made].sort()).toEqual(made)
    expect(new Set(made).size).toBe(made.length)
  })

  it('carry their millisecond in the first 48 bits', () => {
    const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 6)
    const id = new BulkIds().at(ms)
    expect(id).toMatch(UUID_V7)
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(ms)
    const bulk = new BulkIds()
    const many = Array.from({ length: 10_000 }, (_, i) => bulk.at(ms + (i % 3)))
    expect(new Set(many).size).toBe(many.length)
  })
})

describe('idempotency keys', () => {
  it('find the first record for the same fingerprint and refuse another one with 409', () => {
    const keys = new IdempotencyKeys(memoryDb(), 'runs')
    expect(keys.find('org', 'k', 'f1')).toBeUndefined()
    keys.remember('org', 'k', 'f1', 'run-1', '2026-01-01T00:00:00.000+00:00')
    expect(keys.find('org', 'k', 'f1')).toBe('run-1')
    expect(keys.find('other-org', 'k', 'f2')).toBeUndefined()
    const error = (() => {
      try {
        keys.find('org', 'k', 'f2')
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    expect(error).toBeInstanceOf(SandboxError)
    expect(error).toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_REUSED' })
    expect(() => {
      keys.remember('org', 'k', 'f1', 'run-2', '2026-01-01T00:00:00.000+00:00')
    }).toThrow()
  })
})

describe('model stats', () => {
  it('counts every run, rates succeeded against failed and measures succeeded durations', () => {
    const database = memoryDb()
    const insert = database.prepare(
      `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
       VALUES ('runs', ?, ?, ?, '2026-01-01', '2026-01-01', ?)`,
    )
    const add = (id: string, org: string, status: string, duration: number | null) =>
      insert.run(id, org, 'model-a', JSON.stringify({ status_code: status, duration_ms: duration }))
    for (let i = 1; i <= 20; i++) add(`ok-${i}`, 'org', 'succeeded', i * 100)
    for (let i = 1; i <= 5; i++) add(`bad-${i}`, 'org', 'failed', 10)
    add('stopped', 'org', 'canceled', 5)
    add('busy', 'org', 'running', null)
    add('elsewhere', 'other', 'succeeded', 99_999)
    expect(modelStats(database, 'org', 'model-a')).toEqual({
      model_id: 'model-a',
      run_count: 27,
      success_rate: 0.8,
      avg_duration_ms: 1050,
      p50_duration_ms: 1000,
      p95_duration_ms: 1900,
    })
    expect(modelStats(database, 'nobody', 'model-a')).toEqual({
      model_id: 'model-a',
      run_count: 0,
      success_rate: null,
      avg_duration_ms: null,
      p50_duration_ms: null,
      p95_duration_ms: null,
    })
  })
})

describe('presenting runs', () => {
  const now = Date.UTC(2026, 5, 1)
  const services = {
    blobs: new BlobStore('/nonexistent', Buffer.alloc(32, 7)),
    clock: () => now,
    config: { baseUrl: 'http://127.0.0.1:1234' },
  } as unknown as SandboxServices

  it('mints a URL for every stored file, however deep, and leaves the rest alone', () => {
    const output = {
      images: [{ sha256: SHA, content_type: 'image/png', width: 2 }],
      video: { sha256: SHA, content_type: 'image/webp' },
      text: 'hello',
      seed: 3,
      nested: { list: [{ sha256: 'not-a-hash', content_type: 'image/png' }] },
    }
    const shown = withUrls(services, output) as typeof output & {
      images: { url: string; expires_at: string }[]
      video: { url: string }
      nested: { list: Record<string, unknown>[] }
    }
    expect(shown.images[0]?.url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:1234/_storage/blobs/${SHA}\\?ct=image%2Fpng&expires=`),
    )
    expect(shown.images[0]?.expires_at).toBe('2026-06-01T01:00:00.000+00:00')
    expect(shown.video.url).toContain('ct=image%2Fwebp')
    expect(shown.text).toBe('hello')
    expect(shown.nested.list[0]).not.toHaveProperty('url')
    expect(output.images[0]).not.toHaveProperty('url')
  })

  it('drops the internal fields of a stored run', () => {
    const stored = {
      id: 'r',
      output: null,
      _sandbox: { seed: 1, held_micro: 5, callback_secret_id: null, target: { type: 'model' } },
    } as unknown as StoredRun
    expect(presentRun(services, stored)).toEqual({ id: 'r', output: null })
  })
})

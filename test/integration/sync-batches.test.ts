import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Batch } from '../../src-shared/api'
import { openDatabases, type Databases } from '../../src-main/db'
import { BatchError, BatchesService } from '../../src-main/review/batches'
import { createServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Batches, the collection registered with one `mirrored()` line: made on a real sandbox, pulled
 * by the sync engine into a real mirror, then listed and opened by the Batches service with the
 * sandbox stopped.
 */

let sandbox: TestSandbox | null = null
let home: string
let dbs: Databases
const made: Batch[] = []

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  for (const name of ['first', 'second', 'third']) {
    const answer = await sandbox.call('POST', '/v1/batches', {
      body: {
        model: 'atelier/flaky',
        items: [{ input: { failure_rate: 0, seed: 1 } }, { input: { failure_rate: 0, seed: 2 } }],
        metadata: { name: `${name} batch` },
      },
    })
    expect(answer.status, answer.text).toBe(201)
    made.push(answer.body as Batch)
  }
  home = mkdtempSync(join(tmpdir(), 'atelier-sync-batches-'))
  dbs = openDatabases(home)
}, 60_000)

afterAll(async () => {
  dbs.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox?.close()
})

describe('batches in the mirror', () => {
  it('syncs them, then lists and opens them offline', async () => {
    const running = sandbox
    if (running === null) throw new Error('no sandbox')
    const engine = new SyncEngine({
      client: createServiceClient({ baseUrl: running.url, apiKey: running.keys.admin }),
      mirror: dbs.mirror,
      profileName: 'test',
      orgId: running.orgId,
      pageWrites: 'main-thread',
    })
    const result = await engine.syncAll({ collections: ['batches', 'tombstones'] })
    expect(result.state, result.message).toBe('ok')
    expect(result.collections.find((c) => c.collection === 'batches')).toMatchObject({
      fetched: 3,
      written: 3,
    })

    // Again from the cursor: nothing new is written.
    const again = await engine.syncAll({ collections: ['batches'] })
    expect(again.collections[0]).toMatchObject({ collection: 'batches', written: 0 })

    await running.close()
    sandbox = null

    const service = new BatchesService(dbs.mirror, { orgId: running.orgId })
    const first = service.list({ limit: 2 })
    expect(first.items.map((row) => row.name)).toEqual(['third batch', 'second batch'])
    expect(first.items[0]).toMatchObject({
      modelSlug: 'atelier/flaky',
      itemCount: 2,
      createdAt: made[2]?.created_at,
    })
    expect(first.next).not.toBeNull()
    const rest = service.list({ limit: 2, cursor: first.next ?? '' })
    expect(rest.items.map((row) => row.name)).toEqual(['first batch'])
    expect(rest.next).toBeNull()

    const detail = service.get({ id: made[0]?.id ?? '' })
    expect(detail.items.map((item) => item.runId)).toEqual(made[0]?.items.map((i) => i.run_id))

    expect(() => service.get({ id: 'no-such-batch' })).toThrow(BatchError)
    expect(() => service.list({ cursor: 'stale' })).toThrow(/out of date/)
  })
})

import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabases, type Databases } from '../../src-main/db'
import { runCli } from '../../src-main/cli/program'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine, type SyncProgress } from '../../src-main/sync'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const RUNS = 1500
const PROFILE = 'test'

interface Listed {
  id: string
  updated_at: string
}

// Mirror table and API path of each collection compared on both sides.
const COMPARED = [
  ['runs', '/v1/runs'],
  ['evaluations', '/v1/evaluations'],
  ['assets', '/v1/assets'],
  ['asset_folders', '/v1/asset-folders'],
] as const

let sandbox: TestSandbox
let client: ServiceClient
const homes: string[] = []

function newHome(): Databases {
  const home = mkdtempSync(join(tmpdir(), 'atelier-sync-'))
  homes.push(home)
  return openDatabases(home)
}

function engine(dbs: Databases, extra: Partial<ConstructorParameters<typeof SyncEngine>[0]> = {}) {
  return new SyncEngine({
    client,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId: sandbox.orgId,
    ...extra,
  })
}

async function serviceSide(path: string): Promise<Listed[]> {
  const items: Listed[] = []
  let next: string | null = null
  do {
    const query = `limit=500${next === null ? '' : `&pq=${encodeURIComponent(next)}`}`
    const page = (await sandbox.call('GET', `${path}?${query}`)).body as {
      items: Listed[]
      next: string | null
    }
    items.push(...page.items)
    next = page.next
  } while (next !== null)
  return items
}

function mirrorSide(dbs: Databases, table: string): Listed[] {
  return (dbs.mirror.db.prepare(`SELECT json FROM ${table}`).pluck().all() as string[]).map(
    (json) => JSON.parse(json) as Listed,
  )
}

function checksum(items: readonly Listed[]): { count: number; sha: string } {
  const lines = items.map((i) => `${i.id}|${i.updated_at}`).sort()
  return { count: items.length, sha: createHash('sha256').update(lines.join('\n')).digest('hex') }
}

async function expectSameAsService(dbs: Databases): Promise<void> {
  for (const [table, path] of COMPARED) {
    const local = mirrorSide(dbs, table)
    expect(new Set(local.map((i) => i.id)).size, table).toBe(local.length)
    expect(checksum(local), table).toEqual(checksum(await serviceSide(path)))
  }
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  await seedHistory(sandbox.services, sandbox.orgId, RUNS)
}, 120_000)

afterAll(async () => {
  await sandbox.close()
  for (const home of homes) rmSync(home, { recursive: true, force: true })
})

describe('SyncEngine', () => {
  let dbs: Databases

  it('fills an empty mirror with exactly what the service holds, in pages of 500', async () => {
    dbs = newHome()
    const progress: SyncProgress[] = []
    const result = await engine(dbs, { onProgress: (p) => progress.push(p) }).syncAll()
    expect(result.state).toBe('ok')
    await expectSameAsService(dbs)
    const runs = result.collections.find((c) => c.collection === 'runs')
    expect(runs).toMatchObject({ fetched: RUNS, pages: Math.ceil(RUNS / 500) })
    expect(dbs.mirror.catalogs.list({ orgId: sandbox.orgId }, 'runs/statuses').length).toBe(6)
    expect(dbs.mirror.models.count({ orgId: sandbox.orgId })).toBeGreaterThan(0)
    expect(progress.filter((p) => p.collection === 'runs' && p.phase === 'page').length).toBe(
      runs?.pages,
    )
    expect(progress.at(-1)).toMatchObject({ collection: 'tombstones', phase: 'done' })
  }, 60_000)

  it('then fetches only what changed, and applies deletions', async () => {
    const [run] = await serviceSide('/v1/runs')
    const [evaluation] = await serviceSide('/v1/evaluations')
    const [folder] = await serviceSide('/v1/asset-folders')
    const [asset] = await serviceSide('/v1/assets')
    if (!run || !evaluation || !folder || !asset) throw new Error('seed too small')
    const changes = [
      await sandbox.call('PATCH', `/v1/runs/${run.id}`, { body: { metadata: { synced: true } } }),
      await sandbox.call('PATCH', `/v1/evaluations/${evaluation.id}/feedback`, {
        body: { is_positive: true },
      }),
      await sandbox.call('PATCH', `/v1/asset-folders/${folder.id}`, {
        body: { name: 'renamed by sync test' },
      }),
      await sandbox.call('DELETE', `/v1/assets/${asset.id}`),
    ]
    for (const change of changes) expect(change.status, change.text).toBeLessThan(300)

    const result = await engine(dbs).syncAll()
    expect(result.state).toBe('ok')
    const by = Object.fromEntries(result.collections.map((c) => [c.collection, c]))
    expect(by.runs).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by.evaluations).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by['asset-folders']).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by.tombstones).toMatchObject({ fetched: 1, tombstones: 1 })
    expect(dbs.mirror.assets.get(asset.id)).toBeNull()
    expect(dbs.mirror.assetFolders.get(folder.id)?.name).toBe('renamed by sync test')
    expect(dbs.mirror.runs.get(run.id)?.metadata).toEqual({ synced: true })
    await expectSameAsService(dbs)

    const idle = await engine(dbs).syncAll()
    expect(idle.collections.filter((c) => c.collection !== 'catalogs')).toSatisfy((cs) =>
      (cs as { fetched: number }[]).every((c) => c.fetched === 0),
    )
  }, 60_000)

  it('resumes after an abort mid-collection with no gap and no duplicate', async () => {
    const fresh = newHome()
    const controller = new AbortController()
    const first = await engine(fresh, {
      onProgress: (p) => {
        if (p.collection === 'runs' && p.phase === 'page' && p.pages === 2) controller.abort()
      },
    }).syncAll({ signal: controller.signal })
    expect(first.state).toBe('aborted')
    expect(fresh.mirror.runs.count(sandbox.orgId)).toBe(1000)
    expect(fresh.mirror.evaluations.count(sandbox.orgId)).toBe(0)

    const second = await engine(fresh).syncAll()
    expect(second.state).toBe('ok')
    expect(second.collections.find((c) => c.collection === 'runs')?.fetched).toBe(RUNS - 1000)
    await expectSameAsService(fresh)
  }, 60_000)

  it('resumes after a connection reset on a later page', async () => {
    const fresh = newHome()
    const impatient = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    })
    const first = await engine(fresh, {
      client: impatient,
      onProgress: (p) => {
        // Armed once the first page is written, so that the resets hit a page in the middle.
        if (p.collection === 'runs' && p.phase === 'page' && p.pages === 1) {
          sandbox.services.faults.set([{ operationId: 'listRuns', reset: 'before' }])
        }
      },
    }).syncAll()
    sandbox.services.faults.set([])
    expect(first).toMatchObject({ state: 'offline', code: 'NETWORK_ERROR' })
    const runsAfterFirst = fresh.mirror.runs.count(sandbox.orgId)
    expect(runsAfterFirst % 500).toBe(0)
    expect(runsAfterFirst).toBeGreaterThan(0)
    expect(runsAfterFirst).toBeLessThan(RUNS)

    const second = await engine(fresh).syncAll()
    expect(second.state).toBe('ok')
    expect(second.collections.find((c) => c.collection === 'runs')?.fetched).toBe(
      RUNS - runsAfterFirst,
    )
    await expectSameAsService(fresh)
  }, 60_000)

  it('reports offline when the service is unreachable and leaves the mirror as it was', async () => {
    const closed = createServiceClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: sandbox.keys.admin,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    })
    const before = checksum(mirrorSide(dbs, 'runs'))
    const cursors = dbs.mirror.syncCursors.list(PROFILE, sandbox.orgId)
    const result = await engine(dbs, { client: closed }).syncAll()
    expect(result).toMatchObject({ state: 'offline', code: 'NETWORK_ERROR' })
    expect(result.message).toMatch(/offline/)
    expect(checksum(mirrorSide(dbs, 'runs'))).toEqual(before)
    expect(dbs.mirror.syncCursors.list(PROFILE, sandbox.orgId)).toEqual(cursors)
    expect(dbs.mirror.runs.list({ orgId: sandbox.orgId, limit: 5 }).items).toHaveLength(5)
  })

  it('reports unauthorized with the code for a refused key', async () => {
    const refused = createServiceClient({ baseUrl: sandbox.url, apiKey: 'not-a-real-key' })
    const result = await engine(newHome(), { client: refused }).syncAll()
    expect(result.state).toBe('unauthorized')
    expect(result.code).toBeTruthy()
  })
})

describe('atelier sync', () => {
  it('exits 2 on an unknown collection, before touching the keychain or the mirror', async () => {
    const home = mkdtempSync(join(tmpdir(), 'atelier-sync-cli-'))
    homes.push(home)
    let out = ''
    let err = ''
    const io = { stdout: (t: string) => void (out += t), stderr: (t: string) => void (err += t) }
    const code = await runCli(['--home', home, '--json', 'sync', '--collections', 'runs,nope'], io)
    expect(code).toBe(2)
    expect(JSON.parse(out)).toMatchObject({ error: { code: 'USAGE' } })
    expect(err).toMatch(/Unknown collection "nope"/)
  })
})

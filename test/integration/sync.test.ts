import { createHash } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NodeRun, Run, RunCallbackDelivery, RunLog } from '../../src-shared/api'
import { MIRROR_FILE, openDatabases, type Databases } from '../../src-main/db'
import { runCli } from '../../src-main/cli/program'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import {
  CATALOGS_MAX_AGE_MS,
  SYNC_COLLECTIONS,
  SyncEngine,
  type SyncProgress,
} from '../../src-main/sync'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'
import { runAtelier } from '../helpers/cli'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const RUNS = 1500
const PROFILE = 'test'

interface Listed {
  id: string
  updated_at?: string
  created_at?: string
}

// Mirror table and API path of each collection compared on both sides.
const COMPARED = [
  ['runs', '/v1/runs'],
  ['evaluations', '/v1/evaluations'],
  ['assets', '/v1/assets'],
  ['asset_folders', '/v1/asset-folders'],
  ['flows', '/v1/flows'],
  ['workflows', '/v1/comfyui-workflows'],
  ['solutions', '/v1/solutions'],
] as const

let sandbox: TestSandbox
let client: ServiceClient
let receiver: Server
let receiverUrl: string
const homes: string[] = []

function newHomeDir(): string {
  const home = mkdtempSync(join(tmpdir(), 'atelier-sync-'))
  homes.push(home)
  return home
}

function newHome(): Databases {
  return openDatabases(newHomeDir())
}

function engine(dbs: Databases, extra: Partial<ConstructorParameters<typeof SyncEngine>[0]> = {}) {
  return new SyncEngine({
    client,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId: sandbox.orgId,
    // Most tests are about the collections: a short details pass keeps them quick.
    detailsLimit: 10,
    ...extra,
  })
}

/** A client whose fetch goes through `wrap`: a service that answers differently, or a meter. */
function clientWith(wrap: (request: Request, send: typeof fetch) => Promise<Response>) {
  return createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    fetch: (input, init) => wrap(new Request(input, init), fetch),
  })
}

async function serviceSide<T extends Listed = Listed>(
  path: string,
  query: Record<string, string> = {},
): Promise<T[]> {
  const items: T[] = []
  let next: string | null = null
  for (let page = 0; page < 1000; page++) {
    const params = new URLSearchParams({ limit: '500', ...query })
    if (next !== null) params.set('pq', next)
    const answer = await sandbox.call('GET', `${path}?${params.toString()}`)
    expect(answer.status, answer.text).toBe(200)
    const body = answer.body as { items: T[]; next: string | null }
    items.push(...body.items)
    next = body.next
    if (next === null) return items
  }
  throw new Error(`${path} did not end`)
}

function mirrorSide(dbs: Databases, table: string): Listed[] {
  return (dbs.mirror.db.prepare(`SELECT json FROM ${table}`).pluck().all() as string[]).map(
    (json) => JSON.parse(json) as Listed,
  )
}

function checksum(items: readonly Listed[]): { count: number; sha: string } {
  const lines = items.map((i) => `${i.id}|${i.updated_at ?? i.created_at ?? ''}`).sort()
  return { count: items.length, sha: createHash('sha256').update(lines.join('\n')).digest('hex') }
}

async function expectSameAsService(dbs: Databases): Promise<void> {
  for (const [table, path] of COMPARED) {
    const local = mirrorSide(dbs, table)
    expect(new Set(local.map((i) => i.id)).size, table).toBe(local.length)
    expect(checksum(local), table).toEqual(checksum(await serviceSide(path)))
  }
}

/** The node runs, logs and callback deliveries of a run, in the mirror and on the service. */
async function expectDetailsAsService(dbs: Databases, runId: string): Promise<void> {
  const nodeRuns = await serviceSide<NodeRun>(`/v1/runs/${runId}/node-runs`)
  const logs = await serviceSide<RunLog>(`/v1/runs/${runId}/logs`)
  const deliveries = (await sandbox.call('GET', `/v1/runs/${runId}/callback`))
    .body as RunCallbackDelivery[]
  expect(checksum(dbs.mirror.nodeRuns.listForRun(runId)), `node runs of ${runId}`).toEqual(
    checksum(nodeRuns),
  )
  const localLogs = dbs.mirror.runLogs.listForRun({ runId, limit: 500 }).items
  expect(checksum(localLogs), `logs of ${runId}`).toEqual(checksum(logs))
  expect(dbs.mirror.callbackDeliveries.listForRun(runId), `deliveries of ${runId}`).toEqual(
    deliveries,
  )
}

/** The newest runs on the service by updated_at, as the details pass orders them. */
async function newestRuns(count: number): Promise<Run[]> {
  const answer = await sandbox.call('GET', `/v1/runs?sort_by=updated_at:desc&limit=${count}`)
  return (answer.body as { items: Run[] }).items
}

async function waitForRun(runId: string, done: (run: Run) => boolean): Promise<Run> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const run = (await sandbox.call('GET', `/v1/runs/${runId}`)).body as Run
    if (done(run)) return run
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run.status_code}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const finished = (run: Run) => ['succeeded', 'failed', 'canceled'].includes(run.status_code)

async function dispatchRun(body: Record<string, unknown>): Promise<Run> {
  const created = await sandbox.call('POST', '/v1/models/atelier/text-to-image/runs', { body })
  expect(created.status, created.text).toBe(201)
  return created.body as Run
}

/** Overwrites 64 KiB in the middle of the file with bytes no page could hold. */
function damage(file: string): void {
  const size = statSync(file).size
  const fd = openSync(file, 'r+')
  try {
    const garbage = Buffer.alloc(64 * 1024)
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 197 + 13) % 251
    writeSync(fd, garbage, 0, garbage.length, Math.floor(size / 2 / 4096) * 4096)
  } finally {
    closeSync(fd)
  }
}

const flows: { keep: string; drop: string } = { keep: '', drop: '' }
const workflows: { keep: string; drop: string } = { keep: '', drop: '' }

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  await seedHistory(sandbox.services, sandbox.orgId, RUNS)
  receiver = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      response.statusCode = 204
      response.end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`
  for (const [key, name] of [
    ['keep', 'Sync flow kept'],
    ['drop', 'Sync flow dropped'],
  ] as const) {
    const flow = await sandbox.call('POST', '/v1/flows', { body: { name } })
    expect(flow.status, flow.text).toBe(201)
    flows[key] = (flow.body as { id: string }).id
    const workflow = await sandbox.call('POST', '/v1/comfyui-workflows', {
      body: { name: name.replace('flow', 'workflow'), workflow_json: {} },
    })
    expect(workflow.status, workflow.text).toBe(201)
    workflows[key] = (workflow.body as { id: string }).id
  }
}, 120_000)

afterAll(async () => {
  await sandbox.close()
  await new Promise((resolve) => receiver.close(resolve))
  for (const home of homes) rmSync(home, { recursive: true, force: true })
})

describe('SyncEngine', () => {
  let dbs: Databases

  it('fills an empty mirror with exactly what the service holds, in pages of 500, with totals', async () => {
    dbs = newHome()
    const progress: SyncProgress[] = []
    const result = await engine(dbs, {
      onProgress: (p) => progress.push(p),
      detailsLimit: 50,
    }).syncAll()
    expect(result.state).toBe('ok')
    expect(result.collections.map((c) => c.collection)).toEqual([...SYNC_COLLECTIONS])
    await expectSameAsService(dbs)
    const runs = result.collections.find((c) => c.collection === 'runs')
    expect(runs).toMatchObject({ fetched: RUNS, pages: Math.ceil(RUNS / 500) })
    expect(dbs.mirror.catalogs.list({ orgId: sandbox.orgId }, 'runs/statuses').length).toBe(6)
    expect(dbs.mirror.models.count({ orgId: sandbox.orgId })).toBeGreaterThan(0)
    expect(dbs.mirror.flows.get({ orgId: sandbox.orgId }, flows.keep)?.name).toBe('Sync flow kept')
    expect(dbs.mirror.workflows.get({ orgId: sandbox.orgId }, workflows.drop)).not.toBeNull()

    const runPages = progress.filter((p) => p.collection === 'runs' && p.phase === 'page')
    expect(runPages.length).toBe(runs?.pages)
    // The count came with the first page: every page event knows where the collection ends.
    expect(runPages.map((p) => p.total)).toEqual(runPages.map(() => RUNS))
    expect(runPages.map((p) => p.done)).toEqual([500, 1000, 1500])
    for (const name of SYNC_COLLECTIONS) {
      const done = progress.filter((p) => p.collection === name && p.phase === 'done')
      expect(done, name).toHaveLength(1)
      expect(done[0]?.total, name).toBe(done[0]?.done)
    }
    expect(progress.find((p) => p.collection === 'evaluations' && p.phase === 'page')?.total).toBe(
      dbs.mirror.evaluations.count(sandbox.orgId),
    )
    expect(progress.at(-1)).toMatchObject({ collection: 'run-details', phase: 'done', done: 50 })

    // The details pass: the 50 runs this sync changed last, each at its current version.
    const newest = await newestRuns(51)
    for (const run of newest.slice(0, 50)) {
      expect(dbs.mirror.runDetailsFetched.get(run.id)?.runUpdatedMs, run.id).toBe(
        Date.parse(run.updated_at),
      )
    }
    const older = newest[50]
    if (!older) throw new Error('seed too small')
    expect(dbs.mirror.runDetailsFetched.get(older.id)).toBeNull()
    expect(dbs.mirror.nodeRuns.listForRun(older.id)).toEqual([])
    for (const run of newest.slice(0, 50)) await expectDetailsAsService(dbs, run.id)
  }, 90_000)

  it('then fetches only what changed, and applies deletions', async () => {
    const [run] = await serviceSide('/v1/runs')
    // Only a completed evaluation can be rated; the seeded history has failed ones too.
    const evaluation = (
      await serviceSide<Listed & { status_code?: string }>('/v1/evaluations')
    ).find((e) => e.status_code === 'completed')
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
      await sandbox.call('PATCH', `/v1/flows/${flows.keep}`, {
        body: { name: 'Sync flow renamed' },
      }),
      await sandbox.call('DELETE', `/v1/flows/${flows.drop}`),
      await sandbox.call('PATCH', `/v1/comfyui-workflows/${workflows.keep}`, {
        body: { name: 'Sync workflow renamed' },
      }),
      await sandbox.call('DELETE', `/v1/comfyui-workflows/${workflows.drop}`),
    ]
    for (const change of changes) expect(change.status, change.text).toBeLessThan(300)

    const result = await engine(dbs).syncAll()
    expect(result.state).toBe('ok')
    const by = Object.fromEntries(result.collections.map((c) => [c.collection, c]))
    expect(by.runs).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by.evaluations).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by['asset-folders']).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by.flows).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by.workflows).toMatchObject({ pages: 1, fetched: 1, written: 1 })
    expect(by.tombstones).toMatchObject({ fetched: 3, tombstones: 3 })
    const scope = { orgId: sandbox.orgId }
    expect(dbs.mirror.assets.get(asset.id)).toBeNull()
    expect(dbs.mirror.assetFolders.get(folder.id)?.name).toBe('renamed by sync test')
    expect(dbs.mirror.runs.get(run.id)?.metadata).toEqual({ synced: true })
    expect(dbs.mirror.flows.get(scope, flows.keep)?.name).toBe('Sync flow renamed')
    expect(dbs.mirror.flows.get(scope, flows.drop)).toBeNull()
    expect(dbs.mirror.workflows.get(scope, workflows.keep)?.name).toBe('Sync workflow renamed')
    expect(dbs.mirror.workflows.get(scope, workflows.drop)).toBeNull()
    await expectSameAsService(dbs)
    // The run changed, so its details were fetched again at its new version; no other run's.
    expect(by['run-details']?.pages).toBe(3)
    const changed = dbs.mirror.runs.get(run.id)
    expect(dbs.mirror.runDetailsFetched.get(run.id)?.runUpdatedMs).toBe(
      Date.parse(changed?.updated_at ?? ''),
    )

    const idle = await engine(dbs).syncAll()
    // Solutions are read whole every time, the catalogs once an hour (read above, so not now);
    // everything else had nothing new.
    expect(idle.collections.find((c) => c.collection === 'catalogs')).toMatchObject({
      pages: 0,
      fetched: 0,
    })
    const incremental = idle.collections.filter(
      (c) => c.collection !== 'catalogs' && c.collection !== 'solutions',
    )
    expect(incremental.map((c) => [c.collection, c.fetched])).toEqual(
      incremental.map((c) => [c.collection, 0]),
    )
    expect(idle.collections.find((c) => c.collection === 'run-details')?.pages).toBe(0)
    // An hour on, they are read again (and whatever their age when asked for by name).
    const hourOn = () => Date.now() + CATALOGS_MAX_AGE_MS + 1000
    const later = await engine(dbs, { clock: hourOn }).syncAll({ collections: ['catalogs'] })
    expect(later.collections[0]?.pages).toBeGreaterThanOrEqual(13)
    const again = await engine(dbs, { clock: hourOn }).syncAll({ collections: ['catalogs'] })
    expect(again.collections[0]?.pages).toBe(0)
    const asked = await engine(dbs, { catalogsMaxAgeMs: 0 }).syncAll({ collections: ['catalogs'] })
    expect(asked.collections[0]?.pages).toBeGreaterThanOrEqual(13)
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

    const progress: SyncProgress[] = []
    const second = await engine(fresh, { onProgress: (p) => progress.push(p) }).syncAll()
    expect(second.state).toBe('ok')
    expect(second.collections.find((c) => c.collection === 'runs')?.fetched).toBe(RUNS - 1000)
    await expectSameAsService(fresh)
    // The bar resumes where the first sync stopped: done-before plus what is left.
    const runs = progress.filter((p) => p.collection === 'runs')
    expect(runs[0]).toMatchObject({ phase: 'start', done: 1000 })
    const firstPage = runs.find((p) => p.phase === 'page')
    // What is left counts from the cursor, which is re-read: at least one more than new.
    expect(firstPage?.total).toBeGreaterThanOrEqual(RUNS)
    expect(firstPage?.total).toBeLessThanOrEqual(RUNS + 5)
    expect(runs.at(-1)).toMatchObject({ phase: 'done', done: RUNS, total: RUNS })
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

  it('works without a count from the service: no total until each collection is done', async () => {
    const fresh = newHome()
    const asked: (string | null)[] = []
    const counting = clientWith(async (request, send) => {
      asked.push(request.headers.get('Prefer'))
      const answer = await send(request)
      const headers = new Headers(answer.headers)
      headers.delete('X-Total-Count')
      return new Response(answer.body, { status: answer.status, headers })
    })
    const progress: SyncProgress[] = []
    const result = await engine(fresh, {
      client: counting,
      onProgress: (p) => progress.push(p),
    }).syncAll({ collections: ['runs', 'evaluations'] })
    expect(result.state).toBe('ok')
    // Asked on the first page of each collection only.
    expect(asked.filter((prefer) => prefer === 'count=exact')).toHaveLength(2)
    // Runs come 500 a page, evaluations 100 (their pages are heavy); each list ends on a page
    // that says there is no next.
    const evaluations = (await serviceSide('/v1/evaluations')).length
    expect(asked.length).toBe(Math.ceil(RUNS / 500) + Math.max(1, Math.ceil(evaluations / 100)))
    const pages = progress.filter((p) => p.phase === 'page')
    expect(pages.length).toBeGreaterThan(2)
    for (const p of pages) expect(p.total, `${p.collection} page ${p.pages}`).toBeUndefined()
    const done = progress.filter((p) => p.phase === 'done')
    expect(done.map((p) => [p.collection, p.done, p.total])).toEqual([
      ['runs', RUNS, RUNS],
      ['evaluations', fresh.mirror.evaluations.count(sandbox.orgId), expect.any(Number)],
    ])
    expect(checksum(mirrorSide(fresh, 'runs'))).toEqual(checksum(await serviceSide('/v1/runs')))
  }, 60_000)

  it('replaces solutions whole: one the service no longer lists goes from the mirror', async () => {
    const listed = await serviceSide('/v1/solutions')
    const [hidden] = listed
    if (!hidden) throw new Error('the sandbox has no solutions')
    // Solutions are read-only in the contract; the service dropping one is simulated in its store.
    const hide = sandbox.services.db.prepare(
      `UPDATE records SET deleted_at = ? WHERE collection = 'solutions' AND id = ?`,
    )
    hide.run(new Date().toISOString(), hidden.id)
    try {
      const result = await engine(dbs).syncAll({ collections: ['solutions'] })
      expect(result.state).toBe('ok')
      expect(dbs.mirror.solutions.get({ orgId: sandbox.orgId }, hidden.id)).toBeNull()
      expect(dbs.mirror.solutions.count({ orgId: sandbox.orgId })).toBe(listed.length - 1)
    } finally {
      hide.run(null, hidden.id)
    }
    await engine(dbs).syncAll({ collections: ['solutions'] })
    expect(dbs.mirror.solutions.get({ orgId: sandbox.orgId }, hidden.id)?.id).toBe(hidden.id)
    expect(checksum(mirrorSide(dbs, 'solutions'))).toEqual(checksum(listed))
  })

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

  it('refills a mirror rebuilt after damage, since the cursors were in it', async () => {
    const home = newHomeDir()
    const first = openDatabases(home)
    expect((await engine(first).syncAll()).state).toBe('ok')
    first.close()
    damage(join(home, MIRROR_FILE))
    const rebuilt = openDatabases(home)
    try {
      expect(rebuilt.notices.map((n) => n.code)).toEqual(['MIRROR_REBUILT'])
      expect(rebuilt.mirror.runs.count(sandbox.orgId)).toBe(0)
      const result = await engine(rebuilt).syncAll()
      expect(result.state).toBe('ok')
      expect(result.collections.find((c) => c.collection === 'runs')?.fetched).toBe(RUNS)
      await expectSameAsService(rebuilt)
    } finally {
      rebuilt.close()
    }
  }, 90_000)
})

describe('run details', () => {
  it('fetches every node run, log line and callback delivery of an opened run', async () => {
    const dispatched = await dispatchRun({ input: { prompt: 'a fox' }, callback_url: receiverUrl })
    await waitForRun(dispatched.id, finished)
    const deliveries = async () =>
      (await sandbox.call('GET', `/v1/runs/${dispatched.id}/callback`))
        .body as RunCallbackDelivery[]
    const deadline = Date.now() + 20_000
    while ((await deliveries())[0]?.status_code !== 'succeeded') {
      if (Date.now() > deadline) throw new Error('the callback was not delivered')
      await new Promise((resolve) => setTimeout(resolve, 25))
    }

    const fresh = newHome()
    expect((await engine(fresh).syncAll({ collections: ['runs'] })).state).toBe('ok')
    expect(fresh.mirror.runDetailsFetched.get(dispatched.id)).toBeNull()
    const report = await engine(fresh).syncRunDetails(dispatched.id)
    expect(report).toMatchObject({ runId: dispatched.id, nodeRuns: 1, callbackDeliveries: 1 })
    expect(report.logs).toBeGreaterThan(2)
    expect(report.requests).toBe(3)
    await expectDetailsAsService(fresh, dispatched.id)
    const run = fresh.mirror.runs.get(dispatched.id)
    expect(fresh.mirror.runDetailsFetched.get(dispatched.id)?.runUpdatedMs).toBe(
      Date.parse(run?.updated_at ?? ''),
    )
    const [delivery] = await deliveries()
    const attempts = fresh.mirror.db
      .prepare('SELECT count(*) FROM delivery_attempts WHERE delivery_id = ?')
      .pluck()
    expect(attempts.get(delivery?.id)).toBe(delivery?.attempts.length)
    expect(delivery?.attempts.length).toBeGreaterThan(0)

    // An older copy never replaces a newer one: a node run the mirror holds at a later version
    // stays as it is when the service's is fetched again.
    const [nodeRun] = fresh.mirror.nodeRuns.listForRun(dispatched.id)
    if (!nodeRun) throw new Error('no node run')
    const newer = { ...nodeRun, updated_at: '2999-01-01T00:00:00.000+00:00', failure_message: 'x' }
    fresh.mirror.nodeRuns.upsertPage([newer])
    await engine(fresh).syncRunDetails(dispatched.id)
    expect(fresh.mirror.nodeRuns.listForRun(dispatched.id)).toEqual([newer])
  }, 60_000)

  it('fetches the run itself first when the mirror does not hold it', async () => {
    const [run] = await newestRuns(1)
    if (!run) throw new Error('no runs')
    const fresh = newHome()
    const report = await engine(fresh).syncRunDetails(run.id)
    expect(report.requests).toBe(4)
    expect(fresh.mirror.runs.get(run.id)?.id).toBe(run.id)
    await expectDetailsAsService(fresh, run.id)
  })

  it('bounds the pass: at most the limit, a few runs at a time, nothing twice', async () => {
    const fresh = newHome()
    let inFlight = 0
    let most = 0
    const metered = clientWith(async (request, send) => {
      const details = /\/v1\/runs\/[^/]+\/(node-runs|logs|callback)$/.test(
        new URL(request.url).pathname,
      )
      if (details) most = Math.max(most, ++inFlight)
      try {
        // Held a moment so that concurrent requests overlap for the meter to see.
        if (details) await new Promise((resolve) => setTimeout(resolve, 5))
        return await send(request)
      } finally {
        if (details) inFlight--
      }
    })
    const first = await engine(fresh, {
      client: metered,
      detailsLimit: 30,
      detailsConcurrency: 3,
    }).syncAll({ collections: ['runs', 'run-details'] })
    expect(first.state).toBe('ok')
    expect(most).toBe(3)
    const marked = fresh.mirror.db.prepare('SELECT count(*) FROM run_details_fetched').pluck()
    expect(marked.get()).toBe(30)
    for (const run of await newestRuns(30)) await expectDetailsAsService(fresh, run.id)

    const again = await engine(fresh, { client: metered, detailsLimit: 30 }).syncAll({
      collections: ['runs', 'run-details'],
    })
    expect(again.collections.find((c) => c.collection === 'run-details')).toMatchObject({
      pages: 0,
      fetched: 0,
    })
    expect(marked.get()).toBe(30)
  }, 60_000)

  it('skips a run deleted on the service meanwhile; its tombstone removes it later', async () => {
    const fresh = newHome()
    const sync = engine(fresh, { detailsLimit: 5 })
    await sync.syncCollection('runs')
    const [gone, ...kept] = await newestRuns(5)
    if (!gone) throw new Error('no runs')
    sandbox.services.store.remove('runs', gone.id, sandbox.orgId)
    const report = await sync.syncCollection('run-details')
    expect(report.pages).toBe(3 * kept.length)
    expect(fresh.mirror.runDetailsFetched.get(gone.id)).toBeNull()
    for (const run of kept) expect(fresh.mirror.runDetailsFetched.get(run.id)).not.toBeNull()
    await sync.syncCollection('tombstones')
    expect(fresh.mirror.runs.get(gone.id)).toBeNull()
  })

  it('fetches the details of an unfinished run at every sync, then once more when it ends', async () => {
    const fresh = newHome()
    const latency = sandbox.services.config.latencyMs
    // Slow enough that the run stays queued for the whole test, until it is canceled.
    sandbox.services.config.latencyMs = 600_000
    let runId = ''
    try {
      runId = (await dispatchRun({ input: { prompt: 'a slow fox' } })).id
      const detailsOf = async () => {
        const result = await engine(fresh, { detailsLimit: 5 }).syncAll({
          collections: ['runs', 'run-details'],
        })
        expect(result.state).toBe('ok')
        return fresh.mirror.runDetailsFetched.get(runId)
      }
      const first = await detailsOf()
      expect(fresh.mirror.runs.get(runId)?.status_code).toMatch(/queued|starting|running/)
      expect(first).not.toBeNull()
      await new Promise((resolve) => setTimeout(resolve, 5))
      const second = await detailsOf()
      expect(second?.fetchedMs).toBeGreaterThan(first?.fetchedMs ?? Infinity)

      const canceled = await sandbox.call('POST', `/v1/runs/${runId}/cancel`)
      expect(canceled.status, canceled.text).toBeLessThan(300)
      await waitForRun(runId, finished)
      const third = await detailsOf()
      expect(fresh.mirror.runs.get(runId)?.status_code).toBe('canceled')
      expect(third?.fetchedMs).toBeGreaterThan(second?.fetchedMs ?? Infinity)
      await expectDetailsAsService(fresh, runId)
      await new Promise((resolve) => setTimeout(resolve, 5))
      expect((await detailsOf())?.fetchedMs).toBe(third?.fetchedMs)
    } finally {
      sandbox.services.config.latencyMs = latency
    }
  }, 60_000)
})

describe('atelier sync', () => {
  it('exits 2 on an unknown collection, before touching the keychain or the mirror', async () => {
    const home = newHomeDir()
    let out = ''
    let err = ''
    const io = { stdout: (t: string) => void (out += t), stderr: (t: string) => void (err += t) }
    const code = await runCli(['--home', home, '--json', 'sync', '--collections', 'runs,nope'], io)
    expect(code).toBe(2)
    expect(JSON.parse(out)).toMatchObject({ error: { code: 'USAGE' } })
    expect(err).toMatch(/Unknown collection "nope"/)
  })

  const tools = secretServiceAvailability()

  describe.skipIf(!tools.available)('with a profile in a real Secret Service', () => {
    let keyring: SecretServiceSession

    /** The real binary, as a user runs it: stderr is a pipe here, not a terminal. */
    function atelier(home: string, args: string[], input = '') {
      return runAtelier(['--home', home, ...args], { input, env: keyring.env })
    }

    beforeAll(async () => {
      keyring = await startSecretService()
    }, 30_000)

    afterAll(async () => {
      await keyring.close()
    })

    it('prints one line per collection when it finishes, then the summary or the JSON result', async () => {
      const home = newHomeDir()
      const added = await atelier(
        home,
        ['profile', 'add', PROFILE, '--base-url', sandbox.url],
        `${sandbox.keys.admin}\n`,
      )
      expect(added.code, added.stderr).toBe(0)

      const runs = (await serviceSide('/v1/runs')).length
      const synced = await atelier(home, ['sync'])
      expect(synced.code, synced.stderr).toBe(0)
      const lines = synced.stderr.trim().split('\n')
      expect(lines.map((line) => line.split(':')[0])).toEqual([...SYNC_COLLECTIONS])
      const runsLine = lines.find((line) => line.startsWith('runs:')) ?? ''
      expect(runsLine).toContain(
        `runs: ${runs.toLocaleString('en-US')} records, ${Math.ceil(runs / 500)} requests, `,
      )
      expect(runsLine).toMatch(/, \d+\.\d s \([\d,–]+ records\/s\)$/)
      expect(synced.stdout).toMatch(new RegExp(`^runs\\s+${runs} fetched`, 'm'))
      expect(synced.stdout).toMatch(/^ok in \d+\.\d s$/m)

      const json = await atelier(home, ['--json', 'sync', '--collections', 'runs,evaluations'])
      expect(json.code, json.stderr).toBe(0)
      expect(json.stderr.trim().split('\n')).toHaveLength(2)
      const result = JSON.parse(json.stdout) as { state: string; collections: unknown[] }
      expect(result).toMatchObject({
        state: 'ok',
        collections: [
          { collection: 'runs', fetched: 0 },
          { collection: 'evaluations', fetched: 0 },
        ],
      })

      // A damaged mirror is set aside and rebuilt when opened; the sync says so and refills it.
      damage(join(home, MIRROR_FILE))
      const refill = await atelier(home, ['sync'])
      expect(refill.code, refill.stderr).toBe(0)
      expect(refill.stderr).toMatch(/was damaged/)
      expect(refill.stderr).toMatch(/This sync is refilling it from the service now/)
      const dbs = openDatabases(home)
      try {
        expect(dbs.notices).toEqual([])
        await expectSameAsService(dbs)
      } finally {
        dbs.close()
      }
    }, 120_000)
  })
})

import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Asset, AssetFolder, Evaluation, Flow, Page } from '../../src-shared/api'
import { openDatabases, type Databases } from '../../src-main/db'
import { OutboxReplayer, type ReplayReport } from '../../src-main/outbox'
import { startSandbox, type RunningSandbox } from '../../src-main/sandbox'
import type { FaultRule } from '../../src-main/sandbox/faults'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient, type ServiceClientOptions } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import { runAtelier, type CliRun } from '../helpers/cli'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'

const PROFILE = 'test'
const tools = secretServiceAvailability()

const scratch = mkdtempSync(join(tmpdir(), 'atelier-outbox-'))
const dataDir = join(scratch, 'sandbox')
let sandbox: RunningSandbox
let dbs: Databases
let orgId: string
/** A completed evaluation, an asset and a flow, all synced before the service goes down. */
let evaluation: Evaluation
let asset: Asset
let flow: Flow

function start(): Promise<RunningSandbox> {
  return startSandbox({ dataDir, latencyMs: 0, checkResponses: true })
}

/** Requests seen on the wire: method, path and the Idempotency-Key each one carried. */
const wire: { method: string; path: string; key: string | null }[] = []

function clientFor(
  target: RunningSandbox,
  options: Partial<ServiceClientOptions> & { key?: string } = {},
) {
  const { key, ...rest } = options
  return createServiceClient({
    baseUrl: target.url,
    apiKey: key ?? target.keys.admin,
    // The backoff is the client's business, tested there; here it would only add waiting.
    sleep: () => Promise.resolve(),
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input)
      wire.push({
        method: init?.method ?? 'GET',
        path: url.pathname,
        key: new Headers(init?.headers).get('Idempotency-Key'),
      })
      return fetch(input, init)
    },
    ...rest,
  })
}

function replayer(client = clientFor(sandbox)) {
  return new OutboxReplayer({
    client,
    ledger: dbs.ledger,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId,
  })
}

/** What the service holds, read straight over HTTP. */
async function service<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${sandbox.keys.admin}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return (text ? JSON.parse(text) : undefined) as T
}

async function foldersNamed(name: string, parentId: string | null): Promise<AssetFolder[]> {
  const q = encodeURIComponent(`parent_id=${parentId ?? 'null'}`)
  const page = await service<Page<AssetFolder>>('GET', `/v1/asset-folders?limit=500&q=${q}`)
  return page.items.filter((folder) => folder.name === name)
}

function setFaults(rules: FaultRule[]): void {
  sandbox.services.faults.set(rules)
}

function pendingSeqs(): number[] {
  return dbs.ledger.outbox.peekPending({ profile: PROFILE, orgId }, 100).map((e) => e.seq)
}

function expectState(report: ReplayReport, state: ReplayReport['state']): void {
  expect(report.state, report.message).toBe(state)
}

beforeAll(async () => {
  sandbox = await start()
  orgId = sandbox.orgId
  await seedHistory(sandbox.services, orgId, 30)
  flow = await service<Flow>('POST', '/v1/flows', { name: 'Poster series' })
  dbs = openDatabases(join(scratch, 'home'))
  const synced = await new SyncEngine({
    client: clientFor(sandbox),
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId,
  }).syncAll({ collections: ['asset-folders', 'assets', 'evaluations'] })
  expect(synced.state).toBe('ok')
  // Flows are not part of the sync yet; this puts the flow where a sync of them would.
  dbs.mirror.flows.upsertPage([flow], { orgId })
  const completed = dbs.mirror.evaluations
    .list({ orgId, limit: 100 })
    .items.find((e) => e.status_code === 'completed')
  const [first] = dbs.mirror.assets.list({ orgId, limit: 1 }).items
  if (!completed || !first) throw new Error('the seed has no completed evaluation or no asset')
  evaluation = completed
  asset = first
}, 60_000)

afterAll(async () => {
  await sandbox.close()
  dbs.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe('the outbox replay after the sandbox was down', () => {
  it('keeps writes made offline, in order, and sends them all once the service answers', async () => {
    const down = sandbox
    await down.close()
    const offline = replayer(clientFor(down, { retry: { maxAttempts: 1 } }))

    const feedback = offline.giveFeedback(evaluation.id as string, {
      isPositive: false,
      comment: 'Hands look wrong',
    })
    const created = offline.createFolder('Offline picks')
    const placeholder = created.subjectId as string
    expect(placeholder).toMatch(/^local:[0-9a-f-]{36}$/)
    const moved = offline.moveAsset(asset.id, placeholder)
    const renamed = offline.renameFolder(placeholder, 'Offline picks, sorted')
    const edited = offline.editFlow(flow.id, { name: 'Poster series, final' })
    const order = [feedback, created, moved, renamed, edited].map((item) => item.seq)

    const first = await offline.replay()
    expectState(first, 'offline')
    expect(first).toMatchObject({ sent: 0, rejected: 0, pending: 5 })
    expect(first.message).toContain('5 write(s) wait in the outbox')
    expect(first.entries).toEqual([
      expect.objectContaining({ seq: feedback.seq, outcome: 'pending', code: 'NETWORK_ERROR' }),
    ])
    const again = await offline.replay()
    expectState(again, 'offline')
    expect(pendingSeqs()).toEqual(order)
    // Only the head was tried, twice; the rest wait behind it, untouched.
    const entries = order.map((seq) => dbs.ledger.outbox.get(seq))
    expect(entries.map((e) => e?.attempts)).toEqual([2, 0, 0, 0, 0])
    expect(entries[0]).toMatchObject({ state: 'pending', lastErrorCode: 'NETWORK_ERROR' })
    expect(entries[0]?.lastError).toContain('Could not reach the service')

    // The user sees the feedback as pending; the mirror still holds the service's copy.
    expect(offline.pendingFor(evaluation.id as string)).toEqual([
      expect.objectContaining({
        seq: feedback.seq,
        state: 'pending',
        write: expect.objectContaining({ isPositive: false, reason: 'Hands look wrong' }),
      }),
    ])
    expect(dbs.mirror.evaluations.get(evaluation.id as string)).toEqual(evaluation)
    expect(dbs.mirror.assets.get(asset.id)?.folder_id).toBe(asset.folder_id)

    sandbox = await start()
    expect(sandbox.url).not.toBe(down.url)
    const online = replayer()
    wire.length = 0
    const running = online.replay()
    // A second caller (the scheduler after a sync, a screen with its own replayer) joins it.
    expect(online.replay()).toBe(running)
    expect(replayer().replay()).toBe(running)
    const report = await running
    expectState(report, 'ok')
    expect(report).toMatchObject({ sent: 5, rejected: 0, pending: 0 })
    expect(report.entries.map((e) => e.seq)).toEqual(order)
    const writes = wire.filter((request) => request.method !== 'GET')
    expect(writes.map((request) => request.key)).toEqual(
      order.map((seq) => dbs.ledger.outbox.get(seq)?.idempotencyKey),
    )

    const folderId = dbs.ledger.outbox.get(created.seq)?.resultId as string
    expect(folderId).toMatch(/^[0-9a-f-]{36}$/)
    // The writes that named the placeholder are shown on the real folder from now on.
    expect(dbs.ledger.outbox.get(renamed.seq)?.subjectId).toBe(folderId)
    const sentAt = order.map((seq) => dbs.ledger.outbox.get(seq)?.sentMs ?? 0)
    expect(sentAt).toEqual([...sentAt].sort((a, b) => a - b))

    // The service holds every change…
    const rated = await service<Evaluation>('GET', `/v1/evaluations/${evaluation.id}`)
    expect(rated).toMatchObject({
      feedback_is_positive: false,
      feedback_reason: 'Hands look wrong',
    })
    const folder = await service<AssetFolder>('GET', `/v1/asset-folders/${folderId}`)
    expect(folder).toMatchObject({ name: 'Offline picks, sorted', path: '/Offline picks, sorted' })
    expect(await foldersNamed('Offline picks', null)).toEqual([])
    expect((await service<Asset>('GET', `/v1/assets/${asset.id}`)).folder_id).toBe(folderId)
    const renamedFlow = await service<Flow>('GET', `/v1/flows/${flow.id}`)
    expect(renamedFlow.name).toBe('Poster series, final')

    // …and the mirror holds the service's new records.
    expect(dbs.mirror.evaluations.get(evaluation.id as string)).toMatchObject({
      feedback_is_positive: false,
      feedback_reason: 'Hands look wrong',
      updated_at: rated.updated_at,
    })
    expect(dbs.mirror.assetFolders.get(folderId)).toEqual(folder)
    expect(dbs.mirror.assets.get(asset.id)?.folder_id).toBe(folderId)
    expect(dbs.mirror.flows.get({ orgId }, flow.id)).toMatchObject({
      name: 'Poster series, final',
      updated_at: renamedFlow.updated_at,
      // The PATCH answer embeds no graph; the copy keeps the one it had, which PATCH never changes.
      nodes: flow.nodes,
    })
    expect(flow.nodes).toEqual([])
    expect(online.pendingFor(evaluation.id as string)).toEqual([])
    flow = renamedFlow
  }, 60_000)

  it('keeps a refused write with the service’s reason and goes on with the next ones', async () => {
    const admin = replayer()
    const missing = admin.giveFeedback(randomUUID(), { isPositive: true })
    const after = admin.createFolder('After a refusal')
    const report = await admin.replay()
    expectState(report, 'ok')
    expect(report).toMatchObject({ sent: 1, rejected: 1, pending: 0 })
    const refused = dbs.ledger.outbox.get(missing.seq)
    expect(refused).toMatchObject({ state: 'rejected', attempts: 1 })
    expect(refused?.lastErrorCode).toMatch(/NOT_FOUND/)
    expect(refused?.lastError).toMatch(/evaluation/i)
    const [made] = await foldersNamed('After a refusal', null)
    expect(dbs.ledger.outbox.get(after.seq)?.resultId).toBe(made?.id)

    // A key without evaluations:edit: the feedback is refused, the folder rename still goes.
    const limited = replayer(clientFor(sandbox, { key: sandbox.keys.limited }))
    const rating = limited.giveFeedback(evaluation.id as string, { isPositive: true })
    const rename = limited.renameFolder(made?.id as string, 'After a refusal, renamed')
    const second = await limited.replay()
    expect(second).toMatchObject({ state: 'ok', sent: 1, rejected: 1 })
    expect(dbs.ledger.outbox.get(rating.seq)).toMatchObject({
      state: 'rejected',
      lastErrorCode: 'PERMISSION_DENIED',
    })
    expect(dbs.ledger.outbox.get(rating.seq)?.lastError).toContain('evaluations:edit')
    expect(dbs.ledger.outbox.get(rename.seq)?.state).toBe('sent')
    expect(limited.pendingFor(evaluation.id as string)).toEqual([
      expect.objectContaining({ seq: rating.seq, state: 'rejected' }),
    ])
    const unchanged = await service<Evaluation>('GET', `/v1/evaluations/${evaluation.id}`)
    expect(unchanged.feedback_is_positive).toBe(false)

    // A create the service refuses takes the writes that depend on it along, without a request.
    const clash = admin.createFolder('Offline picks, sorted')
    const into = admin.moveAsset(asset.id, clash.subjectId)
    wire.length = 0
    const third = await admin.replay()
    expect(third).toMatchObject({ state: 'ok', sent: 0, rejected: 2 })
    expect(dbs.ledger.outbox.get(clash.seq)).toMatchObject({ lastErrorCode: 'CONFLICT' })
    expect(dbs.ledger.outbox.get(into.seq)).toMatchObject({
      state: 'rejected',
      attempts: 0,
      lastErrorCode: 'DEPENDENCY_REJECTED',
    })
    expect(dbs.ledger.outbox.get(into.seq)?.lastError).toContain(`outbox #${clash.seq}`)
    expect(wire.filter((request) => request.path.startsWith('/v1/assets'))).toEqual([])

    // Retry sends a refused write again, in its old place; discard forgets one the user has seen.
    expect(admin.retry(rating.seq).state).toBe('pending')
    const fourth = await admin.replay()
    expect(fourth).toMatchObject({ state: 'ok', sent: 1, rejected: 0, pending: 0 })
    const rerated = await service<Evaluation>('GET', `/v1/evaluations/${evaluation.id}`)
    expect(rerated.feedback_is_positive).toBe(true)
    expect(admin.pendingFor(evaluation.id as string)).toEqual([])

    expect(admin.discard(missing.seq).seq).toBe(missing.seq)
    expect(dbs.ledger.outbox.get(missing.seq)).toBeNull()
    expect(() => admin.discard(rating.seq)).toThrow(/already sent/)
    const waiting = admin.giveFeedback(evaluation.id as string, { isPositive: null })
    expect(() => admin.discard(waiting.seq)).toThrow(/waiting to be sent/)
    expect(() => admin.retry(waiting.seq)).toThrow(/only refused writes/)
    expect(dbs.ledger.outbox.get(waiting.seq)?.state).toBe('pending')
    expect((await admin.replay()).sent).toBe(1)
  }, 60_000)

  it('refuses bad writes before storing them', () => {
    const admin = replayer()
    const before = dbs.ledger.outbox.list({ limit: 500 }).items.length
    expect(() => admin.createFolder('a/b')).toThrow(/name must not contain "\/"/)
    expect(() => admin.renameFolder(`local:${randomUUID()}`, 'x')).toThrow(
      /was not created offline/,
    )
    expect(() => admin.giveFeedback('../evaluations', { isPositive: true })).toThrow(
      /evaluationId is not an id of the service/,
    )
    expect(() => admin.editFlow(flow.id, {})).toThrow(/must change at least one field/)
    expect(dbs.ledger.outbox.list({ limit: 500 }).items.length).toBe(before)
  })

  it('sends chained flow edits, and refuses one that would overwrite a change made elsewhere', async () => {
    const admin = replayer()
    // Two edits made offline one after the other: the second expects what the first leaves.
    const one = admin.editFlow(flow.id, { description: 'Four posters, one style' })
    const two = admin.editFlow(flow.id, { name: 'Poster series, v2' })
    expect(one.write).toMatchObject({ basedOn: flow.updated_at, after: null })
    expect(two.write).toMatchObject({ after: one.seq })
    const sent = await admin.replay()
    expect(sent).toMatchObject({ state: 'ok', sent: 2, rejected: 0 })
    const current = await service<Flow>('GET', `/v1/flows/${flow.id}`)
    expect(current).toMatchObject({
      name: 'Poster series, v2',
      description: 'Four posters, one style',
    })
    expect(dbs.mirror.flows.get({ orgId }, flow.id)?.updated_at).toBe(current.updated_at)

    const stale = admin.editFlow(flow.id, { name: 'Made offline' })
    const onTop = admin.replaceFlowGraph(flow.id, { nodes: [], inputs: [], outputs: [] })
    // Someone else edits the flow before the outbox gets through.
    await service('PATCH', `/v1/flows/${flow.id}`, { name: 'Changed elsewhere' })
    const refused = await admin.replay()
    expect(refused).toMatchObject({ state: 'ok', sent: 0, rejected: 2 })
    expect(dbs.ledger.outbox.get(stale.seq)).toMatchObject({ lastErrorCode: 'EDIT_CONFLICT' })
    expect(dbs.ledger.outbox.get(stale.seq)?.lastError).toContain('would have overwritten')
    expect(dbs.ledger.outbox.get(onTop.seq)).toMatchObject({
      lastErrorCode: 'DEPENDENCY_REJECTED',
    })
    const kept = await service<Flow>('GET', `/v1/flows/${flow.id}`)
    expect(kept).toMatchObject({ name: 'Changed elsewhere', version: current.version })

    // With no base the edit is sent whatever happened since (the user chose to overwrite).
    admin.replaceFlowGraph(flow.id, { nodes: [], inputs: [], outputs: [] }, { basedOn: null })
    expect((await admin.replay()).sent).toBe(1)
    const replaced = await service<Flow>('GET', `/v1/flows/${flow.id}`)
    expect(replaced.version).toBe(current.version + 1)
    expect(dbs.mirror.flows.get({ orgId }, flow.id)).toMatchObject({
      version: replaced.version,
      nodes: [],
    })
  }, 60_000)
})

describe('a write whose answer was lost', () => {
  it('is sent again with the same Idempotency-Key and applied once', async () => {
    // The connection drops after the service applied the rating, and the client does not retry.
    setFaults([{ operationId: 'setEvaluationFeedback', reset: 'after', times: 1 }])
    const once = replayer(clientFor(sandbox, { retry: { maxAttempts: 1 } }))
    const rating = once.giveFeedback(evaluation.id as string, {
      isPositive: false,
      comment: 'Too dark',
    })
    wire.length = 0
    const lost = await once.replay()
    expectState(lost, 'offline')
    expect(dbs.ledger.outbox.get(rating.seq)).toMatchObject({ state: 'pending', attempts: 1 })
    const applied = await service<Evaluation>('GET', `/v1/evaluations/${evaluation.id}`)
    expect(applied).toMatchObject({ feedback_is_positive: false, feedback_reason: 'Too dark' })

    const report = await once.replay()
    expect(report).toMatchObject({ state: 'ok', sent: 1, pending: 0 })
    const key = dbs.ledger.outbox.get(rating.seq)?.idempotencyKey
    const keys = wire.filter((request) => request.path.endsWith('/feedback')).map((r) => r.key)
    expect(keys).toEqual([key, key])
    const after = await service<Evaluation>('GET', `/v1/evaluations/${evaluation.id}`)
    expect(after).toMatchObject({ feedback_is_positive: false, feedback_reason: 'Too dark' })
  })

  it('creates a folder once: the repeat meets the folder the lost attempt made and adopts it', async () => {
    setFaults([{ operationId: 'createAssetFolder', reset: 'after', times: 1 }])
    const once = replayer(clientFor(sandbox, { retry: { maxAttempts: 1 } }))
    const created = once.createFolder('Lost answer')
    const into = once.moveAsset(asset.id, created.subjectId)
    const lost = await once.replay()
    expectState(lost, 'offline')
    expect(lost.code).toBe('OUTCOME_UNKNOWN')
    expect(pendingSeqs()).toEqual([created.seq, into.seq])
    const [made] = await foldersNamed('Lost answer', null)
    expect(made).toBeDefined()

    wire.length = 0
    const report = await once.replay()
    expect(report).toMatchObject({ state: 'ok', sent: 2, rejected: 0 })
    const posts = wire.filter((request) => request.method === 'POST')
    expect(posts.map((request) => request.key)).toEqual([
      dbs.ledger.outbox.get(created.seq)?.idempotencyKey,
    ])
    expect(await foldersNamed('Lost answer', null)).toEqual([made])
    expect(dbs.ledger.outbox.get(created.seq)?.resultId).toBe(made?.id)
    expect((await service<Asset>('GET', `/v1/assets/${asset.id}`)).folder_id).toBe(made?.id)
    expect(dbs.mirror.assetFolders.get(made?.id as string)?.name).toBe('Lost answer')
  })

  it('creates a folder once when the client itself repeats the request', async () => {
    // With its retries on, the client repeats a POST that carries an Idempotency-Key.
    setFaults([{ operationId: 'createAssetFolder', reset: 'after', times: 1 }])
    const admin = replayer()
    const created = admin.createFolder('Lost, repeated by the client')
    const report = await admin.replay()
    expect(report).toMatchObject({ state: 'ok', sent: 1 })
    const made = await foldersNamed('Lost, repeated by the client', null)
    expect(made).toHaveLength(1)
    expect(dbs.ledger.outbox.get(created.seq)).toMatchObject({ attempts: 1, resultId: made[0]?.id })

    // A folder created on a first attempt by someone else is not adopted: the user hears of it.
    const clash = admin.createFolder('Lost, repeated by the client')
    expect((await admin.replay()).rejected).toBe(1)
    expect(dbs.ledger.outbox.get(clash.seq)).toMatchObject({ lastErrorCode: 'CONFLICT' })
  })

  it('deletes a folder once: gone on the repeat counts as done', async () => {
    const [folder] = await foldersNamed('Lost, repeated by the client', null)
    if (!folder) throw new Error('the previous test made no folder')
    dbs.mirror.assetFolders.upsertPage([folder])
    setFaults([{ operationId: 'deleteAssetFolder', reset: 'after', times: 1 }])
    const once = replayer(clientFor(sandbox, { retry: { maxAttempts: 1 } }))
    const removal = once.deleteFolder(folder.id)
    expectState(await once.replay(), 'offline')
    expect(dbs.mirror.assetFolders.get(folder.id)).not.toBeNull()
    const report = await once.replay()
    expect(report).toMatchObject({ state: 'ok', sent: 1 })
    expect(dbs.ledger.outbox.get(removal.seq)).toMatchObject({ state: 'sent', attempts: 2 })
    expect(dbs.mirror.assetFolders.get(folder.id)).toBeNull()
    expect(await foldersNamed('Lost, repeated by the client', null)).toEqual([])
  })

  it('stops at a 5xx and keeps the write in its place', async () => {
    setFaults([{ operationId: 'updateAsset', status: 503, times: 1 }])
    const once = replayer(clientFor(sandbox, { retry: { maxAttempts: 1 } }))
    const move = once.moveAsset(asset.id, null)
    const next = once.giveFeedback(evaluation.id as string, { isPositive: true })
    const stopped = await once.replay()
    expect(stopped).toMatchObject({ state: 'failed', code: 'SERVICE_UNAVAILABLE', sent: 0 })
    expect(pendingSeqs()).toEqual([move.seq, next.seq])
    expect(await once.replay()).toMatchObject({ state: 'ok', sent: 2 })
    expect((await service<Asset>('GET', `/v1/assets/${asset.id}`)).folder_id).toBeNull()
  })
})

describe('entries this version cannot send as they are', () => {
  it('refuses a damaged entry, and stops at a kind it does not know instead of skipping it', async () => {
    const scope = { profile: 'from-the-future', orgId }
    const future = new OutboxReplayer({
      client: clientFor(sandbox),
      ledger: dbs.ledger,
      mirror: dbs.mirror,
      profileName: scope.profile,
      orgId,
    })
    const damaged = dbs.ledger.outbox.enqueue({ ...scope, kind: 'folder.rename', payload: {} })
    const unknown = dbs.ledger.outbox.enqueue({ ...scope, kind: 'run.start', payload: {} })
    const behind = future.createFolder('Behind the unknown one')

    const aborted = await future.replay({ signal: AbortSignal.abort() })
    expect(aborted).toMatchObject({ state: 'aborted', sent: 0, rejected: 0, pending: 3 })
    expect(dbs.ledger.outbox.get(damaged.seq)?.attempts).toBe(0)

    const report = await future.replay()
    expect(report).toMatchObject({
      state: 'failed',
      code: 'UNKNOWN_WRITE_KIND',
      rejected: 1,
      pending: 2,
    })
    expect(dbs.ledger.outbox.get(damaged.seq)).toMatchObject({
      state: 'rejected',
      attempts: 0,
      lastErrorCode: 'INVALID_WRITE',
    })
    expect(dbs.ledger.outbox.get(damaged.seq)?.lastError).toContain('folderId')
    expect(dbs.ledger.outbox.get(unknown.seq)).toMatchObject({ state: 'pending' })
    expect(report.message).toContain('update Atelier')
    expect(future.pending().map((item) => [item.seq, item.write === null])).toEqual([
      [unknown.seq, true],
      [behind.seq, false],
    ])
    expect(await foldersNamed('Behind the unknown one', null)).toEqual([])
  })
})

function atelier(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<CliRun> {
  return runAtelier(args, { env, input })
}

describe.skipIf(!tools.available)(
  'atelier feedback and atelier outbox, end to end',
  { timeout: 180_000 },
  () => {
    const cliData = join(scratch, 'cli-sandbox')
    const home = join(scratch, 'cli-home')
    let keyring: SecretServiceSession
    let cliSandbox: RunningSandbox
    const cli = (...args: string[]) => atelier(['--home', home, ...args], keyring.env)
    const addProfile = (name: string, key: string) =>
      atelier(
        ['--home', home, 'profile', 'add', name, '--base-url', cliSandbox.url],
        keyring.env,
        key,
      )

    beforeAll(async () => {
      keyring = await startSecretService()
      cliSandbox = await startSandbox({ dataDir: cliData, latencyMs: 0, checkResponses: true })
      await seedHistory(cliSandbox.services, cliSandbox.orgId, 30)
    }, 60_000)

    afterAll(async () => {
      await cliSandbox.close()
      await keyring.close()
    })

    it('saves feedback given offline and sends it with `outbox send` once the service is back', async () => {
      expect((await addProfile('work', cliSandbox.keys.admin)).code).toBe(0)
      // The mirror as a sync leaves it: the profile names no organization, so the command
      // learns the evaluation's organization from its synced copy while offline.
      const local = openDatabases(home)
      try {
        const synced = await new SyncEngine({
          client: clientFor(cliSandbox),
          mirror: local.mirror,
          profileName: 'work',
          orgId: cliSandbox.orgId,
        }).syncAll({ collections: ['evaluations'] })
        expect(synced.state).toBe('ok')
      } finally {
        local.close()
      }
      const listed = await fetch(
        `${cliSandbox.url}/v1/evaluations?limit=1&q=${encodeURIComponent('status_code=completed')}`,
        { headers: { Authorization: `Bearer ${cliSandbox.keys.admin}` } },
      )
      const [rated] = ((await listed.json()) as Page<Evaluation>).items
      const id = rated?.id as string

      await cliSandbox.close()
      const offline = await cli('feedback', id, '--negative', '--comment', 'Too busy')
      expect(offline.stderr).toBe('')
      expect(offline.code).toBe(0)
      expect(offline.stdout).toContain('saved; it will be sent when the service is reachable')
      const waiting = await cli('--json', 'outbox')
      expect(waiting.code).toBe(0)
      const { entries } = JSON.parse(waiting.stdout) as {
        entries: { seq: number; state: string; kind: string; attempts: number }[]
      }
      expect(entries).toEqual([
        expect.objectContaining({ state: 'pending', kind: 'evaluation.feedback', attempts: 1 }),
      ])
      const human = await cli('outbox', '--state', 'pending')
      expect(human.stdout).toMatch(/^#\d+\s+pending\s+1 attempt\s+.*thumbs-down on evaluation/m)
      expect(human.stdout).toContain('last error (NETWORK_ERROR)')

      // Back, on a new address and with new keys: the profile is added again for it.
      cliSandbox = await startSandbox({ dataDir: cliData, latencyMs: 0, checkResponses: true })
      expect((await cli('profile', 'remove', 'work')).code).toBe(0)
      expect((await addProfile('work', cliSandbox.keys.admin)).code).toBe(0)
      const sent = await cli('outbox', 'send')
      expect(sent.stderr).toBe('')
      expect(sent.code).toBe(0)
      expect(sent.stdout).toContain('Sent 1, refused 0, 0 still waiting.')
      const after = await fetch(`${cliSandbox.url}/v1/evaluations/${id}`, {
        headers: { Authorization: `Bearer ${cliSandbox.keys.admin}` },
      })
      expect(await after.json()).toMatchObject({
        feedback_is_positive: false,
        feedback_reason: 'Too busy',
      })
      expect((await cli('outbox', 'send')).stdout).toContain('Nothing to send')

      // A key without evaluations:edit: refused, exit 1 with the service's words, kept.
      expect((await addProfile('limited', cliSandbox.keys.limited)).code).toBe(0)
      const refused = await cli('--profile', 'limited', 'feedback', id, '--positive')
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('evaluations:edit')
      const kept = await cli('--profile', 'limited', '--json', 'outbox', '--state', 'rejected')
      const [entry] = (JSON.parse(kept.stdout) as { entries: { seq: number }[] }).entries
      expect(entry).toMatchObject({ lastErrorCode: 'PERMISSION_DENIED' })
      const seq = String(entry?.seq)

      // Retried with the same key it is refused again; discarded once seen, it is gone.
      const again = await cli('--profile', 'limited', 'outbox', 'retry', seq)
      expect(again.code).toBe(1)
      expect(again.stderr).toContain('refused')
      const discarded = await cli('outbox', 'discard', seq)
      expect(discarded.code).toBe(0)
      expect(discarded.stdout).toContain(`Discarded #${seq}`)
      expect((await cli('outbox', 'discard', seq)).code).toBe(2)
      const none = await cli('--profile', 'limited', 'outbox', '--state', 'rejected')
      expect(none.stdout).toContain('No rejected writes in the outbox for profile limited.')

      const usage = await cli('feedback', id, '--positive', '--negative')
      expect(usage.code).toBe(2)
      expect(usage.stderr).toContain('exactly one of --positive, --negative or --clear')
    })
  },
)

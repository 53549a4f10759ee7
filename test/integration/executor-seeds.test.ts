import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import { RANDOM_SEED_BEHAVIOR, seedModeOf } from '../../src-shared/domain/flow'
import { openDatabases, type Databases } from '../../src-main/db'
import {
  mirrorModels,
  onlineCatalog,
  parseFlowDocument,
  RemoteRunner,
  runFlow,
  type FlowDocument,
  type FlowRunResult,
  type OnlineCatalog,
  type RunFlowOptions,
} from '../../src-main/executor'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Seeds are inputs (issue 19): a model node's seed left on the dice is drawn by the client before
 * dispatch, sent to the service and recorded with the run; a locked seed is sent as it is; an
 * unchanged re-run ("same seed") comes from the cache, and a forced one ("new seed") draws again.
 */

let sandbox: TestSandbox
let client: ServiceClient
let home: string
let dbs: Databases
let online: OnlineCatalog
let remote: RemoteRunner
let textToImage: string
const PROFILE = 'seeds'

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 10 })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  home = mkdtempSync(join(tmpdir(), 'atelier-executor-seeds-'))
  dbs = openDatabases(home)
  // The online catalog fetches what the flow names from the service: no sync is needed.
  const page = await client.get('/v1/models', { params: { query: { limit: 100 } } })
  const model = page.items.find((item) => item.slug === 'atelier/text-to-image')
  if (!model) throw new Error('The sandbox has no text-to-image model.')
  textToImage = model.id
  online = onlineCatalog({ mirror: dbs.mirror, client, orgId: sandbox.orgId })
  remote = new RemoteRunner({
    client,
    ledger: dbs.ledger,
    profile: PROFILE,
    orgId: sandbox.orgId,
    models: mirrorModels(dbs.mirror, sandbox.orgId),
    poll: { initialMs: 10, maxMs: 100 },
  })
}, 60_000)

afterAll(async () => {
  dbs.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

/** One text-to-image node; `seed` is its seed input as the flow file holds it, or none. */
function pictureFlow(prompt: string, seed?: { value: unknown; behavior_code?: string | null }) {
  const nodeId = randomUUID()
  const parsed = parseFlowDocument({
    id: randomUUID(),
    name: `Seeds ${prompt}`,
    nodes: [
      {
        id: nodeId,
        label: 'Picture',
        type_code: 'model',
        model_id: textToImage,
        inputs: [
          { id: randomUUID(), name: 'prompt', variable_type_code: 'text', value: prompt },
          ...(seed
            ? [{ id: randomUUID(), name: 'seed', variable_type_code: 'seed', ...seed }]
            : []),
        ],
        outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
      },
    ],
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return { flow: parsed.flow, nodeId }
}

function run(
  flow: FlowDocument,
  options: Partial<RunFlowOptions> = {},
): Promise<FlowRunResult & { events: FlowRunEvent[] }> {
  const events: FlowRunEvent[] = []
  return runFlow({
    flow,
    runners: { model: remote },
    catalog: online,
    ledger: dbs.ledger,
    client,
    profile: PROFILE,
    orgId: sandbox.orgId,
    ...options,
    onEvent: (event) => events.push(event),
  }).then((result) => ({ ...result, events }))
}

/** The runs the sandbox made for one flow run, as the service records them. */
async function runsOf(flowRunId: string): Promise<Run[]> {
  const runs: Run[] = []
  for await (const item of client.list('/v1/runs', { params: { query: { limit: 500 } } })) {
    const metadata = item.metadata as { atelier_flow_run_id?: string } | null
    if (metadata?.atelier_flow_run_id === flowRunId) runs.push(item)
  }
  return runs
}

/** The seed the client sent for a node of a flow run, as the ledger recorded the request. */
function sentSeed(flowRunId: string, nodeId: string): unknown {
  const intents = dbs.ledger.intents.forNode(flowRunId, nodeId)
  expect(intents).toHaveLength(1)
  return (intents[0]?.request as { input?: Record<string, unknown> }).input?.seed
}

const seedOf = (run: Run | undefined) => run?.input.seed

describe('a seed left on the dice', () => {
  const prompt = `a teal harbour ${randomUUID().slice(0, 8)}`
  // Made in the first test: the model's id is known only once the sandbox runs.
  let flow: FlowDocument
  let nodeId: string
  let first: FlowRunResult & { events: FlowRunEvent[] }
  let firstSeed: number

  it('is drawn by the client, sent, and recorded as an input of the run', async () => {
    ;({ flow, nodeId } = pictureFlow(prompt))
    first = await run(flow)
    expect(first.state).toBe('succeeded')
    expect(first.totals).toMatchObject({ dispatched: 1, cached: 0 })
    const sent = sentSeed(first.flowRunId, nodeId)
    expect(Number.isSafeInteger(sent)).toBe(true)
    firstSeed = sent as number
    expect(firstSeed).toBeGreaterThanOrEqual(0)
    expect(firstSeed).toBeLessThan(2 ** 32)
    // The service ran with exactly that seed, and its run says so.
    const runs = await runsOf(first.flowRunId)
    expect(runs).toHaveLength(1)
    expect(seedOf(runs[0])).toBe(firstSeed)
    expect(runs[0]?.id).toBe(first.nodes[0]?.remoteRunId)
    // The user is told which seed was drawn, in words.
    const logs = first.events.flatMap((e) => (e.type === 'node-log' ? [e.message] : []))
    expect(logs).toContain(
      `Drew seed ${firstSeed} for this run. Lock it in the node's inspector to keep it.`,
    )
  }, 60_000)

  it('"same seed": an unchanged re-run dispatches nothing and costs nothing', async () => {
    const again = await run(flow)
    expect(again.state).toBe('succeeded')
    expect(again.totals).toMatchObject({ dispatched: 0, cached: 1, costMicro: 0 })
    expect(again.outputs).toEqual(first.outputs)
    expect(await runsOf(again.flowRunId)).toEqual([])
    expect(dbs.ledger.intents.forNode(again.flowRunId, nodeId)).toEqual([])
  }, 60_000)

  it('"new seed": a forced re-run dispatches once, with another seed', async () => {
    const fresh = await run(flow, { force: [nodeId] })
    expect(fresh.state).toBe('succeeded')
    expect(fresh.totals).toMatchObject({ dispatched: 1, cached: 0 })
    const runs = await runsOf(fresh.flowRunId)
    expect(runs).toHaveLength(1)
    const seed = sentSeed(fresh.flowRunId, nodeId)
    expect(seed).not.toBe(firstSeed)
    expect(seedOf(runs[0])).toBe(seed)
  }, 60_000)

  it('resuming a flow run sends the seed it drew before, so nothing is paid twice', async () => {
    // The first try stops right after the request was committed to the ledger, as a crash would.
    const crashing = new RemoteRunner({
      client,
      ledger: dbs.ledger,
      profile: PROFILE,
      orgId: sandbox.orgId,
      models: mirrorModels(dbs.mirror, sandbox.orgId),
      onPoint: (point) => {
        if (point === 'intent-committed') throw new Error('stopped before sending')
      },
    })
    const stopped = await run(flow, { runners: { model: crashing }, force: [nodeId] })
    expect(stopped.state).toBe('failed')
    const committed = sentSeed(stopped.flowRunId, nodeId)

    const resumed = await run(flow, { flowRunId: stopped.flowRunId, force: [nodeId] })
    expect(resumed.resumed).toBe(true)
    expect(resumed.state).toBe('succeeded')
    // The same request went out: one intent, one run, with the seed drawn the first time.
    expect(sentSeed(stopped.flowRunId, nodeId)).toBe(committed)
    const runs = await runsOf(stopped.flowRunId)
    expect(runs).toHaveLength(1)
    expect(seedOf(runs[0])).toBe(committed)
  }, 60_000)
})

describe("the run page's re-run", () => {
  it('keeps the recorded seed ("same seed") or draws another ("new seed")', async () => {
    const { flow: picture } = pictureFlow(`a gold bridge ${randomUUID().slice(0, 8)}`)
    const made = await run(picture)
    const original = made.nodes[0]?.remoteRunId
    if (!original) throw new Error('The node made no run.')
    // Loaded here: the run page brings the sync engine, which the executor does not need.
    const { RunPageService } = await import('../../src-main/review/run-page')
    const { osKeychain } = await import('../../src-main/secrets')
    const page = new RunPageService({
      databases: dbs,
      client,
      profile: PROFILE,
      orgId: sandbox.orgId,
      keychain: osKeychain('aix'),
    })
    const shown = (await page.refresh({ runId: original })).detail.run
    const seed = seedOf(shown)
    expect(Number.isSafeInteger(seed)).toBe(true)

    const same = await page.rerun({ runId: original, idempotencyKey: randomUUID() })
    const sameRun = await client.get('/v1/runs/{run_id}', {
      params: { path: { run_id: same.runId } },
    })
    expect(sameRun.input).toEqual(shown.input)

    const fresh = await page.rerun({ runId: original, idempotencyKey: randomUUID(), seed: 'new' })
    const freshRun = await client.get('/v1/runs/{run_id}', {
      params: { path: { run_id: fresh.runId } },
    })
    expect(freshRun.model_id).toBe(shown.model_id)
    expect(seedOf(freshRun)).not.toBe(seed)
    expect({ ...freshRun.input, seed }).toEqual(shown.input)
  }, 60_000)
})

describe('a locked seed', () => {
  it('is sent as it is, and is part of what the cache sees', async () => {
    const prompt = `a gold lantern ${randomUUID().slice(0, 8)}`
    const locked = pictureFlow(prompt, { value: 4242 })
    const result = await run(locked.flow)
    expect(result.state).toBe('succeeded')
    expect(sentSeed(result.flowRunId, locked.nodeId)).toBe(4242)
    expect(seedOf((await runsOf(result.flowRunId))[0])).toBe(4242)
    expect(result.events.some((e) => e.type === 'node-log' && e.message.startsWith('Drew'))).toBe(
      false,
    )

    // Another locked seed is other work: it runs, with that seed.
    const other = pictureFlow(prompt, { value: 7 })
    const second = await run(other.flow)
    expect(second.totals).toMatchObject({ dispatched: 1, cached: 0 })
    expect(sentSeed(second.flowRunId, other.nodeId)).toBe(7)
  }, 60_000)

  it('on the dice (behavior randomize), a kept value is not sent: a seed is drawn', async () => {
    const prompt = `a navy kite ${randomUUID().slice(0, 8)}`
    const dice = pictureFlow(prompt, { value: 4242, behavior_code: RANDOM_SEED_BEHAVIOR })
    const result = await run(dice.flow)
    expect(result.state).toBe('succeeded')
    const sent = sentSeed(result.flowRunId, dice.nodeId)
    expect(Number.isSafeInteger(sent)).toBe(true)
    expect(sent).not.toBe(4242)
  }, 60_000)
})

describe('the seed mode in the flow file', () => {
  it('reads old files without a mode: an empty seed is on the dice, a value is locked', () => {
    expect(seedModeOf(undefined)).toBe('random')
    expect(seedModeOf({ value: null, behavior_code: null })).toBe('random')
    expect(seedModeOf({ value: 12, behavior_code: null })).toBe('locked')
    expect(seedModeOf({ value: 12, behavior_code: RANDOM_SEED_BEHAVIOR })).toBe('random')
    const old = parseFlowDocument({
      id: randomUUID(),
      name: 'Old file',
      nodes: [
        {
          id: randomUUID(),
          label: 'Picture',
          type_code: 'model',
          model_id: randomUUID(),
          inputs: [{ id: randomUUID(), name: 'seed', variable_type_code: 'seed', value: 3 }],
        },
      ],
    })
    expect(old.ok).toBe(true)
    const kept = pictureFlow('kept', { value: 3, behavior_code: RANDOM_SEED_BEHAVIOR }).flow
    const reread = parseFlowDocument(JSON.parse(JSON.stringify(kept)))
    expect(reread.ok && seedModeOf(reread.flow.nodes[0]?.inputs[1])).toBe('random')
  })
})

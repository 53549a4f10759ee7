import { spawn } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Batch, FlowNode, Run, RunLog } from '../../src-shared/api'
import { openDatabases, type Databases, type Intent } from '../../src-main/db'
import {
  inputsHash,
  isRemoteNodeError,
  portValue,
  presignedExpiryMs,
  RemoteRunner,
  type DispatchPoint,
  type RemoteNodeError,
  type RemoteRunnerOptions,
} from '../../src-main/executor/remote'
import type { MediaRef, NodeEvent, NodeOutcome, PortValue } from '../../src-main/executor/types'
import type { FaultRule } from '../../src-main/sandbox/faults'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CHILD = join(root, 'test', 'helpers', 'executor-crash-child.ts')
const POLL = { initialMs: 10, maxMs: 100 }

let sandbox: TestSandbox
let client: ServiceClient
let home: string
let databases: Databases
const modelIds = new Map<string, string>()

/** How far the sandbox's clock (and a runner's, when a test gives it) is ahead of this one's. */
let shift = 0
const shiftedClock = () => Date.now() + shift

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 30, clock: shiftedClock })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  home = mkdtempSync(join(tmpdir(), 'atelier-executor-remote-'))
  databases = openDatabases(home)
  for (const slug of [
    'atelier/text-to-image',
    'atelier/flaky',
    'atelier/slow-render',
    'atelier/upscale',
  ]) {
    const page = await client.get('/v1/models', { params: { query: { q: `slug=${slug}` } } })
    modelIds.set(slug, page.items[0]?.id ?? '')
  }
})

afterAll(async () => {
  databases.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

afterEach(async () => {
  await sandbox.call('DELETE', '/_sandbox/faults')
})

// ---------------------------------------------------------------------------------------------
// Building nodes and contexts

const STAMP = '2026-01-01T00:00:00+00:00'

interface Port {
  name: string
  type: string
}

function flowNode(
  fields: Omit<Partial<FlowNode>, 'inputs' | 'outputs'> & { inputs?: Port[]; outputs?: Port[] },
): FlowNode {
  const id = randomUUID()
  const flowId = randomUUID()
  const { inputs = [], outputs = [], ...rest } = fields
  return {
    id,
    flow_id: flowId,
    slug: null,
    label: 'Node',
    subtitle: null,
    type_code: 'model',
    x: 0,
    y: 0,
    width: 240,
    config: {},
    collapsed: false,
    model_id: null,
    builtin_node_code: null,
    wfengine_workflow_id: null,
    sub_flow_id: null,
    created_at: STAMP,
    updated_at: STAMP,
    ...rest,
    inputs: inputs.map((port, index) => ({
      id: randomUUID(),
      flow_node_id: id,
      name: port.name,
      display_name: null,
      variable_type_code: port.type,
      validator_code: null,
      validator_attrs: null,
      is_required: false,
      default_value: null,
      sort_order: index,
      behavior_code: null,
      value: null,
      source_output_id: null,
      connection_label: null,
      connection_style_code: null,
      retry_source_output_id: null,
      created_at: STAMP,
      updated_at: STAMP,
    })),
    outputs: outputs.map((port, index) => ({
      id: randomUUID(),
      flow_node_id: id,
      name: port.name,
      display_name: null,
      variable_type_code: port.type,
      validator_code: null,
      validator_attrs: null,
      sort_order: index,
      created_at: STAMP,
      updated_at: STAMP,
    })),
  }
}

function imageNode(slug = 'atelier/text-to-image', config: Record<string, unknown> = {}) {
  return flowNode({
    label: slug,
    model_id: modelIds.get(slug) ?? null,
    config,
    inputs: [
      { name: 'prompt', type: 'text' },
      { name: 'width', type: 'integer' },
      { name: 'height', type: 'integer' },
      { name: 'seed', type: 'seed' },
      { name: 'failure_rate', type: 'number' },
    ],
    outputs: [{ name: 'image', type: 'image' }],
  })
}

function upscaleNode() {
  return flowNode({
    label: 'Upscale',
    model_id: modelIds.get('atelier/upscale') ?? null,
    inputs: [
      { name: 'image', type: 'image' },
      { name: 'scale', type: 'integer' },
    ],
    outputs: [{ name: 'image', type: 'image' }],
  })
}

function runner(options: Partial<RemoteRunnerOptions> = {}): RemoteRunner {
  return new RemoteRunner({
    client,
    ledger: databases.ledger,
    profile: 'default',
    orgId: sandbox.orgId,
    poll: POLL,
    ...options,
  })
}

interface Run1 {
  outcome?: NodeOutcome
  error?: RemoteNodeError
  events: NodeEvent[]
  flowRunId: string
}

async function runNode(
  remote: RemoteRunner,
  node: FlowNode,
  inputs: Record<string, PortValue>,
  options: { flowRunId?: string; signal?: AbortSignal; onEvent?: (e: NodeEvent) => void } = {},
): Promise<Run1> {
  const events: NodeEvent[] = []
  const flowRunId = options.flowRunId ?? randomUUID()
  try {
    const outcome = await remote.run({
      flowRunId,
      node,
      inputs,
      attempt: 1,
      signal: options.signal ?? new AbortController().signal,
      emit: (event) => {
        events.push(event)
        options.onEvent?.(event)
      },
    })
    return { outcome, events, flowRunId }
  } catch (error) {
    if (!isRemoteNodeError(error)) throw error
    return { error, events, flowRunId }
  }
}

// ---------------------------------------------------------------------------------------------
// Reading the sandbox

async function getRun(id: string): Promise<Run> {
  return client.get('/v1/runs/{run_id}', { params: { path: { run_id: id } } })
}

async function runsWithKey(key: string): Promise<Run[]> {
  const page = await client.get('/v1/runs', {
    params: { query: { q: `idempotency_key=${JSON.stringify(key)}`, limit: 50 } },
  })
  return page.items
}

async function allRuns(): Promise<Run[]> {
  const runs: Run[] = []
  for await (const run of client.list('/v1/runs', { params: { query: { limit: 500 } } })) {
    runs.push(run)
  }
  return runs
}

async function allBatches(): Promise<Batch[]> {
  const batches: Batch[] = []
  for await (const batch of client.list('/v1/batches', { params: { query: { limit: 500 } } })) {
    batches.push(batch)
  }
  return batches
}

async function logsOf(runId: string): Promise<RunLog[]> {
  const page = await client.get('/v1/runs/{run_id}/logs', {
    params: { path: { run_id: runId }, query: { limit: 500, sort_by: 'created_at:asc' } },
  })
  return page.items
}

async function sha256Of(url: string): Promise<string> {
  const response = await fetch(url)
  expect(response.status).toBe(200)
  return createHash('sha256')
    .update(Buffer.from(await response.arrayBuffer()))
    .digest('hex')
}

function intentOf(flowRunId: string, nodeId: string): Intent {
  const [intent, ...others] = databases.ledger.intents.forNode(flowRunId, nodeId)
  expect(others).toEqual([])
  if (!intent) throw new Error('no intent')
  return intent
}

async function setFaults(rules: FaultRule[]): Promise<void> {
  const answer = await sandbox.call('PUT', '/_sandbox/faults', { body: { rules } })
  expect(answer.status).toBe(200)
}

function asMedia(value: PortValue): MediaRef {
  expect(value).toMatchObject({ kind: 'media', content_type: 'image/png' })
  return value as MediaRef
}

// ---------------------------------------------------------------------------------------------

describe('a model node', () => {
  it('commits its intent before sending, follows the run and answers MediaRefs', async () => {
    const node = imageNode()
    const inputs = { prompt: 'a red fox', width: 64, height: 64, seed: 7 }
    const states: Record<string, string | undefined> = {}
    const remote = runner({
      onPoint: (point, at) => {
        states[point] = at.intentId
          ? databases.ledger.intents.get(at.intentId)?.state
          : `none:${databases.ledger.intents.forNode(flowRunId, node.id).length}`
      },
    })
    const flowRunId = randomUUID()
    let whileFollowing: string | undefined
    const { outcome, events, error } = await runNode(remote, node, inputs, {
      flowRunId,
      onEvent: (event) => {
        if (event.type === 'remote-run') {
          whileFollowing = databases.ledger.intents.forNode(flowRunId, node.id)[0]?.state
        }
      },
    })
    expect(error).toBeUndefined()
    expect(states).toEqual({
      'before-intent': 'none:0',
      'intent-committed': 'prepared',
      'sending-committed': 'sending',
      answered: 'sending',
    })
    expect(whileFollowing).toBe('dispatched')

    const intent = intentOf(flowRunId, node.id)
    const run = await getRun(outcome?.remoteRunId ?? '')
    expect(intent).toMatchObject({
      state: 'succeeded',
      remoteRunId: run.id,
      targetTypeCode: 'model',
      targetRef: 'atelier/text-to-image',
      inputsHash: inputsHash(inputs),
      attempts: 1,
      flowRunId,
      nodeId: node.id,
    })
    expect(run.idempotency_key).toBe(intent.idempotencyKey)
    expect(run.metadata).toEqual({
      atelier_intent_id: intent.id,
      atelier_flow_run_id: flowRunId,
      atelier_node_id: node.id,
      atelier_attempt: 1,
    })
    expect(intent.request).toEqual({ input: inputs, metadata: run.metadata })
    expect(run.status_code).toBe('succeeded')

    const image = asMedia(outcome?.outputs.image)
    expect(image).toMatchObject({ width: 64, height: 64 })
    expect(await sha256Of(image.url)).toBe(image.sha256)
    expect(outcome?.costMicro).toBe(5000)
    expect(events.filter((e) => e.type === 'remote-run')).toEqual([
      { type: 'remote-run', runId: run.id },
    ])
    expect(events.filter((e) => e.type === 'cost')).toEqual([{ type: 'cost', costMicro: 5000 }])
    const progress = events.filter((e) => e.type === 'progress')
    expect(progress.at(-1)).toEqual({ type: 'progress', fraction: 1, message: 'succeeded' })

    // The same node run again (a resumed flow run) reads the paid work back: no second run.
    const again = await runNode(remote, node, inputs, { flowRunId })
    expect(again.outcome?.remoteRunId).toBe(run.id)
    expect((again.outcome?.outputs.image as MediaRef).sha256).toBe(image.sha256)
    expect(await runsWithKey(intent.idempotencyKey)).toHaveLength(1)
    expect(databases.ledger.intents.forNode(flowRunId, node.id)).toHaveLength(1)

    // A new attempt (a quality gate sent the node back) is new work.
    const retry = await remote.run({
      flowRunId,
      node,
      inputs,
      attempt: 2,
      signal: new AbortController().signal,
      emit: () => undefined,
    })
    expect(retry.remoteRunId).not.toBe(run.id)
    expect(databases.ledger.intents.forNode(flowRunId, node.id)).toHaveLength(2)
  })

  it('tells every log line of the run once, in order', async () => {
    const node = imageNode('atelier/slow-render')
    const { outcome, events, error } = await runNode(
      runner({ poll: { initialMs: 5, maxMs: 20 } }),
      node,
      {
        prompt: 'orange sunrise',
        width: 64,
        height: 64,
      },
    )
    expect(error).toBeUndefined()
    const told = events.flatMap((e) => (e.type === 'log' ? [e.message] : []))
    const logs = await logsOf(outcome?.remoteRunId ?? '')
    expect(logs.length).toBeGreaterThan(3)
    expect(told).toEqual(logs.map((line) => line.message))
    // Polled often enough to see the run in progress, not only its end.
    const fractions = events.flatMap((e) => (e.type === 'progress' ? [e.message] : []))
    expect(fractions).toContain('running')
  })

  const TERMINAL = ['succeeded', 'failed', 'canceled']

  it('looks at a run when the recent runs of its model say it is due, and reads its logs then', async () => {
    const requests: { method: string; path: string; at: number; status?: string }[] = []
    const counting = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      fetch: async (input, init) => {
        const request = input instanceof Request ? input : new Request(input, init)
        const seen: (typeof requests)[number] = {
          method: request.method,
          path: new URL(request.url).pathname,
          at: performance.now(),
        }
        requests.push(seen)
        const response = await fetch(input, init)
        const body = (await response.clone().json()) as { status_code?: unknown }
        if (typeof body.status_code === 'string') seen.status = body.status_code
        return response
      },
    })
    // The history says this model takes 250 ms; at this sandbox's latency it takes ~30 ms.
    const asked: string[] = []
    const remote = runner({
      client: counting,
      poll: {},
      durations: (target) => {
        asked.push(target)
        return [240, 250, 260]
      },
    })
    // Before the runner notes when it sent the dispatch (the time its first look counts from):
    // the request's own time, taken inside fetch, comes after it by however long the client
    // took, which on a busy machine ate into the 250 ms and failed this for no fault.
    const beforeDispatch = performance.now()
    const { outcome, error } = await runNode(remote, imageNode(), {
      prompt: 'timed polls',
      width: 64,
      height: 64,
      seed: 11,
    })
    expect(error).toBeUndefined()
    expect(asked).toEqual(['atelier/text-to-image'])
    const runId = outcome?.remoteRunId ?? ''
    const dispatch = requests.find((r) => r.method === 'POST' && r.path.endsWith('/runs'))
    const reads = requests.filter((r) => r.path === `/v1/runs/${runId}`)
    const logReads = requests.filter((r) => r.path === `/v1/runs/${runId}/logs`)
    // Not looked at before it was due. By then it has most likely finished (one look); on a
    // machine busy enough to hold it, each look that found it at work is followed by another,
    // and only the last finds it done. Its logs are read once, after that.
    expect(reads.length).toBeGreaterThanOrEqual(1)
    expect(reads.slice(0, -1).every((read) => !TERMINAL.includes(read.status ?? ''))).toBe(true)
    expect(TERMINAL).toContain(reads.at(-1)?.status)
    expect(logReads).toHaveLength(1)
    expect(logReads[0]?.at ?? 0).toBeGreaterThanOrEqual(reads.at(-1)?.at ?? Infinity)
    expect(dispatch).toBeDefined()
    expect((reads[0]?.at ?? 0) - beforeDispatch).toBeGreaterThanOrEqual(250)
  })

  it('fails with NODE_FAILED and the service message when the run fails', async () => {
    const node = imageNode('atelier/flaky')
    const { error, flowRunId } = await runNode(runner(), node, {
      prompt: 'x',
      failure_rate: 1,
    })
    expect(error?.code).toBe('NODE_FAILED')
    const intent = intentOf(flowRunId, node.id)
    const run = await getRun(intent.remoteRunId ?? '')
    expect(run.status_code).toBe('failed')
    expect(error?.message).toBe(run.failure_message)
    expect(error?.failureCode).toBe('MODEL_ERROR')
    expect(intent.state).toBe('failed')
    expect(intent.lastError).toContain('MODEL_ERROR')
  })

  it('cancels the remote run when the node run is canceled mid-run', async () => {
    const node = imageNode('atelier/slow-render')
    const controller = new AbortController()
    const { error, flowRunId } = await runNode(
      runner(),
      node,
      { prompt: 'slow', width: 64, height: 64 },
      {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'progress' && event.message === 'running') controller.abort()
        },
      },
    )
    expect(error?.code).toBe('CANCELED')
    const intent = intentOf(flowRunId, node.id)
    expect(intent.state).toBe('canceled')
    const run = await getRun(intent.remoteRunId ?? '')
    expect(run.status_code).toBe('canceled')
    expect(error?.remoteRunId).toBe(run.id)
  })

  it('answers INSUFFICIENT_CREDIT when the balance cannot cover the run, creating nothing', async () => {
    const low = await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '0.000001' } })
    expect(low.status).toBe(200)
    try {
      const node = imageNode()
      const { error, flowRunId } = await runNode(runner(), node, { prompt: 'costly' })
      expect(error?.code).toBe('INSUFFICIENT_CREDIT')
      expect(error?.message).toMatch(/balance is too low to run atelier\/text-to-image/)
      expect(error?.message).toMatch(/Top up the balance/)
      const intent = intentOf(flowRunId, node.id)
      expect(intent.state).toBe('failed')
      expect(await runsWithKey(intent.idempotencyKey)).toEqual([])
    } finally {
      await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '1000' } })
    }
  })

  it('estimates what the service holds for the run', async () => {
    const remote = runner()
    const cases: [string, Record<string, unknown>][] = [
      ['atelier/text-to-image', { prompt: 'a', width: 64, height: 64 }],
      ['atelier/text-to-image', { prompt: 'a', width: 1024, height: 1024, num_images: 2 }],
      ['atelier/text-to-video', { prompt: 'a' }],
      ['atelier/text-to-video', { prompt: 'a', duration_seconds: 3, fps: 10 }],
      ['atelier/flaky', {}],
    ]
    for (const [slug, input] of cases) {
      const page = await client.get('/v1/models', { params: { query: { q: `slug=${slug}` } } })
      const node = flowNode({ label: slug, model_id: page.items[0]?.id ?? null })
      await remote.loadModels([node])
      const [provider = '', model = ''] = slug.split('/')
      const run = await client.post('/v1/models/{provider}/{model}/runs', {
        params: { path: { provider, model } },
        body: { input },
      })
      const held = Math.round(Number(run.estimated_cost) * 1_000_000)
      expect(remote.estimate(node, input), `${slug} ${JSON.stringify(input)}`).toBe(held)
    }
    const fanned = imageNode()
    expect(remote.estimate(fanned, { prompt: ['a', 'b', 'c'], width: 64, height: 64 })).toBe(15000)
    expect(() => remote.estimate(flowNode({ label: 'x', model_id: randomUUID() }), {})).toThrow(
      expect.objectContaining({ code: 'MODEL_UNKNOWN' }),
    )
  })

  it('sends media inputs by URL or inline, and names them by content', async () => {
    const remote = runner()
    const first = await runNode(remote, imageNode(), { prompt: 'teal', width: 64, height: 64 })
    const image = asMedia(first.outcome?.outputs.image)
    const file = join(home, 'input.png')
    writeFileSync(file, Buffer.from(await (await fetch(image.url)).arrayBuffer()))
    const local: MediaRef = { ...image, url: file }
    expect(inputsHash({ image: local, scale: 2 })).toBe(inputsHash({ image, scale: 2 }))

    for (const input of [image, local]) {
      const node = upscaleNode()
      const { outcome, error, flowRunId } = await runNode(remote, node, { image: input, scale: 2 })
      expect(error).toBeUndefined()
      expect(asMedia(outcome?.outputs.image)).toMatchObject({ width: 128, height: 128 })
      const sent = (intentOf(flowRunId, node.id).request as { input: { image: string } }).input
      expect(sent.image).toEqual(
        input === image ? image.url : expect.stringMatching(/^data:image\/png;base64,/),
      )
    }

    // A file the service names without its hash is downloaded and hashed.
    const run = await getRun(first.outcome?.remoteRunId ?? '')
    const [file0] = run.output?.images as Record<string, unknown>[]
    const { sha256: _dropped, ...unnamed } = file0 ?? {}
    const named = await portValue({ images: [unnamed] })
    expect(named).toEqual({
      images: [expect.objectContaining({ kind: 'media', sha256: image.sha256 })],
    })
  })

  it('sends a fresh URL for an output whose URL has expired since it was made', async () => {
    const made = await runNode(runner(), imageNode(), {
      prompt: 'kept for days',
      width: 64,
      height: 64,
      seed: 21,
    })
    const image = asMedia(made.outcome?.outputs.image)
    expect(image.run_id).toBe(made.outcome?.remoteRunId)
    const expires = presignedExpiryMs(image.url)
    expect(expires).toBeGreaterThan(Date.now())
    try {
      // A minute past the URL's expiry, for the sandbox and for the runner that knows it.
      shift = (expires ?? 0) - Date.now() + 60_000
      const unaware = await runNode(runner(), upscaleNode(), { image, scale: 2 })
      expect(unaware.error?.code).toBe('NODE_FAILED')
      expect(unaware.error?.message).toMatch(/expired/)

      const node = upscaleNode()
      const aware = await runNode(runner({ clock: shiftedClock }), node, { image, scale: 2 })
      expect(aware.error).toBeUndefined()
      const sent = (intentOf(aware.flowRunId, node.id).request as { input: { image: string } })
        .input.image
      expect(sent).not.toBe(image.url)
      expect(presignedExpiryMs(sent)).toBeGreaterThan(shiftedClock())
      expect(asMedia(aware.outcome?.outputs.image)).toMatchObject({ width: 128, height: 128 })
    } finally {
      shift = 0
    }
  })

  it('runs a workflow-engine node through its runs endpoint', async () => {
    const workflow = await client.post('/v1/comfyui-workflows', {
      body: {
        name: 'Picture from an idea',
        workflow_json: {
          nodes: [
            { id: 1, type: 'MysteryNode' },
            { id: 2, type: 'Output' },
          ],
        },
        inputs: [
          {
            name: 'idea',
            variable_type_code: 'text',
            is_required: true,
            wfengine_node_id: '1',
            wfengine_field_name: 'idea',
          },
        ],
        outputs: [{ name: 'picture', variable_type_code: 'image', wfengine_node_id: '2' }],
      },
    })
    const node = flowNode({
      label: 'Workflow',
      type_code: 'wfengine_workflow',
      wfengine_workflow_id: workflow.id,
      inputs: [{ name: 'idea', type: 'text' }],
      outputs: [{ name: 'picture', type: 'image' }],
    })
    const { outcome, error, flowRunId } = await runNode(runner(), node, { idea: 'green waves' })
    expect(error).toBeUndefined()
    const picture = asMedia(outcome?.outputs.picture)
    expect(await sha256Of(picture.url)).toBe(picture.sha256)
    const intent = intentOf(flowRunId, node.id)
    expect(intent).toMatchObject({ state: 'succeeded', targetTypeCode: 'wfengine_workflow' })
    expect((await getRun(intent.remoteRunId ?? '')).wfengine_workflow_id).toBe(workflow.id)
  })
})

describe('fan-out', () => {
  it('sends one batch for a list and answers lists in item order', async () => {
    const before = (await allBatches()).length
    const prompts = ['red', 'green', 'blue', 'gold']
    const node = imageNode()
    const { outcome, events, error, flowRunId } = await runNode(runner(), node, {
      prompt: prompts,
      width: 64,
      height: 64,
      seed: 3,
    })
    expect(error).toBeUndefined()
    const batches = await allBatches()
    expect(batches).toHaveLength(before + 1)
    const intent = intentOf(flowRunId, node.id)
    expect(intent.state).toBe('succeeded')
    expect(outcome?.batchId).toBe(intent.remoteRunId)
    const batch = batches.find((b) => b.id === outcome?.batchId)
    expect(batch).toMatchObject({ item_count: 4, status_code: 'succeeded' })
    const runs = (await allRuns()).filter((run) => run.batch_id === batch?.id)
    expect(runs).toHaveLength(4)
    const images = outcome?.outputs.image as PortValue[]
    expect(images).toHaveLength(4)
    for (const item of batch?.items ?? []) {
      const run = runs.find((r) => r.id === item.run_id)
      expect(run?.input.prompt).toBe(prompts[item.index])
      expect(run?.metadata).toMatchObject({
        atelier_intent_id: intent.id,
        atelier_item: item.index,
      })
      const image = asMedia(images[item.index])
      expect(image.sha256).toBe((run?.output?.images as { sha256: string }[])[0]?.sha256)
    }
    expect(await sha256Of(asMedia(images[2]).url)).toBe(asMedia(images[2]).sha256)
    expect(outcome?.costMicro).toBe(20000)
    expect(events.filter((e) => e.type === 'remote-run')).toHaveLength(4)
    expect(events.filter((e) => e.type === 'log').length).toBeGreaterThan(4)
  })

  it('pays again only for the items that failed when a node whose batch partly failed runs again', async () => {
    const remote = runner()
    const node = imageNode('atelier/flaky')
    const prompts = ['paid item a', 'paid item b', 'paid item c']
    const first = await runNode(remote, node, {
      prompt: prompts,
      failure_rate: [0, 1, 0],
    })
    expect(first.error?.code).toBe('NODE_FAILED')
    expect(first.error?.message).toMatch(/1 of 3 items did not succeed; item 2/)
    const firstBatch = first.error?.batchId
    const firstRuns = (await allRuns()).filter((run) => run.batch_id === firstBatch)
    expect(firstRuns.map((run) => run.status_code).sort()).toEqual([
      'failed',
      'succeeded',
      'succeeded',
    ])

    // Again, with the failing item fixed: only that item is sent, in a batch of one.
    const before = (await allBatches()).length
    const again = await runNode(remote, node, {
      prompt: prompts,
      failure_rate: [0, 0, 0],
    })
    expect(again.error).toBeUndefined()
    const batches = await allBatches()
    expect(batches).toHaveLength(before + 1)
    const newBatch = batches.find((b) => b.id === again.outcome?.batchId)
    expect(newBatch?.item_count).toBe(1)
    const sent = (await allRuns()).filter((run) => run.batch_id === newBatch?.id)
    expect(sent.map((run) => run.input.prompt)).toEqual(['paid item b'])
    // The flaky model charges 0.001 credits per successful run.
    expect(again.outcome?.costMicro).toBe(1000)
    const images = (again.outcome?.outputs.image as PortValue[]).map(asMedia)
    expect(images).toHaveLength(3)
    const firstA = firstRuns.find((run) => run.input.prompt === 'paid item a')
    expect(images[0]?.sha256).toBe((firstA?.output?.images as { sha256: string }[])[0]?.sha256)
    expect(images[1]?.sha256).toBe((sent[0]?.output?.images as { sha256: string }[])[0]?.sha256)

    // A third time nothing is sent at all: every item was paid for already.
    const third = await runNode(remote, node, {
      prompt: prompts,
      failure_rate: [0, 0, 0],
    })
    expect(third.error).toBeUndefined()
    expect(await allBatches()).toHaveLength(before + 1)
    expect(third.outcome?.costMicro).toBe(0)
    expect((third.outcome?.outputs.image as PortValue[]).map((v) => asMedia(v).sha256)).toEqual(
      images.map((image) => image.sha256),
    )
    expect(databases.ledger.intents.forNode(third.flowRunId, node.id)).toEqual([])
  })

  it('fans out only what config.fan_out names, and refuses lists of different lengths', async () => {
    const remote = runner()
    const node = imageNode()
    const mismatch = await runNode(remote, node, { prompt: ['a', 'b'], seed: [1, 2, 3] })
    expect(mismatch.error?.code).toBe('FAN_OUT_MISMATCH')
    expect(databases.ledger.intents.forNode(mismatch.flowRunId, node.id)).toEqual([])
    const named = await runNode(remote, imageNode('atelier/text-to-image', { fan_out: ['seed'] }), {
      prompt: 'same',
      seed: [1, 2],
      width: 64,
      height: 64,
    })
    expect(named.error).toBeUndefined()
    expect(named.outcome?.outputs.image).toHaveLength(2)
    const empty = await runNode(remote, imageNode(), { prompt: [] })
    expect(empty.outcome).toEqual({ outputs: { image: [] }, costMicro: 0 })
  })
})

describe('network faults', () => {
  const scenarios: [string, FaultRule[]][] = [
    ['503 before dispatch', [{ operationId: 'dispatchModelRun', status: 503, times: 2 }]],
    ['reset before dispatch', [{ operationId: 'dispatchModelRun', reset: 'before', times: 2 }]],
    ['reset after dispatch', [{ operationId: 'dispatchModelRun', reset: 'after', times: 2 }]],
    [
      'every answer to the dispatch lost, then the look-up failing once',
      [
        { operationId: 'dispatchModelRun', reset: 'after', times: 5 },
        { operationId: 'listRuns', status: 503, times: 5 },
      ],
    ],
    [
      'faults while polling',
      [
        { operationId: 'getRun', status: 503, times: 3 },
        { operationId: 'getRun', reset: 'after', times: 2 },
        { operationId: 'listRunLogs', status: 503, times: 2 },
        { operationId: 'listRunLogs', truncate: true, times: 1 },
      ],
    ],
  ]
  for (const [name, rules] of scenarios) {
    it(`makes one remote run: ${name}`, async () => {
      await setFaults(rules)
      const node = imageNode()
      const { outcome, events, error, flowRunId } = await runNode(runner(), node, {
        prompt: name,
        width: 64,
        height: 64,
      })
      const fired = (await sandbox.call('GET', '/_sandbox/faults')).body as {
        rules: { fired: number }[]
      }
      await sandbox.call('DELETE', '/_sandbox/faults')
      expect(error).toBeUndefined()
      expect(fired.rules.every((rule) => rule.fired > 0)).toBe(true)
      const intent = intentOf(flowRunId, node.id)
      expect(intent.state).toBe('succeeded')
      const runs = await runsWithKey(intent.idempotencyKey)
      expect(runs.map((run) => run.id)).toEqual([outcome?.remoteRunId])
      const told = events.flatMap((e) => (e.type === 'log' ? [e.message] : []))
      expect(told).toEqual((await logsOf(runs[0]?.id ?? '')).map((line) => line.message))
    })
  }

  it('makes one batch when every answer to its creation is lost', async () => {
    await setFaults([{ operationId: 'createBatch', reset: 'after', times: 5 }])
    const before = (await allBatches()).length
    const node = imageNode()
    const { outcome, error, flowRunId } = await runNode(runner(), node, {
      prompt: ['one', 'two'],
      width: 64,
      height: 64,
    })
    await sandbox.call('DELETE', '/_sandbox/faults')
    expect(error).toBeUndefined()
    expect(await allBatches()).toHaveLength(before + 1)
    expect(intentOf(flowRunId, node.id).remoteRunId).toBe(outcome?.batchId)
  })
})

/** Every run the sandbox holds for these flow runs, grouped by the intent its metadata names. */
async function runsByIntent(flowRuns: ReadonlySet<string>): Promise<Map<string, Run[]>> {
  const byIntent = new Map<string, Run[]>()
  for (const run of await allRuns()) {
    const meta = run.metadata as { atelier_intent_id?: string; atelier_flow_run_id?: string } | null
    if (!meta?.atelier_flow_run_id || !flowRuns.has(meta.atelier_flow_run_id)) continue
    const list = byIntent.get(meta.atelier_intent_id ?? '') ?? []
    list.push(run)
    byIntent.set(meta.atelier_intent_id ?? '', list)
  }
  return byIntent
}

// ---------------------------------------------------------------------------------------------

describe('a crash at any point of a dispatch', () => {
  const POINTS: (DispatchPoint | 'request-sent')[] = [
    'before-intent',
    'intent-committed',
    'sending-committed',
    'request-sent',
    'answered',
  ]
  // The seed picks which dispatch dies (the hit-th to reach the point) and the order of the nodes.
  const SEEDS = [1, 2, 3, 4, 5]

  /** Three nodes of one flow run: two single runs and a fan-out, in an order the seed picks. */
  function crashNodes(seed: number) {
    const nodes = [
      { node: imageNode(), inputs: { prompt: `crash ${seed}`, width: 64, height: 64, seed } },
      { node: imageNode('atelier/flaky'), inputs: { prompt: `crash ${seed}`, failure_rate: 0 } },
      {
        node: imageNode(),
        inputs: { prompt: [`a ${seed}`, `b ${seed}`, `c ${seed}`], width: 64, height: 64 },
      },
    ]
    return seed % 2 === 0 ? nodes.reverse() : nodes
  }

  function runChild(
    job: object,
  ): Promise<{ code: number | null; signal: string | null; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(job)], {
        cwd: root,
        env: { ...process.env, ATELIER_TEST_KEY: sandbox.keys.admin },
      })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      child.on('error', reject)
      child.on('close', (code, signal) => {
        clearTimeout(timer)
        resolve({ code, signal, stderr })
      })
    })
  }

  it('is resumed with exactly one remote run per intent, and every node completes', async () => {
    const cases = POINTS.flatMap((point) => SEEDS.map((seed) => ({ point, seed })))
    const results: {
      point: string
      seed: number
      flowRunId: string
      home: string
      nodes: ReturnType<typeof crashNodes>
    }[] = []
    // Two children at a time: the machine is shared, and each case has its own ledger.
    for (let i = 0; i < cases.length; i += 2) {
      await Promise.all(
        cases.slice(i, i + 2).map(async ({ point, seed }) => {
          const caseHome = mkdtempSync(join(tmpdir(), 'atelier-crash-'))
          const flowRunId = randomUUID()
          const nodes = crashNodes(seed)
          const child = await runChild({
            url: sandbox.url,
            orgId: sandbox.orgId,
            home: caseHome,
            flowRunId,
            point,
            hit: seed % 3,
            nodes,
          })
          expect(child.signal, `${point} seed ${seed}: ${child.stderr}`).toBe('SIGKILL')
          results.push({ point, seed, flowRunId, home: caseHome, nodes })
        }),
      )
    }

    // What each crash left behind, before anything is resumed: the state the test is about.
    const before = await runsByIntent(new Set(results.map((r) => r.flowRunId)))
    const leftStates = new Set<string>()
    for (const { point, seed, flowRunId, home: caseHome, nodes } of results) {
      const label = `${point} seed ${seed}`
      const dbs = openDatabases(caseHome)
      try {
        const left = nodes.flatMap(({ node }) => dbs.ledger.intents.forNode(flowRunId, node.id))
        const sending = left.filter((intent) => intent.state === 'sending')
        const made = (intent: Intent) => (before.get(intent.id) ?? []).length
        for (const intent of left) leftStates.add(intent.state)
        if (point === 'before-intent') {
          // Killed as the hit-th node was about to commit: the nodes before it had committed.
          expect(left, label).toHaveLength(seed % 3)
        } else if (point === 'intent-committed') {
          expect(
            left.some((intent) => intent.state === 'prepared' && made(intent) === 0),
            label,
          ).toBe(true)
        } else if (point === 'sending-committed') {
          expect(
            sending.some((intent) => made(intent) === 0),
            label,
          ).toBe(true)
        } else {
          // The service made the run, the ledger does not know it yet.
          expect(
            sending.some((intent) => made(intent) > 0),
            label,
          ).toBe(true)
        }
        const remote = new RemoteRunner({
          client,
          ledger: dbs.ledger,
          profile: 'default',
          orgId: sandbox.orgId,
          poll: POLL,
        })
        const resumed = await remote.resumeFlowRun(flowRunId)
        expect(
          resumed.filter((r) => r.error !== null),
          label,
        ).toEqual([])
        expect(
          resumed.every((r) => r.state === 'succeeded'),
          label,
        ).toBe(true)
        for (const { node, inputs } of nodes) {
          const { outcome, error } = await runNode(remote, node, inputs, { flowRunId })
          expect(error, label).toBeUndefined()
          expect(outcome?.outputs.image, label).toBeDefined()
          const intents = dbs.ledger.intents.forNode(flowRunId, node.id)
          expect(
            intents.map((i) => i.state),
            label,
          ).toEqual(['succeeded'])
        }
      } finally {
        dbs.close()
      }
    }

    // Between them the crashes left intents in every open state, so each way back was taken.
    expect([...leftStates].sort()).toEqual(
      expect.arrayContaining(['dispatched', 'prepared', 'sending']),
    )

    const byIntent = await runsByIntent(new Set(results.map((r) => r.flowRunId)))
    let intentsSeen = 0
    for (const { point, seed, flowRunId, home: caseHome, nodes } of results) {
      const dbs = openDatabases(caseHome)
      try {
        for (const { node, inputs } of nodes) {
          const [intent] = dbs.ledger.intents.forNode(flowRunId, node.id)
          const runs = byIntent.get(intent?.id ?? '') ?? []
          const items = Array.isArray(inputs.prompt) ? inputs.prompt.length : 1
          expect(runs, `${point} seed ${seed} node ${node.label}`).toHaveLength(items)
          expect(new Set(runs.map((run) => run.batch_id)).size).toBe(1)
          intentsSeen++
        }
      } finally {
        dbs.close()
        rmSync(caseHome, { recursive: true, force: true })
      }
    }
    // No run names an intent the ledgers do not know of.
    expect(byIntent.size).toBe(intentsSeen)
  }, 240_000)
})

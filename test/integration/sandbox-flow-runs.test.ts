import { randomUUID } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  Asset,
  Evaluation,
  Flow,
  FlowCreate,
  FlowNodeCreate,
  NodeRun,
  Page,
  Run,
  RunLog,
  Workflow,
} from '../../src-shared/api'
import { parseCredits } from '../../src-main/sandbox/accounts'
import { decimalToMicro, findModel } from '../../src-main/sandbox/models'
import { createServiceClient, newIdempotencyKey, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

let sandbox: TestSandbox
let client: ServiceClient

beforeAll(async () => {
  sandbox = await startTestSandbox()
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
})

afterAll(async () => {
  await sandbox.close()
})

const TEXT_TO_IMAGE = findModel('atelier/text-to-image')?.id ?? ''
const FLAKY = findModel('atelier/flaky')?.id ?? ''
const SLOW = findModel('atelier/slow-render')?.id ?? ''

const isTerminal = (run: Run) => ['succeeded', 'failed', 'canceled'].includes(run.status_code)

async function getRun(id: string): Promise<Run> {
  return client.get('/v1/runs/{run_id}', { params: { path: { run_id: id } } })
}

async function finished(id: string): Promise<Run> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const run = await getRun(id)
    if (isTerminal(run)) return run
    if (Date.now() > deadline) throw new Error(`run ${id} still ${run.status_code}`)
    await new Promise((resolve) => setTimeout(resolve, 15))
  }
}

async function nodeRunsOf(runId: string): Promise<NodeRun[]> {
  const page = await client.get('/v1/runs/{run_id}/node-runs', {
    params: { path: { run_id: runId }, query: { limit: 100 } },
  })
  return page.items
}

async function createFlow(body: FlowCreate): Promise<Flow> {
  const response = await sandbox.call('POST', '/v1/flows', { body })
  if (response.status !== 201) throw new Error(`flow: ${response.status} ${response.text}`)
  return response.body as Flow
}

async function dispatchFlow(flowId: string, input: Record<string, unknown>): Promise<Run> {
  const response = await sandbox.call('POST', `/v1/flows/${flowId}/runs`, { body: { input } })
  expect(response.status, response.text).toBe(201)
  return response.body as Run
}

async function download(url: string): Promise<Buffer> {
  const response = await fetch(url)
  expect(response.status).toBe(200)
  return Buffer.from(await response.arrayBuffer())
}

async function balanceMicro(): Promise<number> {
  return parseCredits((await client.get('/v1/billing/balance')).balance)
}

/** Ids chosen here, so that edges can name outputs before the flow exists. */
const ids = () => ({ node: randomUUID(), output: randomUUID() })

/** A flow that frames an image: resize it to 96×64 (cover). Used as a sub-flow. */
async function createFrameFlow(): Promise<Flow> {
  const resize = ids()
  return createFlow({
    name: `Frame ${randomUUID().slice(0, 8)}`,
    inputs: [{ name: 'picture', variable_type_code: 'image', is_required: true }],
    outputs: [{ name: 'framed', variable_type_code: 'image' }],
    nodes: [
      {
        id: resize.node,
        slug: 'frame',
        label: 'Frame',
        type_code: 'builtin',
        builtin_node_code: 'image_resize',
        config: { flow_inputs: { image: 'picture' }, flow_outputs: { image: 'framed' } },
        inputs: [
          { name: 'image', variable_type_code: 'image' },
          { name: 'width', variable_type_code: 'integer', value: 96 },
          { name: 'height', variable_type_code: 'integer', value: 64 },
          { name: 'fit', variable_type_code: 'enum', value: 'cover' },
        ],
        outputs: [{ id: resize.output, name: 'image', variable_type_code: 'image' }],
      },
    ],
  })
}

describe('flow runs', () => {
  let frame: Flow
  let flow: Flow
  const node = { subject: ids(), template: ids(), picture: ids(), thumb: ids(), framed: ids() }
  let run: Run

  beforeAll(async () => {
    frame = await createFrameFlow()
    const nodes: FlowNodeCreate[] = [
      // Listed out of order on purpose: the executor orders them by their edges.
      {
        id: node.thumb.node,
        slug: 'thumbnail',
        label: 'Thumbnail',
        type_code: 'builtin',
        builtin_node_code: 'image_resize',
        config: { flow_outputs: { image: 'thumbnail' } },
        inputs: [
          { name: 'image', variable_type_code: 'image', source_output_id: node.picture.output },
          { name: 'width', variable_type_code: 'integer', value: 64 },
          { name: 'height', variable_type_code: 'integer', value: 48 },
          { name: 'fit', variable_type_code: 'enum', value: 'fill' },
        ],
        outputs: [{ id: node.thumb.output, name: 'image', variable_type_code: 'image' }],
      },
      {
        id: node.subject.node,
        slug: 'subject',
        label: 'Subject',
        type_code: 'builtin',
        builtin_node_code: 'text',
        config: { flow_inputs: { value: 'subject' } },
        inputs: [{ name: 'value', variable_type_code: 'text' }],
        outputs: [{ id: node.subject.output, name: 'text', variable_type_code: 'text' }],
      },
      {
        id: node.picture.node,
        slug: 'picture',
        label: 'Picture',
        type_code: 'model',
        model_id: TEXT_TO_IMAGE,
        config: {},
        inputs: [
          { name: 'prompt', variable_type_code: 'text', source_output_id: node.template.output },
          { name: 'width', variable_type_code: 'integer', value: 128 },
          { name: 'height', variable_type_code: 'integer', value: 96 },
          { name: 'style', variable_type_code: 'enum', value: 'geometric' },
        ],
        outputs: [{ id: node.picture.output, name: 'image', variable_type_code: 'image' }],
      },
      {
        id: node.template.node,
        slug: 'template',
        label: 'Prompt template',
        type_code: 'builtin',
        builtin_node_code: 'prompt_template',
        config: { flow_outputs: { prompt: 'prompt' } },
        inputs: [
          { name: 'template', variable_type_code: 'text', value: 'a {subject} in teal shapes' },
          { name: 'subject', variable_type_code: 'text', source_output_id: node.subject.output },
        ],
        outputs: [{ id: node.template.output, name: 'prompt', variable_type_code: 'text' }],
      },
      {
        id: node.framed.node,
        slug: 'framed',
        label: 'Framed',
        type_code: 'sub_flow',
        sub_flow_id: frame.id,
        config: { flow_outputs: { framed: 'framed' } },
        inputs: [
          { name: 'picture', variable_type_code: 'image', source_output_id: node.picture.output },
        ],
        outputs: [{ id: node.framed.output, name: 'framed', variable_type_code: 'image' }],
      },
    ]
    flow = await createFlow({
      name: `Poster ${randomUUID().slice(0, 8)}`,
      inputs: [{ name: 'subject', variable_type_code: 'text', is_required: true }],
      outputs: [
        { name: 'thumbnail', variable_type_code: 'image' },
        { name: 'framed', variable_type_code: 'image' },
        { name: 'prompt', variable_type_code: 'text' },
      ],
      nodes,
    })
  })

  it('dispatches a flow run (typed client, Idempotency-Key) and replays it for the same key', async () => {
    const key = newIdempotencyKey()
    const send = () =>
      client.post('/v1/flows/{flow_id}/runs', {
        params: { path: { flow_id: flow.id } },
        body: { input: { subject: 'red fox' }, metadata: { intent: 'poster' } },
        headers: { 'Idempotency-Key': key },
      })
    run = await send()
    expect(run).toMatchObject({
      target_type_code: 'flow',
      flow_id: flow.id,
      model_id: null,
      model_slug: null,
      wfengine_workflow_id: null,
      source_code: 'api',
      status_code: 'queued',
      input: { subject: 'red fox' },
      metadata: { intent: 'poster' },
      estimated_cost: flow.estimated_cost,
    })
    expect(run).not.toHaveProperty('_sandbox')
    expect((await send()).id).toBe(run.id)
  })

  it('runs every node in an order that respects the edges, with real image outputs', async () => {
    const done = await finished(run.id)
    expect(done.status_code, done.failure_message ?? '').toBe('succeeded')
    const output = done.output as Record<string, { url: string; width: number; height: number }>
    expect(done.output).toMatchObject({ prompt: 'a red fox in teal shapes' })
    expect(output.thumbnail).toMatchObject({ content_type: 'image/png', width: 64, height: 48 })
    expect(output.framed).toMatchObject({ content_type: 'image/png', width: 96, height: 64 })
    const thumbnail = await sharp(await download(output.thumbnail?.url ?? '')).metadata()
    expect([thumbnail.format, thumbnail.width, thumbnail.height]).toEqual(['png', 64, 48])
    const framed = await sharp(await download(output.framed?.url ?? '')).metadata()
    expect([framed.width, framed.height]).toEqual([96, 64])

    const nodeRuns = await nodeRunsOf(run.id)
    expect(nodeRuns.every((nodeRun) => nodeRun.status_code === 'succeeded')).toBe(true)
    const order = nodeRuns.map((nodeRun) => nodeRun.flow_node_id)
    expect([...order].sort()).toEqual(
      Object.values(node)
        .map((n) => n.node)
        .sort(),
    )
    const at = (key: keyof typeof node) => order.indexOf(node[key].node)
    expect(at('subject')).toBeLessThan(at('template'))
    expect(at('template')).toBeLessThan(at('picture'))
    expect(at('picture')).toBeLessThan(at('thumb'))
    expect(at('picture')).toBeLessThan(at('framed'))
    for (const [index, nodeRun] of nodeRuns.entries()) {
      expect(nodeRun.wfengine_node_id).toBeNull()
      expect(nodeRun.started_at).not.toBeNull()
      expect(Date.parse(nodeRun.completed_at ?? '')).toBeGreaterThanOrEqual(
        Date.parse(nodeRun.started_at ?? ''),
      )
      const next = nodeRuns[index + 1]
      if (next) {
        expect(Date.parse(next.started_at ?? '')).toBeGreaterThanOrEqual(
          Date.parse(nodeRun.completed_at ?? ''),
        )
      }
    }
    const picture = nodeRuns[at('picture')]
    expect(picture?.input).toMatchObject({ prompt: 'a red fox in teal shapes', width: 128 })
    expect(picture?.output).toMatchObject({ image: { width: 128, height: 96 } })
    expect((picture?.output?.image as { url?: string }).url).toMatch(/^http/)
    expect(nodeRuns[at('template')]?.output).toEqual({ prompt: 'a red fox in teal shapes' })

    // The run costs what its nodes cost: here, only the picture.
    const costs = nodeRuns.map((nodeRun) => decimalToMicro(nodeRun.cost ?? '0'))
    expect(decimalToMicro(done.cost ?? '')).toBe(costs.reduce((sum, cost) => sum + cost, 0))
    expect(decimalToMicro(picture?.cost ?? '0')).toBeGreaterThan(0)

    const logs = (await sandbox.call('GET', `/v1/runs/${run.id}/logs?limit=500`))
      .body as Page<RunLog>
    const byNode = new Set(logs.items.map((log) => log.node_run_id).filter(Boolean))
    expect(byNode.has(picture?.id ?? '')).toBe(true)
    expect(logs.items.some((log) => log.message.includes('[sub-flow'))).toBe(true)
  })

  it('fails the run when a node fails, naming the node; earlier nodes keep their outcome', async () => {
    const subject = ids()
    const flaky = ids()
    const failing = await createFlow({
      name: `Unlucky ${randomUUID().slice(0, 8)}`,
      inputs: [{ name: 'subject', variable_type_code: 'text', is_required: true }],
      outputs: [{ name: 'image', variable_type_code: 'image' }],
      nodes: [
        {
          id: subject.node,
          slug: 'subject',
          label: 'Subject',
          type_code: 'builtin',
          builtin_node_code: 'text',
          config: { flow_inputs: { value: 'subject' } },
          inputs: [{ name: 'value', variable_type_code: 'text' }],
          outputs: [{ id: subject.output, name: 'text', variable_type_code: 'text' }],
        },
        {
          id: flaky.node,
          slug: 'unlucky-render',
          label: 'Unlucky render',
          type_code: 'model',
          model_id: FLAKY,
          config: { flow_outputs: { image: 'image' } },
          inputs: [
            { name: 'prompt', variable_type_code: 'text', source_output_id: subject.output },
            { name: 'failure_rate', variable_type_code: 'number', value: 1 },
          ],
          outputs: [{ id: flaky.output, name: 'image', variable_type_code: 'image' }],
        },
      ],
    })
    const before = await balanceMicro()
    const done = await finished((await dispatchFlow(failing.id, { subject: 'cat' })).id)
    expect(done).toMatchObject({
      status_code: 'failed',
      failure_code: 'MODEL_ERROR',
      failure_stage: 'node:unlucky-render',
      cost: '0.0000',
      output: null,
    })
    expect(done.failure_message).toContain('"Unlucky render"')
    expect(await balanceMicro()).toBe(before)
    const nodeRuns = await nodeRunsOf(done.id)
    expect(nodeRuns.map((n) => [n.flow_node_id, n.status_code, n.failure_code])).toEqual([
      [subject.node, 'succeeded', null],
      [flaky.node, 'failed', 'MODEL_ERROR'],
    ])
    expect(nodeRuns[1]?.failure_stage).toBe('inference')
  })

  it('fails at preprocess with INPUT_VALIDATION_FAILED when a required flow input is missing', async () => {
    const done = await finished((await dispatchFlow(flow.id, { topic: 'fox' })).id)
    expect(done).toMatchObject({
      status_code: 'failed',
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
    })
    expect(done.failure_message).toMatch(/subject/)
    expect(await nodeRunsOf(done.id)).toEqual([])
  })

  it('answers 404 FLOW_NOT_FOUND for a flow of no one or of another organization', async () => {
    const missing = await sandbox.call('POST', `/v1/flows/${randomUUID()}/runs`, {
      body: { input: {} },
    })
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ code: 'FLOW_NOT_FOUND' })
    const foreign = await sandbox.call('POST', `/v1/flows/${flow.id}/runs`, {
      body: { input: { subject: 'x' } },
      key: sandbox.keys.otherOrg,
    })
    expect(foreign.status).toBe(404)
  })

  it('lists the runs of one flow, of every flow with any, and in /v1/runs by target', async () => {
    const own = (await sandbox.call('GET', `/v1/flows/${flow.id}/runs?limit=100`)).body as Page<Run>
    expect(own.items.length).toBeGreaterThanOrEqual(2)
    expect(own.items.every((item) => item.flow_id === flow.id)).toBe(true)
    expect(own.items.map((item) => item.id)).toContain(run.id)
    for (const item of own.items) expect(item).not.toHaveProperty('_sandbox')

    // A model run, which no flow list may show.
    const modelRun = await sandbox.call('POST', '/v1/models/atelier/flaky/runs', {
      body: { input: { failure_rate: 0 } },
    })
    expect(modelRun.status).toBe(201)
    await finished((modelRun.body as Run).id)
    const any = (await sandbox.call('GET', '/v1/flows/any/runs?limit=100')).body as Page<Run>
    expect(any.items.every((item) => item.target_type_code === 'flow')).toBe(true)
    expect(new Set(any.items.map((item) => item.flow_id)).size).toBeGreaterThanOrEqual(2)
    expect(any.items.map((item) => item.id)).not.toContain((modelRun.body as Run).id)

    const failed = (await sandbox.call('GET', `/v1/flows/any/runs?q=status_code=failed`))
      .body as Page<Run>
    expect(failed.items.length).toBeGreaterThanOrEqual(2)
    expect(failed.items.every((item) => item.status_code === 'failed')).toBe(true)

    const byTarget = (await sandbox.call('GET', `/v1/runs?q=flow_id=${flow.id}&limit=100`))
      .body as Page<Run>
    expect(byTarget.items.map((item) => item.id).sort()).toEqual(own.items.map((i) => i.id).sort())
    const flows = (await sandbox.call('GET', '/v1/runs?q=target_type_code=flow&limit=100'))
      .body as Page<Run>
    expect(flows.items.length).toBe(any.items.length)

    const unknown = await sandbox.call('GET', `/v1/flows/${randomUUID()}/runs`)
    expect(unknown.status).toBe(404)
    const other = sandbox.keys.otherOrg
    expect((await sandbox.call('GET', `/v1/flows/${flow.id}/runs`, { key: other })).status).toBe(
      404,
    )
    const otherAny = (await sandbox.call('GET', '/v1/flows/any/runs', { key: other }))
      .body as Page<Run>
    expect(otherAny.items).toEqual([])
    const otherRuns = (
      await sandbox.call('GET', '/v1/runs?q=target_type_code=flow', { key: other })
    ).body as Page<Run>
    expect(otherRuns.items).toEqual([])
  })

  it('refuses to run a flow that would run itself through a sub-flow', async () => {
    const outer = await createFrameFlow()
    const loop = ids()
    const looping = await createFlow({
      name: `Loop ${randomUUID().slice(0, 8)}`,
      inputs: [{ name: 'picture', variable_type_code: 'image', is_required: true }],
      nodes: [
        {
          id: loop.node,
          slug: 'again',
          label: 'Again',
          type_code: 'sub_flow',
          sub_flow_id: outer.id,
          config: { flow_inputs: { picture: 'picture' } },
          inputs: [{ name: 'picture', variable_type_code: 'image' }],
          outputs: [{ id: loop.output, name: 'framed', variable_type_code: 'image' }],
        },
      ],
    })
    // Authoring refuses loops, so one is made behind its back: the node now runs its own flow.
    sandbox.services.store.update<Flow & { nodes: { sub_flow_id: string | null }[] }>(
      'flows',
      looping.id,
      sandbox.orgId,
      (current) => ({
        ...current,
        nodes: current.nodes.map((n) => ({ ...n, sub_flow_id: looping.id })),
      }),
    )
    const png = await sharp({
      create: { width: 16, height: 16, channels: 3, background: '#123456' },
    })
      .png()
      .toBuffer()
    const done = await finished(
      (
        await dispatchFlow(looping.id, {
          picture: `data:image/png;base64,${png.toString('base64')}`,
        })
      ).id,
    )
    expect(done).toMatchObject({
      status_code: 'failed',
      failure_code: 'FLOW_RECURSION',
      failure_stage: 'node:again',
    })
  })

  it('runs built-ins: compare, branch (skipping the side not taken), evaluate, save to assets', async () => {
    const render = ids()
    const judge = ids()
    const bar = ids()
    const gate = ids()
    const save = ids()
    const kept = await createFlow({
      name: `Keeper ${randomUUID().slice(0, 8)}`,
      inputs: [{ name: 'prompt', variable_type_code: 'text', is_required: true }],
      outputs: [
        { name: 'score', variable_type_code: 'number' },
        { name: 'asset_id', variable_type_code: 'string' },
      ],
      nodes: [
        {
          id: render.node,
          slug: 'render',
          label: 'Render',
          type_code: 'model',
          model_id: TEXT_TO_IMAGE,
          config: { flow_inputs: { prompt: 'prompt' } },
          inputs: [
            { name: 'prompt', variable_type_code: 'text' },
            { name: 'width', variable_type_code: 'integer', value: 96 },
            { name: 'height', variable_type_code: 'integer', value: 96 },
          ],
          outputs: [{ id: render.output, name: 'image', variable_type_code: 'image' }],
        },
        {
          id: judge.node,
          slug: 'judge',
          label: 'Judge',
          type_code: 'builtin',
          builtin_node_code: 'evaluate',
          config: { flow_inputs: { prompt: 'prompt' }, flow_outputs: { score: 'score' } },
          inputs: [
            { name: 'image', variable_type_code: 'image', source_output_id: render.output },
            { name: 'prompt', variable_type_code: 'text' },
          ],
          outputs: [{ id: judge.output, name: 'score', variable_type_code: 'number' }],
        },
        {
          id: bar.node,
          slug: 'bar',
          label: 'Bar',
          type_code: 'builtin',
          builtin_node_code: 'compare',
          config: {},
          inputs: [
            { name: 'value', variable_type_code: 'number', source_output_id: judge.output },
            { name: 'operator', variable_type_code: 'enum', value: '>=' },
            { name: 'threshold', variable_type_code: 'number', value: 0 },
          ],
          outputs: [{ id: bar.output, name: 'passed', variable_type_code: 'boolean' }],
        },
        {
          id: gate.node,
          slug: 'gate',
          label: 'Gate',
          type_code: 'builtin',
          builtin_node_code: 'branch',
          config: {},
          inputs: [
            { name: 'condition', variable_type_code: 'boolean', source_output_id: bar.output },
            { name: 'image', variable_type_code: 'image', source_output_id: render.output },
          ],
          outputs: [
            { id: gate.output, name: 'if_true', variable_type_code: 'image' },
            { id: randomUUID(), name: 'if_false', variable_type_code: 'image' },
          ],
        },
        {
          id: save.node,
          slug: 'save',
          label: 'Save',
          type_code: 'builtin',
          builtin_node_code: 'save_to_assets',
          config: { flow_outputs: { asset_id: 'asset_id' } },
          inputs: [
            { name: 'image', variable_type_code: 'image', source_output_id: gate.output },
            { name: 'name', variable_type_code: 'string', value: 'keeper.png' },
          ],
          outputs: [{ id: save.output, name: 'asset_id', variable_type_code: 'string' }],
        },
      ],
    })
    const done = await finished((await dispatchFlow(kept.id, { prompt: 'a teal square' })).id)
    expect(done.status_code, done.failure_message ?? '').toBe('succeeded')
    const output = done.output as { score: number; asset_id: string }
    expect(output.score).toBeGreaterThanOrEqual(0)
    expect(output.score).toBeLessThanOrEqual(1)
    const asset = await client.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: output.asset_id } },
    })
    expect(asset).toMatchObject({
      name: 'keeper.png',
      media_type: 'image',
      content_type: 'image/png',
      width: 96,
      height: 96,
      status_code: 'ready',
    })
    const bytes = await download(asset.url ?? '')
    expect((await sharp(bytes).metadata()).width).toBe(96)
    expect(asset.thumbnail_url).toMatch(/^http/)
    const nodeRuns = await nodeRunsOf(done.id)
    expect(nodeRuns).toHaveLength(5)
    // The evaluate node costs what a standard evaluation costs.
    const judged = nodeRuns.find((n) => n.flow_node_id === judge.node)
    expect(judged?.cost).toBe('0.0100')

    // The same flow with a bar no image reaches: the save node is skipped, the asset output null.
    sandbox.services.store.update<
      Flow & { nodes: { id: string; inputs: { name: string; value: unknown }[] }[] }
    >('flows', kept.id, sandbox.orgId, (current) => ({
      ...current,
      nodes: current.nodes.map((n) =>
        n.id === bar.node
          ? {
              ...n,
              inputs: n.inputs.map((i) => (i.name === 'threshold' ? { ...i, value: 2 } : i)),
            }
          : n,
      ),
    }))
    const skipped = await finished((await dispatchFlow(kept.id, { prompt: 'a teal square' })).id)
    expect(skipped.status_code).toBe('succeeded')
    expect(skipped.output).toMatchObject({ asset_id: null })
    const ran = await nodeRunsOf(skipped.id)
    expect(ran.map((n) => n.flow_node_id)).not.toContain(save.node)
    expect(ran).toHaveLength(4)
    const logs = (await sandbox.call('GET', `/v1/runs/${skipped.id}/logs?limit=500`))
      .body as Page<RunLog>
    expect(logs.items.some((log) => log.message.startsWith('Skipped node "Save"'))).toBe(true)
    const assets = (await sandbox.call('GET', '/v1/assets?q=name=keeper.png')).body as Page<Asset>
    expect(assets.items).toHaveLength(1)
  })

  it('runs built-ins: pick from list, number, crop; and re-runs a flow run', async () => {
    const pick = ids()
    const chance = ids()
    const amount = ids()
    const crop = ids()
    const tools = await createFlow({
      name: `Tools ${randomUUID().slice(0, 8)}`,
      inputs: [{ name: 'picture', variable_type_code: 'image', is_required: true }],
      outputs: [
        { name: 'item', variable_type_code: 'text' },
        { name: 'any_item', variable_type_code: 'text' },
        { name: 'amount', variable_type_code: 'number' },
        { name: 'cropped', variable_type_code: 'image' },
      ],
      nodes: [
        {
          id: pick.node,
          slug: 'pick',
          label: 'Pick',
          type_code: 'builtin',
          builtin_node_code: 'pick_from_list',
          config: { flow_outputs: { item: 'item' } },
          inputs: [
            { name: 'items', variable_type_code: 'text', value: 'ink\nwatercolour\n\noil' },
            { name: 'index', variable_type_code: 'integer', value: 4 },
          ],
          outputs: [{ id: pick.output, name: 'item', variable_type_code: 'text' }],
        },
        {
          id: chance.node,
          slug: 'chance',
          label: 'Chance',
          type_code: 'builtin',
          builtin_node_code: 'pick_from_list',
          config: { flow_outputs: { item: 'any_item' } },
          inputs: [{ name: 'items', variable_type_code: 'text', value: 'ink\nwatercolour\noil' }],
          outputs: [{ id: chance.output, name: 'item', variable_type_code: 'text' }],
        },
        {
          id: amount.node,
          slug: 'amount',
          label: 'Amount',
          type_code: 'builtin',
          builtin_node_code: 'number',
          config: { flow_outputs: { number: 'amount' } },
          inputs: [{ name: 'value', variable_type_code: 'number', value: 2.5 }],
          outputs: [{ id: amount.output, name: 'number', variable_type_code: 'number' }],
        },
        {
          id: crop.node,
          slug: 'crop',
          label: 'Crop',
          type_code: 'builtin',
          builtin_node_code: 'image_crop',
          config: { flow_inputs: { image: 'picture' }, flow_outputs: { image: 'cropped' } },
          inputs: [
            { name: 'image', variable_type_code: 'image' },
            { name: 'x', variable_type_code: 'integer', value: 4 },
            { name: 'y', variable_type_code: 'integer', value: 2 },
            { name: 'width', variable_type_code: 'integer', value: 10 },
            { name: 'height', variable_type_code: 'integer', value: 6 },
          ],
          outputs: [{ id: crop.output, name: 'image', variable_type_code: 'image' }],
        },
      ],
    })
    const png = await sharp({
      create: { width: 20, height: 12, channels: 3, background: '#2a9d8f' },
    })
      .png()
      .toBuffer()
    const picture = `data:image/png;base64,${png.toString('base64')}`
    const done = await finished((await dispatchFlow(tools.id, { picture })).id)
    expect(done.status_code, done.failure_message ?? '').toBe('succeeded')
    // Blank lines are not items: index 4 wraps around three lines to the second.
    expect(done.output).toMatchObject({
      item: 'watercolour',
      amount: 2.5,
      cropped: { width: 10, height: 6 },
    })
    expect(['ink', 'watercolour', 'oil']).toContain((done.output as { any_item: string }).any_item)
    const cropped = (done.output as { cropped: { url: string } }).cropped
    const { data, info } = await sharp(await download(cropped.url))
      .raw()
      .toBuffer({ resolveWithObject: true })
    expect([info.width, info.height]).toEqual([10, 6])
    expect([data[0], data[1], data[2]]).toEqual([0x2a, 0x9d, 0x8f])

    const outside = await finished(
      (
        await dispatchFlow(tools.id, {
          picture: `data:image/png;base64,${(
            await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
              .png()
              .toBuffer()
          ).toString('base64')}`,
        })
      ).id,
    )
    expect(outside).toMatchObject({
      status_code: 'failed',
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'node:crop',
    })
    expect(outside.failure_message).toMatch(/outside the 8×8 image/)

    const rerun = await sandbox.call('POST', `/v1/runs/${done.id}/rerun`)
    expect(rerun.status).toBe(201)
    expect(rerun.body).toMatchObject({
      target_type_code: 'flow',
      flow_id: tools.id,
      source_code: 'rerun',
      parent_run_id: done.id,
      input: { picture },
    })
    const again = await finished((rerun.body as Run).id)
    expect(again.output).toMatchObject({ item: 'watercolour', amount: 2.5 })
  })

  it('opens node runs in turn and, on cancel, stops the node at work; pending nodes never run', async () => {
    // A sandbox of its own. The middle node is the slow model (ten times the quick one's work:
    // about 4 s here) between two quick ones (about 0.4 s), so the cancel, sent as soon as the
    // middle one is seen running, lands while it works however busy the machine is: three equal
    // nodes left a window of 0.7 s, which a loaded machine sometimes missed.
    const slowBox = await startTestSandbox({ latencyMs: 600 })
    try {
      const steps = [ids(), ids(), ids()]
      const created = await slowBox.call('POST', '/v1/flows', {
        body: {
          name: 'Slow',
          nodes: steps.map((n, index) => ({
            id: n.node,
            slug: `render-${index + 1}`,
            label: `Render ${index + 1}`,
            type_code: 'model',
            model_id: index === 1 ? SLOW : TEXT_TO_IMAGE,
            config: {},
            inputs: [
              { name: 'prompt', variable_type_code: 'text', value: 'violet dusk' },
              { name: 'width', variable_type_code: 'integer', value: 64 },
              { name: 'height', variable_type_code: 'integer', value: 64 },
            ],
            outputs: [{ id: n.output, name: 'image', variable_type_code: 'image' }],
          })),
        } satisfies FlowCreate,
      })
      expect(created.status, created.text).toBe(201)
      const balance = async () => {
        const body = (await slowBox.call('GET', '/v1/billing/balance')).body as { balance: string }
        return parseCredits(body.balance)
      }
      const before = await balance()
      const dispatched = await slowBox.call('POST', `/v1/flows/${(created.body as Flow).id}/runs`, {
        body: { input: {} },
      })
      const runId = (dispatched.body as Run).id
      const nodeRuns = async () =>
        ((await slowBox.call('GET', `/v1/runs/${runId}/node-runs`)).body as Page<NodeRun>).items
      const deadline = Date.now() + 15_000
      let seen = await nodeRuns()
      while (seen.length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10))
        seen = await nodeRuns()
      }
      // The first node is done before the second opens.
      expect(seen.map((n) => [n.flow_node_id, n.status_code])).toEqual([
        [steps[0]?.node, 'succeeded'],
        [steps[1]?.node, 'running'],
      ])
      expect(Date.parse(seen[1]?.started_at ?? '')).toBeGreaterThanOrEqual(
        Date.parse(seen[0]?.completed_at ?? ''),
      )
      const running = (await slowBox.call('GET', `/v1/runs/${runId}`)).body as Run
      expect(running.status_code).toBe('running')
      expect(running.progress).toBeGreaterThan(0)

      const canceled = await slowBox.call('POST', `/v1/runs/${runId}/cancel`)
      expect(canceled.status).toBe(200)
      expect(canceled.body).toMatchObject({ status_code: 'canceled', cost: '0.0000' })
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect((await nodeRuns()).map((n) => [n.flow_node_id, n.status_code])).toEqual([
        [steps[0]?.node, 'succeeded'],
        [steps[1]?.node, 'canceled'],
      ])
      expect(await balance()).toBe(before)
    } finally {
      await slowBox.close()
    }
  })

  it('embeds the run in an evaluation as GET /v1/runs/{id} presents it', async () => {
    const done = await getRun(run.id)
    const thumbnail = (done.output as { thumbnail: { url: string } }).thumbnail
    const created = await sandbox.call('POST', '/v1/evaluations', {
      body: {
        generated_image_url: thumbnail.url,
        run_id: run.id,
        flow_id: flow.id,
        generation_prompt: 'a red fox in teal shapes',
      },
    })
    expect(created.status, created.text).toBe(201)
    const evaluation = (
      await sandbox.call('GET', `/v1/evaluations/${(created.body as Evaluation).id}`)
    ).body as Evaluation & { run: Run | null }
    expect(evaluation.run).not.toBeNull()
    expect(evaluation.run).not.toHaveProperty('_sandbox')
    expect(evaluation.run).toMatchObject({ id: run.id, flow_id: flow.id, status_code: 'succeeded' })
    const embedded = (
      evaluation.run?.output as { thumbnail: { url?: string; expires_at?: string } }
    ).thumbnail
    expect(embedded.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_storage\/blobs\/[0-9a-f]{64}\?/)
    expect(Date.parse(embedded.expires_at ?? '')).toBeGreaterThan(Date.now())
    expect(await download(embedded.url ?? '')).toEqual(await download(thumbnail.url))
  })
})

describe('workflow runs', () => {
  let sample: Workflow

  beforeAll(async () => {
    sample = await client.get('/v1/comfyui-workflows/lookup', {
      params: { query: { slug: 'basic-text-to-image' } },
    })
  })

  it('renders the sample text-to-image workflow, one node run per workflow node', async () => {
    const dispatched = await client.post('/v1/comfyui-workflows/{comfyui_workflow_id}/runs', {
      params: { path: { comfyui_workflow_id: sample.id } },
      body: { input: { prompt: 'a lighthouse at dusk', width: 128, height: 96, seed: 5 } },
    })
    expect(dispatched).toMatchObject({
      target_type_code: 'wfengine_workflow',
      wfengine_workflow_id: sample.id,
      flow_id: null,
      model_id: null,
    })
    const done = await finished(dispatched.id)
    expect(done.status_code, done.failure_message ?? '').toBe('succeeded')
    const image = (done.output as { image: { url: string; width: number; height: number } }).image
    expect(image).toMatchObject({ width: 128, height: 96, content_type: 'image/png' })
    const bytes = await download(image.url)
    expect((await sharp(bytes).metadata()).width).toBe(128)

    const nodeRuns = await nodeRunsOf(done.id)
    const order = nodeRuns.map((n) => n.wfengine_node_id)
    expect([...order].sort()).toEqual(['1', '2', '3', '4', '5', '6', '7'])
    expect(order.indexOf('5')).toBeGreaterThan(order.indexOf('2'))
    expect(order.indexOf('5')).toBeGreaterThan(order.indexOf('4'))
    expect(order.indexOf('6')).toBeGreaterThan(order.indexOf('5'))
    expect(order.indexOf('7')).toBeGreaterThan(order.indexOf('6'))
    expect(nodeRuns.every((n) => n.flow_node_id === null && n.status_code === 'succeeded')).toBe(
      true,
    )
    const decode = nodeRuns.find((n) => n.wfengine_node_id === '6')
    expect(decode?.input).toMatchObject({
      samples: { prompt: 'a lighthouse at dusk', width: 128, height: 96, seed: 5 },
    })
    expect(decimalToMicro(decode?.cost ?? '0')).toBeGreaterThan(0)
    expect(done.cost).toBe(decode?.cost)

    // The same input and seed render the same bytes.
    const again = await client.post('/v1/comfyui-workflows/{comfyui_workflow_id}/runs', {
      params: { path: { comfyui_workflow_id: sample.id } },
      body: { input: { prompt: 'a lighthouse at dusk', width: 128, height: 96, seed: 5 } },
    })
    const second = await finished(again.id)
    expect((second.output as { image: { sha256: string } }).image.sha256).toBe(
      (done.output as { image: { sha256: string } }).image.sha256,
    )
    const listed = (await sandbox.call('GET', '/v1/runs?q=target_type_code=wfengine_workflow'))
      .body as Page<Run>
    expect(listed.items.map((item) => item.id)).toEqual([again.id, dispatched.id])
  })

  it('enlarges an image with the sample upscale workflow', async () => {
    const upscale = await client.get('/v1/comfyui-workflows/lookup', {
      params: { query: { slug: 'upscale-with-a-model' } },
    })
    const png = await sharp({ create: { width: 24, height: 16, channels: 3, background: '#a0c' } })
      .png()
      .toBuffer()
    const response = await sandbox.call('POST', `/v1/comfyui-workflows/${upscale.id}/runs`, {
      body: { input: { image: `data:image/png;base64,${png.toString('base64')}` } },
    })
    expect(response.status).toBe(201)
    const done = await finished((response.body as Run).id)
    expect(done.status_code, done.failure_message ?? '').toBe('succeeded')
    expect(done.output).toMatchObject({ image: { width: 96, height: 64 } })
  })

  it('fails at preprocess when a required workflow input is missing; 404 for an unknown workflow', async () => {
    const response = await sandbox.call('POST', `/v1/comfyui-workflows/${sample.id}/runs`, {
      body: { input: { width: 128 } },
    })
    expect(response.status).toBe(201)
    const done = await finished((response.body as Run).id)
    expect(done).toMatchObject({
      status_code: 'failed',
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
    })
    expect(done.failure_message).toMatch(/Prompt/)
    const unknown = await sandbox.call('POST', `/v1/comfyui-workflows/${randomUUID()}/runs`, {
      body: { input: {} },
    })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' })
  })

  it('runs an organization workflow whose graph it cannot follow by rendering its text inputs', async () => {
    const created = await client.post('/v1/comfyui-workflows', {
      body: {
        name: 'Mystery graph',
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
    const response = await sandbox.call('POST', `/v1/comfyui-workflows/${created.id}/runs`, {
      body: { input: { idea: 'green waves' } },
    })
    const done = await finished((response.body as Run).id)
    expect(done.status_code, done.failure_message ?? '').toBe('succeeded')
    expect(done.output).toMatchObject({ picture: { width: 512, height: 512 } })
    const nodeRuns = await nodeRunsOf(done.id)
    expect(nodeRuns.map((n) => n.wfengine_node_id)).toEqual(['1', '2', '2'])
    const other = await sandbox.call('POST', `/v1/comfyui-workflows/${created.id}/runs`, {
      body: { input: { idea: 'x' } },
      key: sandbox.keys.otherOrg,
    })
    expect(other.status).toBe(404)
  })
})

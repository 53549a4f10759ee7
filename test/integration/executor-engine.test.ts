import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Evaluation, FlowCreate, Run } from '../../src-shared/api'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import { openDatabases, type Databases } from '../../src-main/db'
import {
  BuiltinRunner,
  isFlowRunError,
  mirrorCatalog,
  mirrorModels,
  onlineCatalog,
  parseFlowDocument,
  planFlow,
  RemoteRunner,
  runFlow,
  validateFlow,
  type FlowDocument,
  type FlowRunError,
  type FlowRunResult,
  type OnlineCatalog,
  type RunFlowOptions,
} from '../../src-main/executor'
import { MediaStore } from '../../src-main/media-store'
import { startSandbox, type RunningSandbox } from '../../src-main/sandbox'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import { runAtelier } from '../helpers/cli'
import { secretServiceAvailability, startSecretService } from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The scheduler against the real sandbox, with the mirror as `atelier sync` leaves it (models
 * without their details, flows without their graph): the online catalog completes it.
 */

let sandbox: TestSandbox
let client: ServiceClient
let home: string
let dbs: Databases
let media: MediaStore
let online: OnlineCatalog
let remote: RemoteRunner
let builtin: BuiltinRunner
const models = new Map<string, string>()
const PROFILE = 'test'

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 60 })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  home = mkdtempSync(join(tmpdir(), 'atelier-executor-engine-'))
  dbs = openDatabases(home)
  await new SyncEngine({
    client,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId: sandbox.orgId,
    detailsLimit: 0,
  }).syncAll({ collections: ['catalogs', 'models', 'flows', 'workflows'] })
  for (const slug of [
    'atelier/text-to-image',
    'atelier/upscale',
    'atelier/flaky',
    'atelier/slow-render',
  ]) {
    const model = dbs.mirror.models.withSlug({ orgId: sandbox.orgId }, slug)
    if (!model) throw new Error(`The sandbox has no model ${slug}.`)
    models.set(slug, model.id)
  }
  media = new MediaStore({ dir: join(home, 'media'), maxBytes: 256 * 1024 * 1024 })
  online = onlineCatalog({ mirror: dbs.mirror, client, orgId: sandbox.orgId })
  remote = new RemoteRunner({
    client,
    ledger: dbs.ledger,
    profile: PROFILE,
    orgId: sandbox.orgId,
    models: mirrorModels(dbs.mirror, sandbox.orgId),
    poll: { initialMs: 10, maxMs: 100 },
  })
  builtin = new BuiltinRunner({
    media,
    service: client,
    polling: { initialMs: 20, maxMs: 200, timeoutMs: 60_000 },
  })
}, 60_000)

afterAll(async () => {
  await media.close()
  dbs.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

// ---- Flows from a compact description

interface InputSpec {
  type: string
  /** `node.output` */
  from?: string
  value?: unknown
  flowInput?: string
  /** `node.output` feeding the input on a quality gate's retry */
  retryFrom?: string
}

interface NodeSpec {
  model?: string
  builtin?: string
  subFlow?: string
  inputs?: Record<string, InputSpec>
  outputs?: Record<string, string>
  config?: Record<string, unknown>
  /** Node output name → flow output name */
  flowOutputs?: Record<string, string>
}

interface Built {
  flow: FlowDocument
  ids: Record<string, string>
}

function graph(spec: {
  inputs?: Record<string, string>
  outputs?: Record<string, string>
  nodes: Record<string, NodeSpec>
}): Built {
  const ids: Record<string, string> = {}
  const outputIds = new Map<string, string>()
  for (const [key, node] of Object.entries(spec.nodes)) {
    ids[key] = randomUUID()
    for (const name of Object.keys(node.outputs ?? {}))
      outputIds.set(`${key}.${name}`, randomUUID())
  }
  const source = (ref: string | undefined) => {
    if (ref === undefined) return null
    const id = outputIds.get(ref)
    if (!id) throw new Error(`No output ${ref}`)
    return id
  }
  const parsed = parseFlowDocument({
    id: randomUUID(),
    name: `Engine test ${randomUUID().slice(0, 8)}`,
    inputs: Object.entries(spec.inputs ?? {}).map(([name, type]) => ({
      id: randomUUID(),
      name,
      variable_type_code: type,
      is_required: true,
    })),
    outputs: Object.entries(spec.outputs ?? {}).map(([name, type]) => ({
      id: randomUUID(),
      name,
      variable_type_code: type,
    })),
    nodes: Object.entries(spec.nodes).map(([key, node]) => {
      const flowInputs = Object.fromEntries(
        Object.entries(node.inputs ?? {}).flatMap(([name, input]) =>
          input.flowInput ? [[name, input.flowInput]] : [],
        ),
      )
      return {
        id: ids[key],
        label: key,
        slug: key,
        type_code: node.model ? 'model' : node.builtin ? 'builtin' : 'sub_flow',
        model_id: node.model ? (models.get(node.model) ?? node.model) : null,
        builtin_node_code: node.builtin ?? null,
        sub_flow_id: node.subFlow ?? null,
        config: {
          ...node.config,
          ...(Object.keys(flowInputs).length > 0 ? { flow_inputs: flowInputs } : {}),
          ...(node.flowOutputs ? { flow_outputs: node.flowOutputs } : {}),
        },
        inputs: Object.entries(node.inputs ?? {}).map(([name, input]) => ({
          id: randomUUID(),
          name,
          variable_type_code: input.type,
          source_output_id: source(input.from),
          retry_source_output_id: source(input.retryFrom),
          value: input.value ?? null,
        })),
        outputs: Object.entries(node.outputs ?? {}).map(([name, type]) => ({
          id: outputIds.get(`${key}.${name}`),
          name,
          variable_type_code: type,
        })),
      }
    }),
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return { flow: parsed.flow, ids }
}

function run(
  flow: FlowDocument,
  options: Partial<RunFlowOptions> = {},
): Promise<FlowRunResult & { events: FlowRunEvent[] }> {
  const events: FlowRunEvent[] = []
  return runFlow({
    flow,
    runners: { model: remote, builtin },
    catalog: online,
    ledger: dbs.ledger,
    client,
    profile: PROFILE,
    orgId: sandbox.orgId,
    concurrency: 4,
    ...options,
    onEvent: (event) => {
      events.push(event)
      options.onEvent?.(event)
    },
  }).then((result) => ({ ...result, events }))
}

async function refused(promise: Promise<unknown>): Promise<FlowRunError> {
  try {
    await promise
  } catch (error) {
    if (isFlowRunError(error)) return error
    throw error
  }
  throw new Error('The flow run was not refused.')
}

async function allRuns(): Promise<Run[]> {
  const runs: Run[] = []
  for await (const item of client.list('/v1/runs', { params: { query: { limit: 500 } } })) {
    runs.push(item)
  }
  return runs
}

async function runsOf(flowRunId: string): Promise<Run[]> {
  return (await allRuns()).filter(
    (item) =>
      (item.metadata as { atelier_flow_run_id?: string } | null)?.atelier_flow_run_id === flowRunId,
  )
}

async function evaluationWithRef(clientRef: string): Promise<Evaluation | undefined> {
  const page = await client.get('/v1/evaluations', {
    params: { query: { q: `client_ref="${clientRef}"`, limit: 5 } },
  })
  return page.items[0]
}

const nodeEvents = (events: FlowRunEvent[], type: FlowRunEvent['type']) =>
  events.flatMap((event) => (event.type === type && 'nodeId' in event ? [event.nodeId] : []))

const tag = () => randomUUID().slice(0, 8)

/** text → image → upscale → evaluate → save, with a prompt no other test uses. */
function pipeline(prompt: string, scale = 2): Built {
  return graph({
    outputs: { saved: 'string' },
    nodes: {
      text: {
        builtin: 'text',
        inputs: { value: { type: 'text', value: prompt } },
        outputs: { text: 'text' },
      },
      image: {
        model: 'atelier/text-to-image',
        inputs: {
          prompt: { type: 'text', from: 'text.text' },
          width: { type: 'integer', value: 256 },
          height: { type: 'integer', value: 256 },
          seed: { type: 'seed', value: 7 },
        },
        outputs: { image: 'image' },
      },
      upscale: {
        model: 'atelier/upscale',
        inputs: {
          image: { type: 'image', from: 'image.image' },
          scale: { type: 'integer', value: scale },
        },
        outputs: { image: 'image' },
      },
      evaluate: {
        builtin: 'evaluate',
        inputs: {
          image: { type: 'image', from: 'upscale.image' },
          prompt: { type: 'text', from: 'text.text' },
          min_score: { type: 'number', value: 0 },
        },
        outputs: { passed: 'boolean', score: 'number' },
      },
      save: {
        builtin: 'save_to_assets',
        inputs: {
          image: { type: 'image', from: 'upscale.image' },
          name: { type: 'string', value: `engine-${prompt}` },
        },
        outputs: { asset_id: 'string' },
        flowOutputs: { asset_id: 'saved' },
      },
    },
  })
}

// ---------------------------------------------------------------------------------------------

describe('a flow end to end', () => {
  const prompt = `a red sunset ${tag()}`
  let built: Built
  let first: FlowRunResult & { events: FlowRunEvent[] }

  it('completes what the sync left out, then runs text → image → upscale → evaluate → save', async () => {
    built = pipeline(prompt)
    const scope = { orgId: sandbox.orgId }
    const t2i = models.get('atelier/text-to-image') as string
    expect(dbs.mirror.models.inputs(scope, t2i)).toEqual([])
    expect(
      validateFlow(built.flow, mirrorCatalog(dbs.mirror, sandbox.orgId)).map((p) => p.code),
    ).toContain('TARGET_DETAILS_UNKNOWN')

    first = await run(built.flow)
    expect(first.error).toBeNull()
    expect(first.state).toBe('succeeded')
    expect(dbs.mirror.models.inputs(scope, t2i).length).toBeGreaterThan(0)
    expect(dbs.mirror.models.pricing(scope, t2i).length).toBeGreaterThan(0)
    expect(first.totals).toMatchObject({ nodes: 5, dispatched: 5, cached: 0, failed: 0 })
    expect(first.totals.estimateMicro).toBeGreaterThan(0)
    expect(first.totals.costMicro).toBeGreaterThan(0)

    const assetId = first.outputs.saved as string
    const asset = await client.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: assetId } },
    })
    expect(asset.id).toBe(assetId)

    // The gate was told which model run made the image it judged.
    const upscaled = first.nodes.find((node) => node.nodeId === built.ids.upscale)
    const evaluation = await evaluationWithRef(`atelier:${first.flowRunId}:${built.ids.evaluate}:1`)
    expect(evaluation?.run_id).toBe(upscaled?.remoteRunId)

    const succeeded = nodeEvents(first.events, 'node-succeeded')
    expect(new Set(succeeded)).toEqual(new Set(Object.values(built.ids)))
    expect(first.events[0]?.type).toBe('flow-started')
    expect(first.events.at(-1)).toMatchObject({ type: 'flow-finished', state: 'succeeded' })

    // The record, for review offline.
    expect(dbs.ledger.flowRuns.get(first.flowRunId)).toMatchObject({
      state: 'succeeded',
      flowId: built.flow.id,
      totals: { dispatched: 5 },
    })
    expect(first.nodes.map((node) => node.state)).toEqual(Array(5).fill('succeeded'))
    expect((await runsOf(first.flowRunId)).length).toBe(2)
  }, 60_000)

  it('dispatches nothing on an unchanged re-run', async () => {
    const before = (await allRuns()).length
    const again = await run(built.flow)
    expect(again.state).toBe('succeeded')
    expect(again.totals).toMatchObject({ dispatched: 0, cached: 5 })
    expect(again.outputs).toEqual(first.outputs)
    expect((await allRuns()).length).toBe(before)
    expect(nodeEvents(again.events, 'node-cached').length).toBe(5)
  }, 60_000)

  it('after one edit dispatches exactly that node and what depends on it', async () => {
    const edited = structuredClone(built.flow)
    const upscale = edited.nodes.find((node) => node.id === built.ids.upscale)
    const scale = upscale?.inputs.find((input) => input.name === 'scale')
    if (!scale) throw new Error('no scale input')
    scale.value = 4
    const planned = planFlow(edited, online.catalog)
    if (!planned.ok) throw new Error('invalid')
    const downstream = planned.plan.downstreamOf([built.ids.upscale as string])

    const before = (await allRuns()).length
    const result = await run(edited)
    expect(result.state).toBe('succeeded')
    const dispatched = result.nodes
      .filter((node) => node.state === 'succeeded')
      .map((n) => n.nodeId)
    expect(new Set(dispatched)).toEqual(downstream)
    expect(result.totals.dispatched / downstream.size).toBe(1)
    expect((await allRuns()).length).toBe(before + 1)
  }, 60_000)

  it('runs a forced node again, with everything downstream of it', async () => {
    const before = (await allRuns()).length
    const result = await run(built.flow, { force: ['image'] })
    expect(result.state).toBe('succeeded')
    expect(result.totals).toMatchObject({ dispatched: 4, cached: 1 })
    expect((await allRuns()).length).toBe(before + 2)
  }, 60_000)

  it('resumes a flow run without running what already succeeded in it', async () => {
    const before = (await allRuns()).length
    const resumed = await run(built.flow, { flowRunId: first.flowRunId })
    expect(resumed).toMatchObject({ state: 'succeeded', resumed: true, flowRunId: first.flowRunId })
    expect(resumed.totals.dispatched).toBe(0)
    expect((await allRuns()).length).toBe(before)
  }, 60_000)
})

describe('sub-flows and fan-outs', () => {
  it('runs a sub-flow the service holds, fetching its graph, inside the same flow run', async () => {
    const inner = graph({
      inputs: { prompt: 'text' },
      outputs: { picture: 'image' },
      nodes: {
        draw: {
          model: 'atelier/text-to-image',
          inputs: {
            prompt: { type: 'text', flowInput: 'prompt' },
            width: { type: 'integer', value: 128 },
            height: { type: 'integer', value: 128 },
            seed: { type: 'seed', value: 3 },
          },
          outputs: { image: 'image' },
          flowOutputs: { image: 'picture' },
        },
      },
    }).flow
    const body: FlowCreate = {
      name: inner.name,
      inputs: inner.inputs.map((i) => ({
        id: i.id,
        name: i.name,
        variable_type_code: i.variable_type_code,
      })),
      outputs: inner.outputs.map((o) => ({
        id: o.id,
        name: o.name,
        variable_type_code: o.variable_type_code,
      })),
      nodes: inner.nodes.map((node) => ({
        id: node.id,
        label: node.label,
        type_code: node.type_code,
        model_id: node.model_id,
        config: node.config,
        inputs: node.inputs.map((i) => ({
          id: i.id,
          name: i.name,
          variable_type_code: i.variable_type_code,
          ...(i.value === null ? {} : { value: i.value }),
        })),
        outputs: node.outputs.map((o) => ({
          id: o.id,
          name: o.name,
          variable_type_code: o.variable_type_code,
        })),
      })),
    }
    const created = await client.post('/v1/flows', { body })
    const outer = graph({
      nodes: {
        text: {
          builtin: 'text',
          inputs: { value: { type: 'text', value: `teal sea ${tag()}` } },
          outputs: { text: 'text' },
        },
        sub: {
          subFlow: created.id,
          inputs: { prompt: { type: 'text', from: 'text.text' } },
          outputs: { picture: 'image' },
        },
        upscale: {
          model: 'atelier/upscale',
          inputs: { image: { type: 'image', from: 'sub.picture' } },
          outputs: { image: 'image' },
        },
      },
    })
    const result = await run(outer.flow)
    expect(result.error).toBeNull()
    expect(result.state).toBe('succeeded')
    const innerId = `${outer.ids.sub}/${created.nodes?.[0]?.id ?? inner.nodes[0]?.id}`
    expect(result.nodes.map((node) => node.nodeId)).toContain(innerId)
    expect(result.totals).toMatchObject({ nodes: 4, dispatched: 3 })
    expect((await runsOf(result.flowRunId)).length).toBe(2)
    expect(dbs.mirror.flows.get({ orgId: sandbox.orgId }, created.id)?.nodes?.length).toBe(1)
  }, 60_000)

  it('fans a list out as one batch', async () => {
    const built = graph({
      inputs: { prompts: 'text[]' },
      nodes: {
        draw: {
          model: 'atelier/text-to-image',
          inputs: {
            prompt: { type: 'text', flowInput: 'prompts' },
            width: { type: 'integer', value: 64 },
            height: { type: 'integer', value: 64 },
            seed: { type: 'seed', value: 1 },
          },
          outputs: { image: 'image' },
        },
      },
    })
    const t = tag()
    const result = await run(built.flow, {
      inputs: { prompts: [`red ${t}`, `gold ${t}`, `navy ${t}`] },
    })
    expect(result.state).toBe('succeeded')
    const node = result.nodes[0]
    expect(node?.batchId).toEqual(expect.any(String))
    expect(node?.outputs?.image).toHaveLength(3)
    expect((await runsOf(result.flowRunId)).length).toBe(3)
    const batches = await client.get('/v1/batches', { params: { query: { limit: 500 } } })
    expect(batches.items.filter((batch) => batch.id === node?.batchId)).toHaveLength(1)
  }, 60_000)
})

describe('quality gates', () => {
  it('sends the flow back through the retry edge, linking the re-evaluation to the first', async () => {
    const built = graph({
      nodes: {
        draw: {
          model: 'atelier/text-to-image',
          inputs: {
            prompt: { type: 'text', value: `gold shapes ${tag()}` },
            negative_prompt: { type: 'text', retryFrom: 'gate.issues' },
            width: { type: 'integer', value: 128 },
            height: { type: 'integer', value: 128 },
            seed: { type: 'seed', value: 11 },
          },
          outputs: { image: 'image' },
        },
        gate: {
          builtin: 'evaluate',
          config: { max_attempts: 2 },
          inputs: {
            image: { type: 'image', from: 'draw.image' },
            min_score: { type: 'number', value: 0.99 },
          },
          outputs: { passed: 'boolean', issues: 'text' },
        },
      },
    })
    const result = await run(built.flow)
    expect(result.state).toBe('failed')
    expect(result.error?.code).toBe('QUALITY_GATE_FAILED')
    const first = await evaluationWithRef(`atelier:${result.flowRunId}:${built.ids.gate}:1`)
    const second = await evaluationWithRef(`atelier:${result.flowRunId}:${built.ids.gate}:2`)
    expect(first?.id).toEqual(expect.any(String))
    expect(second?.parent_evaluation_id).toBe(first?.id)
    const attempts = result.nodes
      .filter((node) => node.nodeId === built.ids.draw)
      .map((node) => [node.attempt, node.state])
    expect(attempts).toEqual([
      [1, 'succeeded'],
      [2, 'succeeded'],
    ])
    expect((await runsOf(result.flowRunId)).length).toBe(2)
  }, 90_000)
})

describe('failures and cancel', () => {
  function twoBranches(slowSlug: string) {
    const t = tag()
    return graph({
      nodes: {
        broken: {
          model: 'atelier/flaky',
          inputs: {
            prompt: { type: 'text', value: `broken ${t}` },
            failure_rate: { type: 'number', value: 1 },
            seed: { type: 'seed', value: 1 },
          },
          outputs: { image: 'image' },
        },
        after: {
          model: 'atelier/upscale',
          inputs: { image: { type: 'image', from: 'broken.image' } },
          outputs: { image: 'image' },
        },
        fine: {
          model: slowSlug,
          inputs: {
            prompt: { type: 'text', value: `fine ${t}` },
            width: { type: 'integer', value: 64 },
            height: { type: 'integer', value: 64 },
            seed: { type: 'seed', value: 2 },
          },
          outputs: { image: 'image' },
        },
      },
    })
  }

  it('lets the independent branch finish when one fails', async () => {
    const built = twoBranches('atelier/text-to-image')
    const result = await run(built.flow)
    expect(result.state).toBe('failed')
    const states = Object.fromEntries(result.nodes.map((node) => [node.nodeId, node.state]))
    expect(states).toEqual({
      [built.ids.broken as string]: 'failed',
      [built.ids.after as string]: 'skipped',
      [built.ids.fine as string]: 'succeeded',
    })
    expect(result.error?.message).toBeTruthy()
  }, 60_000)

  it('cancels mid-run: running remote runs are canceled, nothing else starts', async () => {
    const built = graph({
      nodes: {
        slow: {
          model: 'atelier/slow-render',
          inputs: {
            prompt: { type: 'text', value: `slow ${tag()}` },
            width: { type: 'integer', value: 64 },
            height: { type: 'integer', value: 64 },
            seed: { type: 'seed', value: 4 },
          },
          outputs: { image: 'image' },
        },
        bigger: {
          model: 'atelier/upscale',
          inputs: { image: { type: 'image', from: 'slow.image' } },
          outputs: { image: 'image' },
        },
      },
    })
    const controller = new AbortController()
    const result = await run(built.flow, {
      signal: controller.signal,
      onEvent: (event) => {
        // Once the slow run is on the service and working, not just queued.
        if (event.type === 'node-remote-run')
          setTimeout(() => {
            controller.abort()
          }, 150)
      },
    })
    expect(result.state).toBe('canceled')
    const states = Object.fromEntries(result.nodes.map((node) => [node.nodeId, node.state]))
    expect(states).toEqual({
      [built.ids.slow as string]: 'canceled',
      [built.ids.bigger as string]: 'canceled',
    })
    const runs = await runsOf(result.flowRunId)
    expect(runs.map((item) => item.status_code)).toEqual(['canceled'])
  }, 60_000)
})

describe('fail fast', () => {
  // A sandbox of its own, so the shared one never sees a connection cut by the cancel.
  let own: TestSandbox
  let ownClient: ServiceClient

  beforeAll(async () => {
    own = await startTestSandbox({ latencyMs: 60 })
    ownClient = createServiceClient({
      baseUrl: own.url,
      apiKey: own.keys.admin,
      retry: { baseDelayMs: 5, maxDelayMs: 50 },
    })
  })

  afterAll(async () => {
    await own.close()
  })

  it('cancels the other branch, remote run included, on the first failure', async () => {
    const t = tag()
    const built = graph({
      nodes: {
        broken: {
          model: 'atelier/flaky',
          inputs: {
            prompt: { type: 'text', value: `broken ${t}` },
            failure_rate: { type: 'number', value: 1 },
          },
          outputs: { image: 'image' },
        },
        fine: {
          model: 'atelier/slow-render',
          inputs: { prompt: { type: 'text', value: `fine ${t}` } },
          outputs: { image: 'image' },
        },
      },
    })
    const result = await run(built.flow, {
      failurePolicy: 'fail-fast',
      client: ownClient,
      orgId: own.orgId,
      catalog: onlineCatalog({ mirror: dbs.mirror, client: ownClient, orgId: own.orgId }),
      runners: {
        model: new RemoteRunner({
          client: ownClient,
          ledger: dbs.ledger,
          profile: PROFILE,
          orgId: own.orgId,
          poll: { initialMs: 10, maxMs: 100 },
        }),
        builtin,
      },
    })
    expect(result.state).toBe('failed')
    const states = Object.fromEntries(result.nodes.map((node) => [node.nodeId, node.state]))
    expect(states[built.ids.broken as string]).toBe('failed')
    expect(states[built.ids.fine as string]).toBe('canceled')
    const runs: Run[] = []
    for await (const item of ownClient.list('/v1/runs', { params: { query: { limit: 500 } } })) {
      runs.push(item)
    }
    const slow = runs.find((item) => item.model_slug === 'atelier/slow-render')
    expect(slow?.status_code).toBe('canceled')
  }, 60_000)
})

describe('refusals before anything is dispatched', () => {
  it('refuses when the balance does not cover the estimate', async () => {
    const built = pipeline(`costly ${tag()}`)
    const before = (await allRuns()).length
    expect(
      (await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '0.0010' } })).status,
    ).toBe(200)
    try {
      const error = await refused(run(built.flow))
      expect(error.code).toBe('INSUFFICIENT_CREDIT')
      expect(error.message).toContain('0.0010')
      expect(error.estimateMicro).toBeGreaterThan(1000)
      expect(error.message).toContain(((error.estimateMicro as number) / 1e6).toFixed(4))
    } finally {
      await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '1000' } })
    }
    expect((await allRuns()).length).toBe(before)
  }, 60_000)

  it('reports every validation problem at once, naming node and input', async () => {
    const built = graph({
      inputs: { subject: 'text' },
      nodes: {
        noPrompt: {
          model: 'atelier/text-to-image',
          inputs: { width: { type: 'integer', value: 99999 } },
          outputs: { image: 'image' },
        },
        unknown: { model: randomUUID(), outputs: { image: 'image' } },
        mismatch: {
          model: 'atelier/upscale',
          inputs: { image: { type: 'image', value: 12 } },
          outputs: { image: 'image' },
        },
      },
    })
    const before = (await allRuns()).length
    const error = await refused(run(built.flow))
    expect(error.code).toBe('FLOW_INVALID')
    const found = error.problems.map((p) => [p.code, p.nodeId ?? p.path, p.inputName ?? null])
    expect(found).toEqual(
      expect.arrayContaining([
        ['MISSING_REQUIRED_INPUT', built.ids.noPrompt, 'prompt'],
        ['VALIDATOR_VIOLATION', built.ids.noPrompt, 'width'],
        ['UNKNOWN_MODEL', built.ids.unknown, null],
        ['MISSING_REQUIRED_INPUT', 'input.subject', null],
      ]),
    )
    expect(error.problems.length).toBeGreaterThanOrEqual(5)
    expect((await allRuns()).length).toBe(before)
  }, 60_000)
})

const keychain = secretServiceAvailability()

describe.skipIf(!keychain.available)('atelier run, end to end', { timeout: 180_000 }, () => {
  let keyring: Awaited<ReturnType<typeof startSecretService>>
  let cliSandbox: RunningSandbox
  let scratch: string

  beforeAll(async () => {
    keyring = await startSecretService()
    scratch = mkdtempSync(join(tmpdir(), 'atelier-run-cli-'))
    cliSandbox = await startSandbox({ latencyMs: 20, checkResponses: true })
  }, 60_000)

  afterAll(async () => {
    await cliSandbox.close()
    await keyring.close()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('runs a flow file with inputs, prints each node and a summary, and exits 0', async () => {
    const cliHome = join(scratch, 'home')
    const cli = (args: string[], input = '') =>
      runAtelier(['--home', cliHome, ...args], { env: keyring.env, input })
    const added = await cli(
      ['profile', 'add', 'work', '--base-url', cliSandbox.url],
      cliSandbox.keys.admin,
    )
    expect(added.code).toBe(0)

    const page = (await (
      await fetch(
        `${cliSandbox.url}/v1/models?q=${encodeURIComponent('slug=atelier/text-to-image')}`,
        {
          headers: { Authorization: `Bearer ${cliSandbox.keys.admin}` },
        },
      )
    ).json()) as { items: { id: string }[] }
    models.set('cli/text-to-image', page.items[0]?.id ?? '')
    const built = graph({
      inputs: { subject: 'text' },
      nodes: {
        draw: {
          model: 'cli/text-to-image',
          inputs: {
            prompt: { type: 'text', flowInput: 'subject' },
            width: { type: 'integer', value: 64 },
            height: { type: 'integer', value: 64 },
            seed: { type: 'seed', value: 5 },
          },
          outputs: { image: 'image' },
        },
      },
    })
    const file = join(scratch, 'flow.json')
    writeFileSync(file, JSON.stringify(built.flow))

    const ran = await cli(['run', file, '--input', 'subject=a navy harbour'])
    expect(ran.stderr).toBe('')
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(/draw.*started/)
    expect(ran.stdout).toMatch(/draw.*succeeded.*credits/)
    expect(ran.stdout).toMatch(/succeeded: 1 dispatched, 0 cached, 0 skipped/)

    const again = await cli(['--json', 'run', file, '--input', 'subject=a navy harbour'])
    expect(again.code).toBe(0)
    const summary = JSON.parse(again.stdout) as {
      state: string
      totals: { dispatched: number; cached: number }
    }
    expect(summary).toMatchObject({ state: 'succeeded', totals: { dispatched: 0, cached: 1 } })

    // --force takes the label the editor shows, not only the node's id.
    const labelled = join(scratch, 'labelled.json')
    writeFileSync(
      labelled,
      JSON.stringify({
        ...built.flow,
        nodes: built.flow.nodes.map((n) => ({ ...n, label: 'Draw the harbour', slug: null })),
      }),
    )
    const forced = await cli([
      '--json',
      'run',
      labelled,
      '--input',
      'subject=a navy harbour',
      '--force',
      'Draw the harbour',
    ])
    expect(forced.stderr).toBe('')
    expect(forced.code).toBe(0)
    expect(JSON.parse(forced.stdout)).toMatchObject({ totals: { dispatched: 1, cached: 0 } })
    const unknown = await cli(['run', labelled, '--input', 'subject=x', '--force', 'Paint'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('"Paint" is no node of this flow')
    expect(unknown.stderr).toContain('"Draw the harbour"')

    const missing = await cli(['run', file])
    expect(missing.code).toBe(2)
    expect(missing.stderr + missing.stdout).toContain('subject')
  })
})

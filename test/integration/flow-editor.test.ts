import { randomUUID } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Core } from '../../src-main/core'
import { parseFlowDocument } from '../../src-main/executor'
import type {
  FlowRunEventMessage,
  PaletteItem,
  StoredFlow,
} from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import { ipcCalls } from '../helpers/ipc-calls'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'
import { openSyncedCore, type SyncedCore } from '../helpers/synced-core'

/**
 * The flow editor's channels as the window reaches them: the real dispatcher and handlers over
 * a real core that synced a real sandbox, with the ledger and the media store in a temp home.
 */

let sandbox: TestSandbox
let opened: SyncedCore
let core: Core
const messages: FlowRunEventMessage[] = []
const listeners = new Set<() => void>()
let serviceFlowId: string
let textToImage: PaletteItem
let slowRender: PaletteItem

const { call, ok, fails } = ipcCalls(() => core)

const eventsOf = (flowRunId: string): FlowRunEvent[] =>
  messages.filter((m) => m.flowRunId === flowRunId).map((m) => m.event)

/** The run's events once `done` holds of them; fails after 20 s. */
function until(flowRunId: string, done: (events: FlowRunEvent[]) => boolean) {
  return new Promise<FlowRunEvent[]>((resolve, reject) => {
    const check = () => {
      const events = eventsOf(flowRunId)
      if (!done(events)) return
      listeners.delete(check)
      clearTimeout(timer)
      resolve(events)
    }
    const timer = setTimeout(() => {
      listeners.delete(check)
      reject(new Error(`flow run ${flowRunId}: ${JSON.stringify(eventsOf(flowRunId))}`))
    }, 20_000)
    listeners.add(check)
    check()
  })
}

const finished = (events: FlowRunEvent[]) => events.some((e) => e.type === 'flow-finished')

// ---- Flow files from a compact description

interface NodeSpec {
  model?: PaletteItem
  builtin?: string
  /** name → type, with where the value comes from */
  inputs?: Record<string, { type: string; from?: string; value?: unknown; flowInput?: string }>
  outputs?: Record<string, string>
  /** node output name → flow output name */
  flowOutputs?: Record<string, string>
}

function flowFile(
  id: string,
  name: string,
  spec: {
    inputs?: Record<string, string>
    outputs?: Record<string, string>
    nodes: Record<string, NodeSpec>
  },
): { flow: Record<string, unknown>; ids: Record<string, string> } {
  const ids: Record<string, string> = {}
  const outputIds = new Map<string, string>()
  for (const [key, node] of Object.entries(spec.nodes)) {
    ids[key] = randomUUID()
    for (const output of Object.keys(node.outputs ?? {})) {
      outputIds.set(`${key}.${output}`, randomUUID())
    }
  }
  const flow = {
    id,
    name,
    inputs: Object.entries(spec.inputs ?? {}).map(([input, type]) => ({
      id: randomUUID(),
      name: input,
      variable_type_code: type,
      is_required: true,
    })),
    outputs: Object.entries(spec.outputs ?? {}).map(([output, type]) => ({
      id: randomUUID(),
      name: output,
      variable_type_code: type,
    })),
    nodes: Object.entries(spec.nodes).map(([key, node]) => {
      const flowInputs = Object.fromEntries(
        Object.entries(node.inputs ?? {}).flatMap(([input, s]) =>
          s.flowInput ? [[input, s.flowInput]] : [],
        ),
      )
      return {
        id: ids[key],
        label: key,
        slug: key,
        type_code: node.model ? 'model' : 'builtin',
        model_id: node.model?.target ?? null,
        builtin_node_code: node.builtin ?? null,
        config: {
          ...(Object.keys(flowInputs).length > 0 ? { flow_inputs: flowInputs } : {}),
          ...(node.flowOutputs ? { flow_outputs: node.flowOutputs } : {}),
        },
        inputs: Object.entries(node.inputs ?? {}).map(([input, s]) => ({
          id: randomUUID(),
          name: input,
          variable_type_code: s.type,
          source_output_id: s.from ? (outputIds.get(s.from) ?? null) : null,
          value: s.value ?? null,
        })),
        outputs: Object.entries(node.outputs ?? {}).map(([output, type]) => ({
          id: outputIds.get(`${key}.${output}`),
          name: output,
          variable_type_code: type,
        })),
      }
    }),
  }
  return { flow, ids }
}

/** The flow file as the main process keeps it: read back with its defaults filled in. */
function normalized(flow: Record<string, unknown>): Record<string, unknown> {
  const parsed = parseFlowDocument(flow)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.flow as unknown as Record<string, unknown>
}

/** A prompt (flow input) → text-to-image → picture (flow output) flow. */
function pictureFlow(id: string, name: string, model = textToImage, size = 512) {
  return flowFile(id, name, {
    inputs: { prompt: 'text' },
    outputs: { picture: 'image' },
    nodes: {
      picture: {
        model,
        inputs: {
          prompt: { type: 'text', flowInput: 'prompt' },
          width: { type: 'integer', value: size },
          height: { type: 'integer', value: size },
        },
        outputs: { image: 'image' },
        flowOutputs: { image: 'picture' },
      },
    },
  })
}

async function newLocalFlow(name: string): Promise<StoredFlow> {
  return ok('flows.create', { name })
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 30 })
  const created = await sandbox.call('POST', '/v1/flows', {
    body: {
      name: 'Shared greeting',
      nodes: [
        {
          label: 'Greeting',
          type_code: 'builtin',
          builtin_node_code: 'text',
          inputs: [{ name: 'value', variable_type_code: 'text', value: 'hello' }],
          outputs: [{ name: 'text', variable_type_code: 'text' }],
        },
      ],
    },
  })
  expect(created.status).toBe(201)
  serviceFlowId = (created.body as { id: string }).id
  opened = await openSyncedCore(sandbox, 'flow-editor', (name, payload) => {
    if (name !== 'flowRuns.event') return
    messages.push(payload as FlowRunEventMessage)
    for (const listener of [...listeners]) listener()
  })
  core = opened.core
  const palette = await ok('flows.palette', undefined)
  const model = (slug: string) => {
    const id = core.databases.mirror.models.withSlug({ orgId: sandbox.orgId }, slug)?.id
    const item = palette.find((p) => p.kind === 'model' && p.target === id)
    if (!item) throw new Error(`The palette has no ${slug}.`)
    return item
  }
  textToImage = model('atelier/text-to-image')
  slowRender = model('atelier/slow-render')
}, 60_000)

afterAll(async () => {
  await opened.close()
  await sandbox.close()
})

describe('the flow list', () => {
  it('lists the service’s flows and templates, and opens them with their nodes', async () => {
    const list = await ok('flows.list', undefined)
    const service = list.find((f) => f.id === serviceFlowId)
    expect(service).toMatchObject({ name: 'Shared greeting', source: 'service' })
    const templates = list.filter((f) => f.source === 'template')
    expect(templates.map((t) => t.name)).toContain('Prompt to image')
    expect(list.map((f) => f.updatedMs)).toEqual(
      [...list.map((f) => f.updatedMs)].sort((a, b) => b - a),
    )

    const opened = await ok('flows.get', { id: serviceFlowId })
    expect(opened).toMatchObject({ source: 'service', nodeCount: 1, versions: [] })
    expect((opened.flow.nodes as { label: string }[]).map((n) => n.label)).toEqual(['Greeting'])
    const template = templates.find((t) => t.name === 'Prompt to image')
    const flow = await ok('flows.get', { id: template?.id ?? '' })
    expect(flow.source).toBe('template')
    expect(flow.nodeCount).toBeGreaterThan(0)
    expect(parseFlowDocument(flow.flow).ok).toBe(true)

    expect(await fails('flows.get', { id: randomUUID() })).toMatchObject({ code: 'FLOW_NOT_FOUND' })
  })

  it('refuses to change the service’s flows and templates, and copies them instead', async () => {
    const template = (await ok('flows.list', undefined)).find((f) => f.source === 'template')
    const id = template?.id ?? ''
    const original = await ok('flows.get', { id })
    for (const error of [
      await fails('flows.save', { id, flow: original.flow }),
      await fails('flows.rename', { id, name: 'Mine now' }),
      await fails('flows.delete', { id }),
      await fails('flows.saveVersion', { id, name: 'v1' }),
      await fails('flows.delete', { id: serviceFlowId }),
    ]) {
      expect(error.code).toBe('READ_ONLY')
    }

    const copy = await ok('flows.create', { name: 'My template copy', from: id })
    expect(copy).toMatchObject({ source: 'local', name: 'My template copy', versions: [] })
    expect(copy.id).not.toBe(id)
    expect(copy.flow.id).toBe(copy.id)
    const nodes = (flow: StoredFlow) => flow.flow.nodes as { id: string; flow_id: string }[]
    expect(nodes(copy).map((n) => n.id)).toEqual(nodes(original).map((n) => n.id))
    expect(nodes(copy).every((n) => n.flow_id === copy.id)).toBe(true)
    expect(copy.flow).toMatchObject({ org_id: null, version: 0, name: 'My template copy' })

    const duplicate = await ok('flows.create', { name: 'Copy of my copy', from: copy.id })
    expect(nodes(duplicate).map((n) => n.id)).toEqual(nodes(copy).map((n) => n.id))
    expect((await ok('flows.list', undefined))[0]?.id).toBe(duplicate.id)
  })
})

describe('local flows', () => {
  it('saves and reloads a flow; a save over a newer one is a CONFLICT', async () => {
    const created = await newLocalFlow('Poster')
    expect(created).toMatchObject({ source: 'local', nodeCount: 0, name: 'Poster' })
    expect(created.flow).toMatchObject({ id: created.id, name: 'Poster', nodes: [] })

    const { flow } = pictureFlow(created.id, 'Poster')
    const saved = await ok('flows.save', { id: created.id, flow, baseUpdatedMs: created.updatedMs })
    expect(saved.updatedMs).toBeGreaterThan(created.updatedMs)
    const reloaded = await ok('flows.get', { id: created.id })
    expect(reloaded.flow).toEqual(normalized(flow))
    expect(reloaded).toMatchObject({ nodeCount: 1, updatedMs: saved.updatedMs })
    // What was read back saves again unchanged.
    const again = await ok('flows.save', {
      id: created.id,
      flow: reloaded.flow,
      baseUpdatedMs: saved.updatedMs,
    })
    expect((await ok('flows.get', { id: created.id })).flow).toEqual(reloaded.flow)

    const stale = await fails('flows.save', {
      id: created.id,
      flow,
      baseUpdatedMs: saved.updatedMs,
    })
    expect(stale.code).toBe('CONFLICT')
    expect((await ok('flows.get', { id: created.id })).updatedMs).toBe(again.updatedMs)
  })

  it('saves work in progress with graph problems, but not a file that is no flow file', async () => {
    const created = await newLocalFlow('Half done')
    // The model's required prompt is wired to nothing yet.
    const { flow } = flowFile(created.id, 'Half done', {
      nodes: { picture: { model: textToImage, outputs: { image: 'image' } } },
    })
    await ok('flows.save', { id: created.id, flow })
    expect((await ok('flows.get', { id: created.id })).nodeCount).toBe(1)

    const misspelt = { ...flow, nodes: [{ ...(flow.nodes as object[])[0], labl: 'x' }] }
    const invalid = await fails('flows.save', { id: created.id, flow: misspelt })
    expect(invalid.code).toBe('FLOW_INVALID')
    expect(invalid.issues).toEqual([expect.objectContaining({ path: 'nodes.0.labl' })])

    const otherId = await fails('flows.save', {
      id: created.id,
      flow: { ...flow, id: randomUUID() },
    })
    expect(otherId).toMatchObject({ code: 'FLOW_INVALID', issues: [{ path: 'id' }] })
    expect(await fails('flows.save', { id: randomUUID(), flow })).toMatchObject({
      code: 'FLOW_NOT_FOUND',
    })
  })

  it('renames, moves to the trash and restores', async () => {
    const created = await newLocalFlow('Draft')
    const renamed = await ok('flows.rename', { id: created.id, name: 'Final' })
    expect(renamed).toMatchObject({ id: created.id, name: 'Final', source: 'local' })
    expect((await ok('flows.get', { id: created.id })).flow.name).toBe('Final')

    expect(await ok('flows.delete', { id: created.id })).toBeNull()
    expect((await ok('flows.list', undefined)).some((f) => f.id === created.id)).toBe(false)
    expect((await fails('flows.get', { id: created.id })).code).toBe('FLOW_NOT_FOUND')
    expect((await fails('flows.rename', { id: created.id, name: 'x' })).code).toBe('FLOW_NOT_FOUND')

    expect(await ok('flows.restore', { id: created.id })).toMatchObject({ name: 'Final' })
    expect((await ok('flows.list', undefined))[0]).toMatchObject({ id: created.id })
    expect((await fails('flows.restore', { id: randomUUID() })).code).toBe('FLOW_NOT_FOUND')
  })

  it('exports a flow file that imports back as an equal flow under a new id', async () => {
    const created = await newLocalFlow('Round trip')
    const { flow } = pictureFlow(created.id, 'Round trip')
    await ok('flows.save', { id: created.id, flow })
    const original = await ok('flows.get', { id: created.id })

    const file = await ok('flows.export', { id: created.id })
    expect(file.fileName).toBe('round-trip.atelier-flow.json')
    expect(JSON.parse(file.json)).toEqual(original.flow)
    // What `atelier run FILE` reads.
    expect(parseFlowDocument(file.json).ok).toBe(true)

    const imported = await ok('flows.import', { json: file.json })
    // The original is still here, so the copy is named as a file manager would name it.
    expect(imported).toMatchObject({ source: 'local', name: 'Round trip (2)', nodeCount: 1 })
    expect(imported.id).not.toBe(created.id)
    const renamedIds = {
      ...(JSON.parse(file.json.replaceAll(created.id, imported.id)) as object),
      name: 'Round trip (2)',
    }
    expect(imported.flow).toEqual(renamedIds)
    expect((await ok('flows.get', { id: imported.id })).flow).toEqual(renamedIds)

    const broken = await fails('flows.import', { json: '{"name": "no id", "nodes": 3}' })
    expect(broken.code).toBe('FLOW_INVALID')
    expect(broken.issues?.map((issue) => issue.path).sort()).toEqual(['id', 'nodes'])
    expect((await fails('flows.import', { json: '{ not json' })).code).toBe('FLOW_INVALID')
  })

  it('keeps named versions, and a restore can be undone', async () => {
    const created = await newLocalFlow('Versioned')
    const first = pictureFlow(created.id, 'Versioned').flow
    await ok('flows.save', { id: created.id, flow: first })
    expect(await ok('flows.saveVersion', { id: created.id, name: 'One node' })).toMatchObject({
      version: 1,
      name: 'One node',
    })
    const second = flowFile(created.id, 'Versioned', {
      nodes: { a: { builtin: 'text', outputs: { text: 'text' } }, b: { builtin: 'text' } },
    }).flow
    await ok('flows.save', { id: created.id, flow: second })

    const restored = await ok('flows.restoreVersion', { id: created.id, version: 1 })
    expect(restored.flow).toEqual(normalized(first))
    expect(restored.versions.map((v) => [v.version, v.name])).toEqual([
      [2, 'Before restoring “One node”'],
      [1, 'One node'],
    ])
    const undone = await ok('flows.restoreVersion', { id: created.id, version: 2 })
    expect(undone.flow).toEqual(normalized(second))
    expect(undone.nodeCount).toBe(2)

    expect((await fails('flows.restoreVersion', { id: created.id, version: 9 })).code).toBe(
      'FLOW_NOT_FOUND',
    )
  })
})

describe('the palette and checks', () => {
  it('offers models with their ports and price, built-ins, workflows and local flows', async () => {
    const local = await newLocalFlow('As a sub-flow')
    await ok('flows.save', { id: local.id, flow: pictureFlow(local.id, 'As a sub-flow').flow })
    const palette = await ok('flows.palette', undefined)

    expect(textToImage).toMatchObject({ name: 'Atelier Text to Image', category: 'Text to image' })
    // 512 × 512 by default: 0.262144 megapixels at 0.04 credits.
    expect(textToImage.priceMicro).toBe(10_486)
    expect(textToImage.inputs.find((p) => p.name === 'prompt')).toMatchObject({
      variableType: 'text',
      required: true,
      validatorCode: 'length',
    })
    expect(textToImage.inputs.find((p) => p.name === 'width')).toMatchObject({
      defaultValue: 512,
      required: false,
    })
    expect(textToImage.outputs.map((p) => [p.name, p.variableType])).toEqual([['image', 'image']])

    const text = palette.find((p) => p.kind === 'builtin' && p.target === 'text')
    expect(text).toMatchObject({ category: 'Built-in', priceMicro: 0 })
    expect(text?.outputs.map((p) => p.name)).toEqual(['text'])
    const evaluate = palette.find((p) => p.kind === 'builtin' && p.target === 'evaluate')
    expect(evaluate?.priceMicro).toBeGreaterThan(0)
    expect(palette.filter((p) => p.kind === 'wfengine_workflow').map((p) => p.name)).toContain(
      'Basic text to image',
    )
    const sub = palette.find((p) => p.kind === 'sub_flow' && p.target === local.id)
    expect(sub).toMatchObject({ name: 'As a sub-flow', category: 'Flows' })
    expect(sub?.inputs.map((p) => p.name)).toEqual(['prompt'])
  })

  it('reports every problem naming node and input, the estimate and the balance', async () => {
    const { flow, ids } = flowFile(randomUUID(), 'Unwired', {
      nodes: {
        picture: {
          model: textToImage,
          inputs: { width: { type: 'integer', value: 512 } },
          outputs: { image: 'image' },
        },
      },
    })
    const check = await ok('flows.check', { flow })
    expect(check.problems).toContainEqual(
      expect.objectContaining({
        code: 'MISSING_REQUIRED_INPUT',
        nodeId: ids.picture,
        inputName: 'prompt',
      }),
    )
    expect(check.estimate).toEqual({
      totalMicro: textToImage.priceMicro,
      byNode: { [ids.picture as string]: textToImage.priceMicro },
    })
    const balance = await sandbox.call('GET', '/v1/billing/balance')
    expect(check.balanceMicro).toBe(
      Math.round(Number((balance.body as { balance: string }).balance) * 1_000_000),
    )

    const wired = pictureFlow(randomUUID(), 'Wired').flow
    expect((await ok('flows.check', { flow: wired })).problems).toEqual([])
    const withInputs = await ok('flows.check', { flow: wired, inputs: {} })
    expect(withInputs.problems).toEqual([
      expect.objectContaining({ code: 'MISSING_REQUIRED_INPUT', path: 'input.prompt' }),
    ])
    expect((await fails('flows.check', { flow: { name: 'no id' } })).code).toBe('FLOW_INVALID')
  })
})

describe('flow runs', () => {
  it('runs a text → image flow with live events, then again from the cache', async () => {
    const { flow, ids } = pictureFlow(randomUUID(), 'Live')
    const estimate = (await ok('flows.check', { flow })).estimate
    const inputs = { prompt: 'a teal lighthouse' }

    const { flowRunId } = await ok('flowRuns.start', { flow, inputs })
    // The answer comes before any event that carries its id.
    expect(eventsOf(flowRunId)).toEqual([])
    const events = await until(flowRunId, finished)
    const types = events.map((e) => e.type)
    expect(types[0]).toBe('flow-started')
    const at = (type: string) => events.findIndex((e) => e.type === type && 'nodeId' in e)
    expect(at('node-queued')).toBeGreaterThan(0)
    expect(at('node-running')).toBeGreaterThan(at('node-queued'))
    expect(at('node-succeeded')).toBeGreaterThan(at('node-running'))
    expect(types.at(-1)).toBe('flow-finished')
    const succeeded = events.find((e) => e.type === 'node-succeeded')
    expect(succeeded).toMatchObject({ nodeId: ids.picture })
    // The sandbox charged what the check estimated.
    expect(succeeded?.type === 'node-succeeded' && succeeded.costMicro).toBe(estimate?.totalMicro)
    const end = events.at(-1)
    expect(end).toMatchObject({ type: 'flow-finished', state: 'succeeded' })
    expect(end?.type === 'flow-finished' && end.outputs.picture).toMatchObject({ kind: 'media' })

    const second = await ok('flowRuns.start', { flow, inputs })
    const cached = await until(second.flowRunId, finished)
    expect(
      cached.filter((e) => e.type === 'node-cached').map((e) => 'nodeId' in e && e.nodeId),
    ).toEqual([ids.picture])
    expect(cached.some((e) => e.type === 'node-running')).toBe(false)
    expect(cached.at(-1)).toMatchObject({
      state: 'succeeded',
      totals: { dispatched: 0, cached: 1, costMicro: 0 },
    })
  })

  it('previews an output as a small WebP data URL, kept for offline', async () => {
    const { flow } = pictureFlow(randomUUID(), 'Preview')
    const { flowRunId } = await ok('flowRuns.start', { flow, inputs: { prompt: 'a red kite' } })
    const end = (await until(flowRunId, finished)).at(-1)
    const picture = (end?.type === 'flow-finished' ? end.outputs.picture : null) as {
      sha256: string
      url: string
    } | null
    if (!picture) throw new Error('The flow made no picture.')
    const first = await ok('media.preview', { sha256: picture.sha256, url: picture.url, size: 64 })
    expect(first.sha256).toBe(picture.sha256)
    expect(first.dataUrl).toMatch(/^data:image\/webp;base64,/)
    const bytes = Buffer.from(first.dataUrl.split(',')[1] ?? '', 'base64')
    const meta = await sharp(bytes).metadata()
    expect(meta.format).toBe('webp')
    expect(Math.max(meta.width, meta.height)).toBeLessThanOrEqual(64)
    // Stored now: the same preview comes without the address (as offline).
    const again = await ok('media.preview', { sha256: picture.sha256, size: 64 })
    expect(again.dataUrl).toBe(first.dataUrl)
    // One this machine never had, with nowhere to fetch it from.
    const unknown = await call('media.preview', { sha256: 'ab'.repeat(32) })
    expect(unknown).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
    const bad = await call('media.preview', { sha256: 'not a hash' })
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
  })

  it('runs to a node: only it and what it needs, past a half-built branch', async () => {
    const { flow, ids } = flowFile(randomUUID(), 'Partial', {
      nodes: {
        words: {
          builtin: 'text',
          inputs: { value: { type: 'text', value: 'a gold harbour' } },
          outputs: { text: 'text' },
        },
        picture: {
          model: textToImage,
          inputs: { prompt: { type: 'text', from: 'words.text' } },
          outputs: { image: 'image' },
        },
        // The required image is not wired yet.
        later: { model: slowRender, outputs: { image: 'image' } },
      },
    })
    expect((await fails('flowRuns.start', { flow })).code).toBe('FLOW_INVALID')
    const { flowRunId } = await ok('flowRuns.start', { flow, only: [ids.picture as string] })
    const events = await until(flowRunId, finished)
    expect(events.at(-1)).toMatchObject({ state: 'succeeded', totals: { nodes: 2 } })
    const ran = new Set(events.flatMap((e) => ('nodeId' in e ? [e.nodeId] : [])))
    expect([...ran].sort()).toEqual([ids.words, ids.picture].sort())
  })

  it('refuses a run that cannot start, and one the balance does not cover', async () => {
    const broken = await fails('flowRuns.start', {
      flow: pictureFlow(randomUUID(), 'No prompt').flow,
      inputs: {},
    })
    expect(broken.code).toBe('FLOW_INVALID')
    expect(broken.issues).toEqual([expect.objectContaining({ path: 'input.prompt' })])

    const before = await sandbox.call('GET', '/v1/billing/balance')
    const balance = (before.body as { balance: string }).balance
    expect(
      (await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '0.0001' } })).status,
    ).toBe(200)
    try {
      const poor = await fails('flowRuns.start', {
        flow: pictureFlow(randomUUID(), 'Too dear', textToImage, 1024).flow,
        inputs: { prompt: 'an expensive sunrise' },
      })
      expect(poor.code).toBe('RUN_REFUSED')
      expect(poor.message).toMatch(/balance/)
    } finally {
      await sandbox.call('PUT', '/_sandbox/balance', { body: { balance } })
    }
    expect((await fails('flowRuns.cancel', { flowRunId: randomUUID() })).code).toBe(
      'FLOW_RUN_NOT_FOUND',
    )
  })

  it('cancels a slow run, its remote run too', async () => {
    const { flow } = pictureFlow(randomUUID(), 'Slow', slowRender, 1536)
    const { flowRunId } = await ok('flowRuns.start', {
      flow,
      inputs: { prompt: 'a slow navy tide' },
    })
    const dispatched = await until(flowRunId, (events) =>
      events.some((e) => e.type === 'node-remote-run'),
    )
    const remote = dispatched.find((e) => e.type === 'node-remote-run')
    expect(await ok('flowRuns.cancel', { flowRunId })).toBeNull()
    const events = await until(flowRunId, finished)
    expect(events.at(-1)).toMatchObject({ type: 'flow-finished', state: 'canceled' })
    expect(events.some((e) => e.type === 'node-canceled')).toBe(true)
    const runId = remote?.type === 'node-remote-run' ? remote.runId : ''
    const run = await sandbox.call('GET', `/v1/runs/${runId}`)
    expect((run.body as { status_code: string }).status_code).toBe('canceled')
    expect((await fails('flowRuns.cancel', { flowRunId })).code).toBe('FLOW_RUN_NOT_FOUND')
  })
})

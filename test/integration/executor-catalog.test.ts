import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BuiltinNode, ErrorDetail, Flow, FlowCreate, Model } from '../../src-shared/api'
import { openDatabases, type Databases } from '../../src-main/db'
import {
  BUILTIN_NODES,
  mirrorCatalog,
  parseFlowDocument,
  planFlow,
  validateFlow,
  type FlowProblem,
} from '../../src-main/executor/validate'
import type { FlowDocument } from '../../src-main/executor/types'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The catalog as the mirror holds it after a sync from the sandbox, and Atelier's validation
 * side by side with the sandbox's own: the same graph, sent to POST /v1/flows, must be refused
 * for the same kinds of problems at the same nodes (the messages are free to differ).
 */

let sandbox: TestSandbox
let client: ServiceClient
const homes: string[] = []
const opened: Databases[] = []
/** Synced as `atelier sync` does it: models without their details. */
let listed: Databases
/** Synced, then every model's and flow's details fetched as a node editor would. */
let detailed: Databases

const scope = () => ({ orgId: sandbox.orgId })

async function synced(): Promise<Databases> {
  const home = mkdtempSync(join(tmpdir(), 'atelier-executor-catalog-'))
  homes.push(home)
  const dbs = openDatabases(home)
  opened.push(dbs)
  await new SyncEngine({
    client,
    mirror: dbs.mirror,
    profileName: 'test',
    orgId: sandbox.orgId,
    detailsLimit: 0,
  }).syncAll({ collections: ['catalogs', 'models', 'flows', 'workflows'] })
  return dbs
}

/** What the list leaves out: each model's inputs, outputs and pricing, each flow's graph. */
async function fetchDetails(dbs: Databases): Promise<void> {
  for (const model of dbs.mirror.models.list(scope(), { limit: 500 }).items) {
    const full = await client.get('/v1/models/{model_id}', {
      params: { path: { model_id: model.id } },
    })
    dbs.mirror.models.upsertPage([full], scope())
  }
  for (const flow of dbs.mirror.flows.list(scope(), { limit: 500 }).items) {
    const full = await client.get('/v1/flows/{flow_id}', {
      params: { path: { flow_id: flow.id }, query: { include: 'nodes,inputs,outputs' } },
    })
    dbs.mirror.flows.upsertPage([full], scope())
  }
}

function modelBySlug(slug: string): Model {
  const model = detailed.mirror.models.withSlug(scope(), slug)
  if (!model) throw new Error(`The sandbox has no model ${slug}.`)
  return model
}

// ---- Flows from a compact description, with fresh ids each time (the sandbox keeps them).

interface InputSpec {
  name: string
  type: string
  from?: string
  sourceId?: string
  value?: unknown
}

interface NodeSpec {
  type?: string
  model?: string
  builtin?: string
  workflow?: string
  subFlow?: string
  slug?: string
  inputs?: InputSpec[]
  outputs?: [name: string, type: string, id?: string][]
  config?: Record<string, unknown>
}

interface GraphSpec {
  id?: string
  name?: string
  inputs?: { name: string; type: string }[]
  outputs?: { name: string; type: string }[]
  nodes: Record<string, NodeSpec>
}

function document(spec: GraphSpec): FlowDocument {
  const outputIds = new Map<string, string>()
  for (const [key, node] of Object.entries(spec.nodes)) {
    for (const [name, , id] of node.outputs ?? []) {
      outputIds.set(`${key}.${name}`, id ?? randomUUID())
    }
  }
  const parsed = parseFlowDocument({
    id: spec.id ?? randomUUID(),
    name: spec.name ?? `Flow ${randomUUID().slice(0, 8)}`,
    inputs: (spec.inputs ?? []).map((input) => ({
      id: randomUUID(),
      name: input.name,
      variable_type_code: input.type,
    })),
    outputs: (spec.outputs ?? []).map((output) => ({
      id: randomUUID(),
      name: output.name,
      variable_type_code: output.type,
    })),
    nodes: Object.entries(spec.nodes).map(([key, node]) => ({
      id: randomUUID(),
      label: key,
      ...(node.slug === undefined ? {} : { slug: node.slug }),
      type_code:
        node.type ??
        (node.model !== undefined
          ? 'model'
          : node.builtin !== undefined
            ? 'builtin'
            : node.workflow !== undefined
              ? 'wfengine_workflow'
              : 'sub_flow'),
      model_id: node.model ?? null,
      builtin_node_code: node.builtin ?? null,
      wfengine_workflow_id: node.workflow ?? null,
      sub_flow_id: node.subFlow ?? null,
      config: node.config ?? {},
      inputs: (node.inputs ?? []).map((input) => ({
        id: randomUUID(),
        name: input.name,
        variable_type_code: input.type,
        source_output_id:
          input.sourceId ?? (input.from === undefined ? null : (outputIds.get(input.from) ?? null)),
        value: input.value ?? null,
      })),
      outputs: (node.outputs ?? []).map(([name, type]) => ({
        id: outputIds.get(`${key}.${name}`),
        name,
        variable_type_code: type,
      })),
    })),
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.flow
}

/** The same graph as the service's creation body: only what the flow says, nothing it lacks. */
function createBody(flow: FlowDocument): FlowCreate {
  const some = <T>(value: T | null) => (value === null ? undefined : value)
  return {
    name: flow.name,
    inputs: flow.inputs.map((input) => ({
      id: input.id,
      name: input.name,
      variable_type_code: input.variable_type_code,
    })),
    outputs: flow.outputs.map((output) => ({
      id: output.id,
      name: output.name,
      variable_type_code: output.variable_type_code,
    })),
    nodes: flow.nodes.map((node) => ({
      id: node.id,
      label: node.label,
      slug: some(node.slug),
      type_code: node.type_code,
      config: node.config,
      model_id: node.model_id,
      builtin_node_code: node.builtin_node_code,
      wfengine_workflow_id: node.wfengine_workflow_id,
      sub_flow_id: node.sub_flow_id,
      inputs: node.inputs.map((input) => ({
        id: input.id,
        name: input.name,
        variable_type_code: input.variable_type_code,
        value: some(input.value),
        source_output_id: input.source_output_id,
        retry_source_output_id: input.retry_source_output_id,
      })),
      outputs: node.outputs.map((output) => ({
        id: output.id,
        name: output.name,
        variable_type_code: output.variable_type_code,
      })),
    })),
  }
}

// ---- Comparing problems by kind and place.

/** The sandbox's field-problem codes, by what they are about, in Atelier's codes. */
function sandboxKind(problem: ErrorDetail): string {
  const field = (problem.field ?? '').replace(/^body\./, '')
  const last = field.split('.').at(-1) ?? ''
  const mapping = /config\.flow_(inputs|outputs)\./.test(field)
  switch (problem.code) {
    case 'cycle':
      return last === 'sub_flow_id' ? 'SUB_FLOW_RECURSION' : 'CYCLE'
    case 'not_found':
      if (mapping) return 'UNKNOWN_MAPPING'
      return (
        {
          source_output_id: 'DANGLING_CONNECTION',
          retry_source_output_id: 'DANGLING_CONNECTION',
          model_id: 'UNKNOWN_MODEL',
          builtin_node_code: 'UNKNOWN_BUILTIN',
          wfengine_workflow_id: 'UNKNOWN_WORKFLOW',
          sub_flow_id: 'UNKNOWN_SUB_FLOW',
        }[last] ?? `not_found:${last}`
      )
    case 'type_mismatch':
      return 'TYPE_MISMATCH'
    case 'conflict':
      return 'AMBIGUOUS_INPUT'
    case 'unknown_port':
      return 'UNKNOWN_PORT'
    case 'duplicate':
      if (mapping) return 'FLOW_OUTPUT_CONFLICT'
      return { id: 'DUPLICATE_ID', name: 'DUPLICATE_NAME', slug: 'DUPLICATE_SLUG' }[last] ?? last
    case 'unknown_code':
      return (
        {
          type_code: 'UNKNOWN_NODE_TYPE',
          variable_type_code: 'UNKNOWN_TYPE',
          validator_code: 'UNKNOWN_VALIDATOR',
        }[last] ?? `unknown_code:${last}`
      )
    case 'required':
      return 'TARGET_MISSING'
    case 'not_allowed':
      return 'TARGET_CONFLICT'
    default:
      return problem.code
  }
}

/** Atelier's kinds that the sandbox's graph check also looks for. */
const SHARED_KINDS = new Set([
  'CYCLE',
  'SUB_FLOW_RECURSION',
  'DANGLING_CONNECTION',
  'UNKNOWN_MODEL',
  'UNKNOWN_BUILTIN',
  'UNKNOWN_WORKFLOW',
  'UNKNOWN_SUB_FLOW',
  'TYPE_MISMATCH',
  'AMBIGUOUS_INPUT',
  'UNKNOWN_PORT',
  'DUPLICATE_ID',
  'DUPLICATE_NAME',
  'DUPLICATE_SLUG',
  'FLOW_OUTPUT_CONFLICT',
  'UNKNOWN_NODE_TYPE',
  'UNKNOWN_TYPE',
  'UNKNOWN_VALIDATOR',
  'TARGET_MISSING',
  'TARGET_CONFLICT',
  'UNKNOWN_MAPPING',
])

/**
 * `kind@nodes.2`: which kind of problem, and which node or flow port it is on. A loop is on all
 * its nodes, and which edge a check calls the closing one is its own choice: a loop is compared
 * by kind alone.
 */
const placed = (kind: string, path: string) =>
  kind === 'CYCLE' ? kind : `${kind}@${path.split('.').slice(0, 2).join('.')}`

function ours(problems: readonly FlowProblem[]): string[] {
  const kinds = problems.map((p) => {
    const mapping = /config\.flow_(inputs|outputs)\./.test(p.path)
    const kind =
      mapping && ['UNKNOWN_PORT', 'UNKNOWN_FLOW_INPUT', 'UNKNOWN_FLOW_OUTPUT'].includes(p.code)
        ? 'UNKNOWN_MAPPING'
        : p.code
    return placed(kind, p.path)
  })
  return [...new Set(kinds.filter((k) => SHARED_KINDS.has(k.split('@')[0] ?? '')))].sort()
}

async function theirs(
  method: 'POST' | 'PUT',
  path: string,
  body: unknown,
): Promise<{ status: number; kinds: string[] }> {
  const answer = await sandbox.call(method, path, { body })
  const errors = ((answer.body as { errors?: ErrorDetail[] } | undefined)?.errors ?? []).map(
    (problem) => placed(sandboxKind(problem), (problem.field ?? '').replace(/^body\./, '')),
  )
  return { status: answer.status, kinds: [...new Set(errors)].sort() }
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  listed = await synced()
  detailed = await synced()
  await fetchDetails(detailed)
})

afterAll(async () => {
  for (const dbs of opened) dbs.close()
  await sandbox.close()
  for (const home of homes) rmSync(home, { recursive: true, force: true })
})

describe('mirrorCatalog', () => {
  it('reads the models, workflows and catalogs a sync brought in', async () => {
    const catalog = mirrorCatalog(detailed.mirror, sandbox.orgId)
    const textToImage = modelBySlug('atelier/text-to-image')
    const served = await client.get('/v1/models/{model_id}', {
      params: { path: { model_id: textToImage.id } },
    })
    const known = catalog.model(textToImage.id)
    expect(known?.slug).toBe('atelier/text-to-image')
    expect(known?.inputs).toEqual(served.inputs)
    expect(known?.outputs).toEqual(served.outputs)
    expect(known?.pricing).toEqual(served.pricing)
    expect(catalog.model(randomUUID())).toBeUndefined()

    const workflows = await client.get('/v1/comfyui-workflows')
    const first = workflows.items[0]
    if (!first) throw new Error('The sandbox has no workflow.')
    expect(catalog.workflow(first.id)?.inputs).toEqual(first.inputs)

    const types = await client.get('/v1/catalogs/variable-types')
    expect(catalog.variableTypes().map((r) => r.code)).toEqual(types.items.map((r) => r.code))
    const validators = await client.get('/v1/catalogs/validators')
    expect(catalog.validators().map((r) => r.code)).toEqual(validators.items.map((r) => r.code))
  })

  it('knows a model synced from a list only by name, and validation says so', () => {
    const catalog = mirrorCatalog(listed.mirror, sandbox.orgId)
    const upscale = listed.mirror.models.withSlug(scope(), 'atelier/upscale')
    if (!upscale) throw new Error('no upscale model')
    expect(catalog.model(upscale.id)?.inputs).toBeUndefined()
    const flow = document({
      nodes: {
        bigger: {
          model: upscale.id,
          inputs: [{ name: 'image', type: 'image', value: 'data:image/png;base64,AA==' }],
          outputs: [['image', 'image']],
        },
      },
    })
    expect(validateFlow(flow, catalog).map((p) => p.code)).toEqual(['TARGET_DETAILS_UNKNOWN'])
  })

  it('carries the built-ins the service lists, port for port', async () => {
    const served: BuiltinNode[] = []
    for await (const node of client.list('/v1/builtin-nodes')) served.push(node)
    const shape = (nodes: readonly BuiltinNode[]) =>
      nodes.map((node) => ({
        code: node.code,
        inputs: node.inputs.map((p) => [p.name, p.variable_type_code, p.is_required]),
        outputs: node.outputs.map((p) => [p.name, p.variable_type_code]),
      }))
    expect(shape(BUILTIN_NODES)).toEqual(shape(served))
  })
})

describe('a flow built from the synced catalog', () => {
  function goodFlow(): FlowDocument {
    const textToImage = modelBySlug('atelier/text-to-image')
    const upscale = modelBySlug('atelier/upscale')
    return document({
      inputs: [{ name: 'subject', type: 'text' }],
      outputs: [{ name: 'asset', type: 'string' }],
      nodes: {
        words: {
          builtin: 'prompt_template',
          inputs: [
            { name: 'template', type: 'text', value: 'a {subject} at dusk' },
            { name: 'subject', type: 'text' },
          ],
          outputs: [['prompt', 'text']],
          config: { flow_inputs: { subject: 'subject' } },
        },
        picture: {
          model: textToImage.id,
          inputs: [
            { name: 'prompt', type: 'text', from: 'words.prompt' },
            { name: 'width', type: 'integer', value: 768 },
          ],
          outputs: [['image', 'image']],
        },
        bigger: {
          model: upscale.id,
          inputs: [{ name: 'image', type: 'image', from: 'picture.image' }],
          outputs: [['image', 'image']],
        },
        judge: {
          builtin: 'evaluate',
          inputs: [
            { name: 'image', type: 'image', from: 'bigger.image' },
            { name: 'prompt', type: 'text', from: 'words.prompt' },
          ],
          outputs: [['passed', 'boolean']],
        },
        save: {
          builtin: 'save_to_assets',
          inputs: [{ name: 'image', type: 'image', from: 'bigger.image' }],
          outputs: [['asset_id', 'string']],
          config: { flow_outputs: { asset_id: 'asset' } },
        },
      },
    })
  }

  it('validates and plans, and the sandbox accepts the same graph', async () => {
    const catalog = mirrorCatalog(detailed.mirror, sandbox.orgId)
    const flow = goodFlow()
    expect(validateFlow(flow, catalog)).toEqual([])
    const planned = planFlow(flow, catalog)
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems))
    expect(planned.plan.order).toHaveLength(5)
    const created = await sandbox.call('POST', '/v1/flows', { body: createBody(flow) })
    expect(created.status).toBe(201)
  })

  it('gets refused for the same kinds of problems as the sandbox refuses it', async () => {
    const catalog = mirrorCatalog(detailed.mirror, sandbox.orgId)
    const textToImage = modelBySlug('atelier/text-to-image').id
    const upscale = modelBySlug('atelier/upscale').id
    const caption = modelBySlug('atelier/caption').id
    const cases: Record<string, GraphSpec> = {
      dangling: {
        nodes: {
          picture: {
            model: textToImage,
            inputs: [{ name: 'prompt', type: 'text', sourceId: randomUUID() }],
            outputs: [['image', 'image']],
          },
        },
      },
      'type mismatch': {
        nodes: {
          words: {
            builtin: 'text',
            inputs: [{ name: 'value', type: 'text', value: 'a fox' }],
            outputs: [['text', 'text']],
          },
          bigger: {
            model: upscale,
            inputs: [{ name: 'image', type: 'image', from: 'words.text' }],
            outputs: [['image', 'image']],
          },
          odd: {
            model: upscale,
            inputs: [{ name: 'scale', type: 'boolean', value: true }],
            outputs: [['image', 'image']],
          },
        },
      },
      cycle: {
        nodes: {
          picture: {
            model: textToImage,
            inputs: [{ name: 'prompt', type: 'text', from: 'describe.caption' }],
            outputs: [['image', 'image']],
          },
          describe: {
            model: caption,
            inputs: [{ name: 'image', type: 'image', from: 'picture.image' }],
            outputs: [['caption', 'text']],
          },
        },
      },
      'unknown targets': {
        nodes: {
          model: { model: randomUUID(), outputs: [['image', 'image']] },
          builtin: { builtin: 'teleport' },
          workflow: { workflow: randomUUID() },
          sub: { subFlow: randomUUID() },
        },
      },
      'unknown ports': {
        nodes: {
          picture: {
            model: textToImage,
            inputs: [
              { name: 'prompt', type: 'text', value: 'a fox' },
              { name: 'colour', type: 'text', value: 'red' },
            ],
            outputs: [['picture', 'image']],
          },
        },
      },
      'fed twice': {
        nodes: {
          words: {
            builtin: 'text',
            inputs: [{ name: 'value', type: 'text', value: 'a fox' }],
            outputs: [['text', 'text']],
          },
          picture: {
            model: textToImage,
            inputs: [{ name: 'prompt', type: 'text', from: 'words.text', value: 'a hen' }],
            outputs: [['image', 'image']],
          },
        },
      },
      duplicates: {
        nodes: {
          one: {
            builtin: 'text',
            slug: 'same',
            inputs: [{ name: 'value', type: 'text', value: 'a' }],
            outputs: [
              ['text', 'text'],
              ['text', 'text'],
            ],
          },
          two: { builtin: 'number', slug: 'same', outputs: [['number', 'number']] },
        },
      },
      'flow outputs': {
        outputs: [{ name: 'picture', type: 'image' }],
        nodes: {
          one: {
            model: textToImage,
            inputs: [{ name: 'prompt', type: 'text', value: 'a fox' }],
            outputs: [['image', 'image']],
            config: { flow_outputs: { image: 'picture' } },
          },
          two: {
            model: textToImage,
            inputs: [{ name: 'prompt', type: 'text', value: 'a hen' }],
            outputs: [['image', 'image']],
            config: { flow_outputs: { image: 'picture' } },
          },
          three: {
            model: textToImage,
            inputs: [{ name: 'prompt', type: 'text', value: 'a cat' }],
            outputs: [['image', 'image']],
            config: { flow_outputs: { image: 'pictures' } },
          },
        },
      },
      'node types': {
        nodes: {
          odd: { type: 'teleporter' },
          empty: { type: 'model' },
          both: {
            type: 'builtin',
            builtin: 'text',
            model: textToImage,
            outputs: [['text', 'text']],
          },
        },
      },
      'type codes': {
        nodes: {
          words: {
            builtin: 'text',
            inputs: [{ name: 'value', type: 'prose', value: 'a' }],
            outputs: [['text', 'text']],
          },
        },
      },
    }
    for (const [name, spec] of Object.entries(cases)) {
      const flow = document(spec)
      const mine = ours(validateFlow(flow, catalog))
      const answer = await theirs('POST', '/v1/flows', createBody(flow))
      expect(answer.status, name).toBe(422)
      expect(mine.length, name).toBeGreaterThan(0)
      expect(mine, name).toEqual(answer.kinds)
    }
  })

  it('agree that a sub-flow may not contain the flow that runs it', async () => {
    const textToImage = modelBySlug('atelier/text-to-image').id
    const inner = document({
      name: 'Inner',
      nodes: {
        picture: {
          model: textToImage,
          inputs: [{ name: 'prompt', type: 'text', value: 'a fox' }],
          outputs: [['image', 'image']],
        },
      },
    })
    const innerCreated = await sandbox.call('POST', '/v1/flows', { body: createBody(inner) })
    expect(innerCreated.status).toBe(201)
    const innerId = (innerCreated.body as Flow).id
    const outer = document({ name: 'Outer', nodes: { run: { subFlow: innerId } } })
    const outerCreated = await sandbox.call('POST', '/v1/flows', { body: createBody(outer) })
    expect(outerCreated.status).toBe(201)
    const outerId = (outerCreated.body as Flow).id

    // The mirror learns both flows, graphs included.
    const dbs = await synced()
    await fetchDetails(dbs)
    const catalog = mirrorCatalog(dbs.mirror, sandbox.orgId)
    expect(catalog.flow(outerId)?.nodes?.[0]?.sub_flow_id).toBe(innerId)

    // The inner flow, edited to run the outer one: a loop through two flows.
    const edited = document({
      id: innerId,
      name: 'Inner',
      nodes: { back: { subFlow: outerId } },
    })
    const problems = validateFlow(edited, catalog)
    expect(problems.map((p) => p.code)).toEqual(['SUB_FLOW_RECURSION'])
    expect(problems[0]?.flowIds).toEqual([outerId, innerId])
    const { name: _name, ...graph } = createBody(edited)
    const answer = await theirs('PUT', `/v1/flows/${innerId}/graph`, graph)
    expect(answer.status).toBe(422)
    expect(ours(problems)).toEqual(answer.kinds)
  })
})

import { describe, expect, it } from 'vitest'
import type {
  Flow,
  Model,
  ModelInput,
  ModelOutput,
  ReferenceRecord,
  Workflow,
} from '../../src-shared/api'
import {
  BUILTIN_NODES,
  canonicalJson,
  checkFlowInputs,
  memoryCatalog,
  nodeCacheKey,
  parseFlowDocument,
  planFlow,
  targetVersionOf,
  typeConnection,
  validateFlow,
  type FlowCatalog,
  type FlowPlan,
  type FlowProblem,
} from '../../src-main/executor/validate'
import type { FlowDocument, MediaRef } from '../../src-main/executor/types'

// ---- Ids: readable numbers as uuids.

const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const FLOW = u(1)
const T2I = u(901)
const UPSCALE = u(902)
const CAPTION = u(903)
const PATTERNED = u(904)
const BARE = u(905)
const WORKFLOW = u(911)
const SUB = u(921)
const LOOP_A = u(922)
const LOOP_B = u(923)
const BACK_TO_FLOW = u(924)
const GRAPHLESS = u(925)
const STAMP = '2026-03-01T00:00:00.000+00:00'

// ---- A small catalog.

interface PortSpec {
  type: string
  required?: boolean
  default?: unknown
  behavior?: string
  validator?: [string, Record<string, unknown>]
}

function modelInputs(modelId: string, specs: Record<string, PortSpec>): ModelInput[] {
  return Object.entries(specs).map(([name, spec], index) => ({
    id: u(Number.parseInt(modelId.slice(-4), 10) * 100 + index),
    model_id: modelId,
    name,
    display_name: null,
    description: null,
    variable_type_code: spec.type,
    default_behavior_code:
      spec.behavior ??
      (spec.required ? 'require' : spec.default === undefined ? 'omit' : 'use_default'),
    validator_code: spec.validator?.[0] ?? null,
    validator_attrs: spec.validator?.[1] ?? null,
    is_required: spec.required ?? false,
    default_value: spec.default ?? null,
    sort_order: index,
    is_featured: false,
    created_at: STAMP,
    updated_at: STAMP,
  }))
}

function modelOutputs(modelId: string, specs: Record<string, string>): ModelOutput[] {
  return Object.entries(specs).map(([name, type], index) => ({
    id: u(Number.parseInt(modelId.slice(-4), 10) * 100 + 50 + index),
    model_id: modelId,
    name,
    display_name: null,
    description: null,
    variable_type_code: type,
    validator_code: null,
    validator_attrs: null,
    sort_order: index,
    created_at: STAMP,
    updated_at: STAMP,
  }))
}

function model(
  id: string,
  slug: string,
  inputs: Record<string, PortSpec> | null,
  outputs: Record<string, string> | null,
): Model {
  const base: Model = {
    id,
    org_id: null,
    model_creator_id: null,
    slug,
    name: slug,
    description: null,
    version: '1.0.0',
    is_public: true,
    is_open_source: false,
    icon_url: null,
    cover_url: null,
    category_code: null,
    status_code: 'active',
    family_id: null,
    family_variant_code: null,
    param_count: null,
    architecture: null,
    license_code: null,
    max_resolution: null,
    lora_support: false,
    fine_tuning: false,
    supports_streaming: false,
    paper_url: null,
    github_url: null,
    is_official: true,
    availability_status: null,
    seo: null,
    notable_features: [],
    content: null,
    pricing_note: null,
    created_by: null,
    created_at: STAMP,
    updated_at: STAMP,
    deleted_at: null,
    deleted_by: null,
  }
  if (inputs === null || outputs === null) return base
  return {
    ...base,
    inputs: modelInputs(id, inputs),
    outputs: modelOutputs(id, outputs),
    pricing: [],
  }
}

const MODELS = [
  model(
    T2I,
    'test/text-to-image',
    {
      prompt: { type: 'text', required: true },
      width: { type: 'integer', default: 512, validator: ['range', { min: 64, max: 2048 }] },
      style: { type: 'enum', default: 'soft', validator: ['enum', { values: ['soft', 'hard'] }] },
      seed: { type: 'seed', behavior: 'randomize' },
    },
    { image: 'image' },
  ),
  model(
    UPSCALE,
    'test/upscale',
    {
      image: {
        type: 'image',
        required: true,
        validator: ['image_size', { max_width: 1024, max_height: 1024 }],
      },
      scale: { type: 'integer', default: 2, validator: ['range', { min: 2, max: 4 }] },
    },
    { image: 'image' },
  ),
  model(CAPTION, 'test/caption', { image: { type: 'image', required: true } }, { caption: 'text' }),
  model(
    PATTERNED,
    'test/patterned',
    {
      code: {
        type: 'string',
        required: true,
        validator: ['pattern', { pattern: '^[A-Z]{3}$', hint: 'three capital letters' }],
      },
      note: { type: 'text', validator: ['length', { min: 2, max: 5 }] },
    },
    { text: 'text' },
  ),
  // Synced from a list: the catalog knows the model, not its ports.
  model(BARE, 'test/bare', null, null),
]

const WORKFLOWS: Workflow[] = [
  {
    id: WORKFLOW,
    org_id: null,
    slug: 'restyle',
    name: 'Restyle',
    description: null,
    workflow_json: {},
    version: '3',
    is_public: false,
    status_code: null,
    created_by: null,
    environment: null,
    models: null,
    custom_nodes: null,
    graph: null,
    resources: null,
    created_at: STAMP,
    updated_at: STAMP,
    deleted_at: null,
    deleted_by: null,
    category_code: null,
    inputs: [
      {
        id: u(9111),
        wfengine_workflow_id: WORKFLOW,
        name: 'image',
        display_name: null,
        description: null,
        variable_type_code: 'image',
        default_behavior_code: 'require',
        validator_code: null,
        validator_attrs: null,
        is_required: true,
        default_value: null,
        sort_order: 0,
        wfengine_node_id: '3',
        wfengine_field_name: 'image',
        created_at: STAMP,
        updated_at: STAMP,
      },
    ],
    outputs: [
      {
        id: u(9112),
        wfengine_workflow_id: WORKFLOW,
        name: 'image',
        display_name: null,
        description: null,
        variable_type_code: 'image',
        validator_code: null,
        validator_attrs: null,
        sort_order: 0,
        wfengine_node_id: '9',
        wfengine_field_name: 'images',
        created_at: STAMP,
        updated_at: STAMP,
      },
    ],
  },
]

const record = (code: string, index: number): ReferenceRecord => ({
  code,
  display_name: code,
  description: null,
  sort_order: index,
  is_active: true,
  created_at: STAMP,
  updated_at: STAMP,
})

const VARIABLE_TYPES = [
  'string',
  'text',
  'integer',
  'number',
  'boolean',
  'image',
  'video',
  'enum',
  'seed',
].map(record)
const VALIDATORS = ['range', 'length', 'enum', 'pattern', 'image_size'].map(record)

// ---- Flows from a compact description.

interface InputSpec {
  name: string
  type: string
  /** `node.output`: an edge. */
  from?: string
  retry?: string
  sourceId?: string
  retryId?: string
  value?: unknown
  required?: boolean
  default?: unknown
  validator?: [string, Record<string, unknown>]
  behavior?: string
  id?: string
}

interface NodeSpec {
  type?: string
  model?: string
  builtin?: string
  workflow?: string
  subFlow?: string
  label?: string
  slug?: string
  id?: string
  inputs?: InputSpec[]
  outputs?: [name: string, type: string, id?: string][]
  config?: Record<string, unknown>
  layout?: { x: number; y: number; width?: number; collapsed?: boolean }
}

interface FlowSpec {
  id?: string
  name?: string
  inputs?: { name: string; type: string; required?: boolean; default?: unknown; id?: string }[]
  outputs?: { name: string; type: string; id?: string }[]
  nodes: Record<string, NodeSpec>
}

interface Built {
  doc: FlowDocument
  node: (key: string) => string
  out: (ref: string) => string
  index: (key: string) => number
}

function build(spec: FlowSpec): Built {
  const keys = Object.keys(spec.nodes)
  const nodeIds = new Map<string, string>()
  const outputIds = new Map<string, string>()
  keys.forEach((key, i) => {
    const node = spec.nodes[key] as NodeSpec
    nodeIds.set(key, node.id ?? u(1000 * (i + 1)))
    ;(node.outputs ?? []).forEach(([name, , id], j) => {
      outputIds.set(`${key}.${name}`, id ?? u(1000 * (i + 1) + 500 + j))
    })
  })
  const out = (ref: string) => {
    const id = outputIds.get(ref)
    if (id === undefined) throw new Error(`No output ${ref} in the test flow.`)
    return id
  }
  const raw = {
    id: spec.id ?? FLOW,
    name: spec.name ?? 'Test flow',
    inputs: (spec.inputs ?? []).map((input, k) => ({
      id: input.id ?? u(10 + k),
      name: input.name,
      variable_type_code: input.type,
      is_required: input.required ?? false,
      default_value: input.default ?? null,
    })),
    outputs: (spec.outputs ?? []).map((output, k) => ({
      id: output.id ?? u(50 + k),
      name: output.name,
      variable_type_code: output.type,
    })),
    nodes: keys.map((key, i) => {
      const node = spec.nodes[key] as NodeSpec
      const type =
        node.type ??
        (node.model !== undefined
          ? 'model'
          : node.builtin !== undefined
            ? 'builtin'
            : node.workflow !== undefined
              ? 'wfengine_workflow'
              : 'sub_flow')
      return {
        id: nodeIds.get(key),
        label: node.label ?? key,
        ...(node.slug === undefined ? {} : { slug: node.slug }),
        type_code: type,
        model_id: node.model ?? null,
        builtin_node_code: node.builtin ?? null,
        wfengine_workflow_id: node.workflow ?? null,
        sub_flow_id: node.subFlow ?? null,
        config: node.config ?? {},
        ...(node.layout ?? {}),
        inputs: (node.inputs ?? []).map((input, j) => ({
          id: input.id ?? u(1000 * (i + 1) + 100 + j),
          name: input.name,
          variable_type_code: input.type,
          source_output_id: input.sourceId ?? (input.from === undefined ? null : out(input.from)),
          retry_source_output_id:
            input.retryId ?? (input.retry === undefined ? null : out(input.retry)),
          value: input.value ?? null,
          is_required: input.required ?? false,
          default_value: input.default ?? null,
          validator_code: input.validator?.[0] ?? null,
          validator_attrs: input.validator?.[1] ?? null,
          behavior_code: input.behavior ?? null,
        })),
        outputs: (node.outputs ?? []).map(([name, type]) => ({
          id: out(`${key}.${name}`),
          name,
          variable_type_code: type,
        })),
      }
    }),
  }
  const parsed = parseFlowDocument(raw)
  if (!parsed.ok)
    throw new Error(`The test flow does not parse: ${JSON.stringify(parsed.problems)}`)
  return {
    doc: parsed.flow,
    node: (key) => nodeIds.get(key) ?? '',
    out,
    index: (key) => keys.indexOf(key),
  }
}

const subFlow = (spec: FlowSpec): Flow => build(spec).doc

const FLOWS: Flow[] = [
  subFlow({
    id: SUB,
    name: 'Picture from a topic',
    inputs: [{ name: 'topic', type: 'text', required: true }],
    outputs: [{ name: 'picture', type: 'image' }],
    nodes: {
      make: {
        model: T2I,
        inputs: [{ name: 'prompt', type: 'text' }],
        outputs: [['image', 'image']],
        config: { flow_inputs: { prompt: 'topic' }, flow_outputs: { image: 'picture' } },
      },
    },
  }),
  subFlow({ id: LOOP_A, name: 'Loop A', nodes: { inner: { subFlow: LOOP_B } } }),
  subFlow({ id: LOOP_B, name: 'Loop B', nodes: { inner: { subFlow: LOOP_A } } }),
  subFlow({ id: BACK_TO_FLOW, name: 'Back to the flow', nodes: { inner: { subFlow: FLOW } } }),
  // Synced from a list: a flow without its graph.
  (() => {
    const { nodes: _n, inputs: _i, outputs: _o, ...fields } = subFlow({ id: GRAPHLESS, nodes: {} })
    return fields
  })(),
]

const catalog: FlowCatalog = memoryCatalog({
  models: MODELS,
  workflows: WORKFLOWS,
  flows: FLOWS,
  variableTypes: VARIABLE_TYPES,
  validators: VALIDATORS,
})

/** `code@path` for each problem: what a test names precisely. */
const kinds = (problems: readonly FlowProblem[]) => problems.map((p) => `${p.code}@${p.path}`)

function only(problems: readonly FlowProblem[], code: string): FlowProblem {
  const found = problems.filter((p) => p.code === code)
  expect(found, JSON.stringify(problems, null, 1)).toHaveLength(1)
  return found[0] as FlowProblem
}

function planOf(doc: FlowDocument): FlowPlan {
  const result = planFlow(doc, catalog)
  if (!result.ok) throw new Error(`Not planned: ${JSON.stringify(result.problems, null, 1)}`)
  return result.plan
}

// ---- The flow most tests start from: text → image → upscale → evaluate → save.

const GOOD: FlowSpec = {
  inputs: [{ name: 'subject', type: 'text', required: true }],
  outputs: [
    { name: 'asset', type: 'string' },
    { name: 'score', type: 'number' },
  ],
  nodes: {
    words: {
      builtin: 'prompt_template',
      inputs: [
        { name: 'template', type: 'text', value: 'a {subject}, {mood}' },
        { name: 'subject', type: 'text' },
        { name: 'mood', type: 'text', value: 'calm', retry: 'judge.issues' },
      ],
      outputs: [['prompt', 'text']],
      config: { flow_inputs: { subject: 'subject' } },
    },
    picture: {
      model: T2I,
      inputs: [
        { name: 'prompt', type: 'text', from: 'words.prompt' },
        { name: 'width', type: 'integer', value: 768 },
      ],
      outputs: [['image', 'image']],
    },
    bigger: {
      model: UPSCALE,
      inputs: [{ name: 'image', type: 'image', from: 'picture.image' }],
      outputs: [['image', 'image']],
    },
    judge: {
      builtin: 'evaluate',
      inputs: [
        { name: 'image', type: 'image', from: 'bigger.image' },
        { name: 'prompt', type: 'text', from: 'words.prompt' },
      ],
      outputs: [
        ['passed', 'boolean'],
        ['score', 'number'],
        ['issues', 'text'],
      ],
      config: { max_attempts: 2, flow_outputs: { score: 'score' } },
    },
    save: {
      builtin: 'save_to_assets',
      inputs: [{ name: 'image', type: 'image', from: 'bigger.image' }],
      outputs: [['asset_id', 'string']],
      config: { flow_outputs: { asset_id: 'asset' } },
    },
  },
}

describe('validateFlow', () => {
  it('accepts a well-formed flow', () => {
    expect(validateFlow(build(GOOD).doc, catalog)).toEqual([])
  })

  it('reports a loop of edges, naming the nodes along it', () => {
    const flow = build({
      nodes: {
        paint: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text', from: 'describe.caption' }],
          outputs: [['image', 'image']],
        },
        describe: {
          model: CAPTION,
          inputs: [{ name: 'image', type: 'image', from: 'paint.image' }],
          outputs: [['caption', 'text']],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual(['CYCLE@nodes.0.inputs.0.source_output_id'])
    const cycle = only(problems, 'CYCLE')
    expect(cycle.nodeIds).toEqual([flow.node('paint'), flow.node('describe')])
    expect(cycle).toMatchObject({ nodeId: flow.node('paint'), inputName: 'prompt' })
    expect(cycle.message).toContain('"paint" → node "describe" → node "paint"')
  })

  it('reports a node that feeds itself as a loop of one', () => {
    const flow = build({
      nodes: {
        again: {
          model: UPSCALE,
          inputs: [{ name: 'image', type: 'image', from: 'again.image' }],
          outputs: [['image', 'image']],
        },
      },
    })
    expect(only(validateFlow(flow.doc, catalog), 'CYCLE').nodeIds).toEqual([flow.node('again')])
  })

  it('does not count retry edges as edges of a loop', () => {
    const problems = validateFlow(build(GOOD).doc, catalog)
    expect(problems.filter((p) => p.code === 'CYCLE')).toEqual([])
  })

  it('reports connections to outputs the flow does not have', () => {
    const flow = build({
      nodes: {
        paint: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text', sourceId: u(777) },
            { name: 'style', type: 'enum', value: 'soft', retryId: u(778) },
          ],
          outputs: [['image', 'image']],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'DANGLING_CONNECTION@nodes.0.inputs.0.source_output_id',
      'DANGLING_CONNECTION@nodes.0.inputs.1.retry_source_output_id',
    ])
    expect(problems[0]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'prompt' })
    expect(problems[1]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'style' })
  })

  it('reports an input fed from more than one place', () => {
    const flow = build({
      inputs: [{ name: 'subject', type: 'text' }],
      nodes: {
        words: {
          builtin: 'text',
          inputs: [{ name: 'value', type: 'text', value: 'a fox' }],
          outputs: [['text', 'text']],
          config: { flow_inputs: { value: 'subject' } },
        },
        paint: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text', from: 'words.text', value: 'a hen' }],
          outputs: [['image', 'image']],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'AMBIGUOUS_INPUT@nodes.0.inputs.0',
      'AMBIGUOUS_INPUT@nodes.1.inputs.0',
    ])
    expect(problems[0]?.message).toContain('a flow input and a value')
    expect(problems[1]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'prompt' })
    expect(problems[1]?.message).toContain('an edge and a value')
  })

  it('reports required inputs with nothing to feed them', () => {
    const flow = build({
      nodes: {
        unfed: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text' }],
          outputs: [['image', 'image']],
        },
        absent: { model: T2I, outputs: [['image', 'image']] },
        marked: {
          builtin: 'save_to_assets',
          inputs: [{ name: 'name', type: 'string', required: true }],
          outputs: [['asset_id', 'string']],
        },
        defaulted: {
          builtin: 'save_to_assets',
          inputs: [{ name: 'name', type: 'string', required: true, default: 'untitled' }],
          outputs: [['asset_id', 'string']],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'MISSING_REQUIRED_INPUT@nodes.1.inputs',
      'MISSING_REQUIRED_INPUT@nodes.0.inputs.0',
      'MISSING_REQUIRED_INPUT@nodes.2.inputs.0',
    ])
    expect(problems[0]).toMatchObject({ nodeId: flow.node('absent'), inputName: 'prompt' })
    expect(problems[1]).toMatchObject({ nodeId: flow.node('unfed'), inputName: 'prompt' })
    expect(problems[2]).toMatchObject({ nodeId: flow.node('marked'), inputName: 'name' })
  })

  it('lets a random seed and a default stand in for a value', () => {
    const flow = build({
      nodes: {
        paint: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text', value: 'a fox' },
            { name: 'seed', type: 'seed', required: true },
            { name: 'width', type: 'integer', required: true },
          ],
          outputs: [['image', 'image']],
        },
      },
    })
    expect(validateFlow(flow.doc, catalog)).toEqual([])
  })

  it('reports types that do not connect, on edges, ports, flow inputs and flow outputs', () => {
    const flow = build({
      inputs: [{ name: 'picture', type: 'image' }],
      outputs: [{ name: 'words', type: 'text' }],
      nodes: {
        words: {
          builtin: 'text',
          inputs: [{ name: 'value', type: 'text', value: 'a fox' }],
          outputs: [['text', 'text']],
        },
        bigger: {
          model: UPSCALE,
          inputs: [
            { name: 'image', type: 'image', from: 'words.text' },
            { name: 'scale', type: 'text' },
          ],
          outputs: [['image', 'image']],
          config: { flow_outputs: { image: 'words' } },
        },
        paint: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text' }],
          outputs: [['image', 'image']],
          config: { flow_inputs: { prompt: 'picture' } },
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'TYPE_MISMATCH@nodes.1.inputs.1.variable_type_code',
      'TYPE_MISMATCH@nodes.1.inputs.0.source_output_id',
      'TYPE_MISMATCH@nodes.2.config.flow_inputs.prompt',
      'TYPE_MISMATCH@nodes.1.config.flow_outputs.image',
    ])
    expect(problems[1]).toMatchObject({ nodeId: flow.node('bigger'), inputName: 'image' })
    expect(problems[1]?.message).toContain('brings text to the image input "image"')
    expect(problems[2]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'prompt' })
  })

  it('connects text-like and number-like types to one another', () => {
    expect(typeConnection('string', 'text')).toBe('direct')
    expect(typeConnection('enum', 'text')).toBe('direct')
    expect(typeConnection('integer', 'seed')).toBe('direct')
    expect(typeConnection('image', 'video')).toBe('none')
    expect(typeConnection('image[]', 'image')).toBe('fan_out')
    expect(typeConnection('image_list', 'image')).toBe('fan_out')
    expect(typeConnection('image', 'image[]')).toBe('direct')
    expect(typeConnection('text[]', 'string_list')).toBe('direct')
    expect(typeConnection('image[][]', 'image')).toBe('none')
  })

  it('fans a list out on a model node, and refuses it on other nodes', () => {
    const flow = build(fanOutSpec())
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual(['TYPE_MISMATCH@nodes.2.inputs.0.source_output_id'])
    expect(problems[0]).toMatchObject({ nodeId: flow.node('save'), inputName: 'image' })
    expect(problems[0]?.message).toContain('only model nodes run once per item')

    // Without the save node the flow runs: both model nodes fan out, one batch each.
    const { save: _save, ...rest } = flowSpecOfFanOut()
    const plan = planOf(build({ ...fanOutSpec(), nodes: rest }).doc)
    expect(plan.fanOuts).toEqual([
      { nodeId: flow.node('paint'), inputName: 'prompt' },
      { nodeId: flow.node('bigger'), inputName: 'image' },
    ])
    expect(plan.nodes.get(flow.node('bigger'))?.outputTypes.get(flow.out('bigger.image'))).toBe(
      'image[]',
    )
  })

  it('fans a list value out on a model node, checking every item', () => {
    const flow = build({
      nodes: {
        paint: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text', value: ['a fox', 'a hen'] },
            { name: 'width', type: 'integer', value: [512, 9000] },
          ],
          outputs: [['image', 'image']],
        },
        words: {
          builtin: 'text',
          inputs: [{ name: 'value', type: 'text', value: ['a', 'b'] }],
          outputs: [['text', 'text']],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'VALIDATOR_VIOLATION@nodes.0.inputs.1.value',
      'TYPE_MISMATCH@nodes.1.inputs.0.value',
    ])
    expect(problems[0]?.message).toContain('between 64 and 2048, but it is 9000')
  })

  it('fans out only the inputs config.fan_out names, when it names any', () => {
    const flow = build({
      inputs: [
        { name: 'prompts', type: 'text[]' },
        { name: 'widths', type: 'integer[]' },
      ],
      nodes: {
        paint: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text' },
            { name: 'width', type: 'integer' },
            { name: 'style', type: 'enum', value: 'soft' },
          ],
          outputs: [['image', 'image']],
          config: {
            flow_inputs: { prompt: 'prompts', width: 'widths' },
            fan_out: ['prompt', 'style', 'colour'],
          },
        },
        words: {
          builtin: 'text',
          inputs: [{ name: 'value', type: 'text', value: 'x' }],
          outputs: [['text', 'text']],
          config: { fan_out: ['value'] },
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'UNKNOWN_PORT@nodes.0.config.fan_out.2',
      'INVALID_CONFIG@nodes.1.config.fan_out',
      'TYPE_MISMATCH@nodes.0.config.flow_inputs.width',
      'INVALID_CONFIG@nodes.0.config.fan_out',
    ])
    expect(problems[2]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'width' })
    expect(problems[2]?.message).toContain('add "width" to config.fan_out')
    expect(problems[3]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'style' })
  })

  it('lets a built-in input that takes a list take one whole', () => {
    const flow = build({
      inputs: [{ name: 'subjects', type: 'text[]' }],
      nodes: {
        pick: {
          builtin: 'pick_from_list',
          inputs: [{ name: 'items', type: 'text' }],
          outputs: [['item', 'text']],
          config: { flow_inputs: { items: 'subjects' } },
        },
        paint: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text', from: 'pick.item' }],
          outputs: [['image', 'image']],
        },
      },
    })
    const plan = planOf(flow.doc)
    expect(plan.fanOuts).toEqual([])
    expect(plan.nodes.get(flow.node('pick'))?.outputTypes.get(flow.out('pick.item'))).toBe('text')
  })

  it('checks literal values against their types and validators', () => {
    const media: MediaRef = {
      kind: 'media',
      sha256: 'a'.repeat(64),
      content_type: 'image/png',
      url: 'file:///tmp/big.png',
      width: 2048,
      height: 2048,
    }
    const flow = build({
      inputs: [{ name: 'count', type: 'integer', default: 'many' }],
      nodes: {
        paint: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text', value: 'a fox' },
            { name: 'width', type: 'integer', value: 10 },
            { name: 'style', type: 'enum', value: 'loud' },
          ],
          outputs: [['image', 'image']],
        },
        wide: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text', value: 'a hen' },
            { name: 'width', type: 'integer', value: 'wide' },
          ],
          outputs: [['image', 'image']],
        },
        code: {
          model: PATTERNED,
          inputs: [
            { name: 'code', type: 'string', value: 'abc' },
            { name: 'note', type: 'text', value: 'far too long' },
          ],
          outputs: [['text', 'text']],
        },
        bigger: {
          model: UPSCALE,
          inputs: [{ name: 'image', type: 'image', value: media }],
          outputs: [['image', 'image']],
        },
        words: {
          builtin: 'prompt_template',
          inputs: [{ name: 'template', type: 'text', value: '' }],
          outputs: [['prompt', 'text']],
        },
        own: {
          builtin: 'text',
          inputs: [
            { name: 'value', type: 'text', value: 'xyz', validator: ['length', { max: 2 }] },
          ],
          outputs: [['text', 'text']],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'VALIDATOR_VIOLATION@nodes.0.inputs.1.value',
      'VALIDATOR_VIOLATION@nodes.0.inputs.2.value',
      'INVALID_VALUE@nodes.1.inputs.1.value',
      'VALIDATOR_VIOLATION@nodes.2.inputs.0.value',
      'VALIDATOR_VIOLATION@nodes.2.inputs.1.value',
      'VALIDATOR_VIOLATION@nodes.3.inputs.0.value',
      'VALIDATOR_VIOLATION@nodes.4.inputs.0.value',
      'VALIDATOR_VIOLATION@nodes.5.inputs.0.value',
      'INVALID_VALUE@inputs.0.default_value',
    ])
    const messages = problems.map((p) => p.message)
    expect(messages[0]).toContain('between 64 and 2048, but it is 10')
    expect(messages[1]).toContain('one of "soft", "hard", but it is "loud"')
    expect(messages[2]).toContain('a whole number')
    expect(messages[3]).toContain('three capital letters')
    expect(messages[4]).toContain('between 2 and 5 characters long, but it has 12')
    expect(messages[5]).toContain('2048×2048')
    expect(messages[6]).toContain('between 1 and 4000 characters long')
    expect(messages[7]).toContain('at most 2 characters long')
    expect(problems[1]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'style' })
  })

  it('reports targets the catalog does not have', () => {
    const flow = build({
      nodes: {
        model: { model: u(999), outputs: [['image', 'image']] },
        workflow: { workflow: u(998) },
        sub: { subFlow: u(997) },
        builtin: { builtin: 'teleport' },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'UNKNOWN_MODEL@nodes.0.model_id',
      'UNKNOWN_WORKFLOW@nodes.1.wfengine_workflow_id',
      'UNKNOWN_SUB_FLOW@nodes.2.sub_flow_id',
      'UNKNOWN_BUILTIN@nodes.3.builtin_node_code',
    ])
    expect(problems.map((p) => p.nodeId)).toEqual(
      ['model', 'workflow', 'sub', 'builtin'].map(flow.node),
    )
  })

  it('reports node types, and missing or conflicting targets', () => {
    const flow = build({
      nodes: {
        odd: { type: 'teleporter' },
        empty: { type: 'model' },
        both: { type: 'builtin', builtin: 'text', model: T2I, outputs: [['text', 'text']] },
      },
    })
    expect(kinds(validateFlow(flow.doc, catalog))).toEqual([
      'UNKNOWN_NODE_TYPE@nodes.0.type_code',
      'TARGET_MISSING@nodes.1.model_id',
      'TARGET_CONFLICT@nodes.2.model_id',
    ])
  })

  it('reports ports the target does not have', () => {
    const flow = build({
      nodes: {
        paint: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text', value: 'a fox' },
            { name: 'colour', type: 'text', value: 'red' },
          ],
          outputs: [['picture', 'image']],
          config: { flow_inputs: { size: 'x' } },
        },
        words: {
          builtin: 'prompt_template',
          inputs: [
            { name: 'template', type: 'text', value: '{animal}' },
            { name: 'animal', type: 'text', value: 'fox' },
          ],
          outputs: [['prompt', 'text']],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'UNKNOWN_PORT@nodes.0.inputs.1.name',
      'UNKNOWN_PORT@nodes.0.outputs.0.name',
      'UNKNOWN_PORT@nodes.0.config.flow_inputs.size',
    ])
    expect(problems[0]).toMatchObject({ nodeId: flow.node('paint'), inputName: 'colour' })
    expect(problems[0]?.message).toContain('prompt, width, style, seed')
    expect(problems[1]).toMatchObject({ outputId: flow.out('paint.picture') })
  })

  it('runs workflow and sub-flow nodes through their ports', () => {
    const flow = build({
      inputs: [{ name: 'topic', type: 'text', required: true }],
      outputs: [{ name: 'result', type: 'image' }],
      nodes: {
        sub: {
          subFlow: SUB,
          inputs: [{ name: 'topic', type: 'text' }],
          outputs: [['picture', 'image']],
          config: { flow_inputs: { topic: 'topic' } },
        },
        restyle: {
          workflow: WORKFLOW,
          inputs: [{ name: 'image', type: 'image', from: 'sub.picture' }],
          outputs: [['image', 'image']],
          config: { flow_outputs: { image: 'result' } },
        },
        unfed: { subFlow: SUB, outputs: [['picture', 'image']] },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual(['MISSING_REQUIRED_INPUT@nodes.2.inputs'])
    expect(problems[0]).toMatchObject({ nodeId: flow.node('unfed'), inputName: 'topic' })
  })

  it('reports sub-flows that contain the flow itself, directly or not', () => {
    const flow = build({
      nodes: {
        self: { subFlow: FLOW },
        back: { subFlow: BACK_TO_FLOW },
        loop: { subFlow: LOOP_A },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'SUB_FLOW_RECURSION@nodes.0.sub_flow_id',
      'SUB_FLOW_RECURSION@nodes.1.sub_flow_id',
      'SUB_FLOW_RECURSION@nodes.2.sub_flow_id',
    ])
    expect(problems.map((p) => p.flowIds)).toEqual([
      [FLOW],
      [BACK_TO_FLOW, FLOW],
      [LOOP_A, LOOP_B, LOOP_A],
    ])
    expect(problems[1]?.message).toContain('"Back to the flow" → this flow')
  })

  it('says when a target is known without its details, instead of calling its ports unknown', () => {
    const flow = build({
      nodes: {
        bare: {
          model: BARE,
          inputs: [{ name: 'anything', type: 'text', value: 'x' }],
          outputs: [['image', 'image']],
        },
        graphless: { subFlow: GRAPHLESS },
      },
    })
    expect(kinds(validateFlow(flow.doc, catalog))).toEqual([
      'TARGET_DETAILS_UNKNOWN@nodes.0.model_id',
      'TARGET_DETAILS_UNKNOWN@nodes.1.sub_flow_id',
    ])
  })

  it('reports flow outputs no node fills, and flow inputs and outputs that do not exist', () => {
    const flow = build({
      inputs: [{ name: 'subject', type: 'text' }],
      outputs: [
        { name: 'picture', type: 'image' },
        { name: 'never', type: 'image' },
      ],
      nodes: {
        one: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text' }],
          outputs: [['image', 'image']],
          config: { flow_inputs: { prompt: 'subjet' }, flow_outputs: { image: 'picture' } },
        },
        two: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text', value: 'a hen' }],
          outputs: [['image', 'image']],
          config: { flow_outputs: { image: 'picture' } },
        },
        three: {
          model: T2I,
          inputs: [{ name: 'prompt', type: 'text', value: 'a cat' }],
          outputs: [['image', 'image']],
          config: { flow_outputs: { image: 'pictures' } },
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'UNKNOWN_FLOW_INPUT@nodes.0.config.flow_inputs.prompt',
      'FLOW_OUTPUT_CONFLICT@nodes.1.config.flow_outputs.image',
      'UNKNOWN_FLOW_OUTPUT@nodes.2.config.flow_outputs.image',
      'UNMAPPED_FLOW_OUTPUT@outputs.1',
    ])
    expect(problems[0]).toMatchObject({ nodeId: flow.node('one'), inputName: 'prompt' })
    expect(problems[0]?.message).toContain('subject')
  })

  it('reports ids, names and slugs used twice', () => {
    const flow = build({
      nodes: {
        one: {
          builtin: 'text',
          slug: 'words',
          inputs: [
            { name: 'value', type: 'text', value: 'a' },
            { name: 'value', type: 'text' },
          ],
          outputs: [['text', 'text', u(4242)]],
        },
        two: {
          builtin: 'text',
          slug: 'words',
          inputs: [{ name: 'value', type: 'text', value: 'b' }],
          outputs: [['text', 'text', u(4242)]],
        },
      },
    })
    const problems = validateFlow(flow.doc, catalog)
    expect(kinds(problems)).toEqual([
      'DUPLICATE_NAME@nodes.0.inputs.1.name',
      'DUPLICATE_ID@nodes.1.outputs.0.id',
      'DUPLICATE_SLUG@nodes.1.slug',
    ])
    expect(problems[0]).toMatchObject({ nodeId: flow.node('one'), inputName: 'value' })
  })

  it('reports type and validator codes the catalogs do not have', () => {
    const flow = build({
      nodes: {
        words: {
          builtin: 'text',
          inputs: [{ name: 'value', type: 'text', value: 'a', validator: ['palindrome', {}] }],
          outputs: [['text', 'txet']],
        },
      },
    })
    expect(kinds(validateFlow(flow.doc, catalog))).toEqual([
      'UNKNOWN_VALIDATOR@nodes.0.inputs.0.validator_code',
      'UNKNOWN_TYPE@nodes.0.outputs.0.variable_type_code',
      'TYPE_MISMATCH@nodes.0.outputs.0.variable_type_code',
    ])
    // Without the catalogs, codes are not refused (nothing to refuse them by).
    const bare = memoryCatalog({ models: MODELS })
    expect(kinds(validateFlow(flow.doc, bare))).toEqual([
      'TYPE_MISMATCH@nodes.0.outputs.0.variable_type_code',
    ])
  })

  it('checks the quality gate config and that a retry edge points back', () => {
    const forward = build({
      nodes: {
        judge: {
          builtin: 'evaluate',
          inputs: [{ name: 'image', type: 'image', value: 'data:image/png;base64,AA==' }],
          outputs: [['issues', 'text']],
          config: { max_attempts: 0 },
        },
        words: {
          builtin: 'text',
          inputs: [{ name: 'value', type: 'text', value: 'x', retry: 'judge.issues' }],
          outputs: [['text', 'text']],
          config: { flow_inputs: 'subject' },
        },
      },
    })
    const problems = validateFlow(forward.doc, catalog)
    expect(kinds(problems)).toEqual([
      'INVALID_CONFIG@nodes.0.config.max_attempts',
      'INVALID_CONFIG@nodes.1.config.flow_inputs',
      'RETRY_NOT_BACKWARD@nodes.1.inputs.0.retry_source_output_id',
    ])
    expect(problems[2]).toMatchObject({ nodeId: forward.node('words'), inputName: 'value' })
  })

  it('reports every problem at once', () => {
    const flow = build({
      outputs: [{ name: 'lost', type: 'image' }],
      nodes: {
        paint: {
          model: T2I,
          inputs: [
            { name: 'prompt', type: 'text' },
            { name: 'width', type: 'integer', value: 1 },
          ],
          outputs: [['image', 'image']],
        },
        bigger: {
          model: UPSCALE,
          inputs: [{ name: 'image', type: 'image', sourceId: u(31337) }],
          outputs: [['image', 'image']],
        },
        ghost: { model: u(404) },
      },
    })
    expect(kinds(validateFlow(flow.doc, catalog)).sort()).toEqual(
      [
        'DANGLING_CONNECTION@nodes.1.inputs.0.source_output_id',
        'MISSING_REQUIRED_INPUT@nodes.0.inputs.0',
        'UNKNOWN_MODEL@nodes.2.model_id',
        'UNMAPPED_FLOW_OUTPUT@outputs.0',
        'VALIDATOR_VIOLATION@nodes.0.inputs.1.value',
      ].sort(),
    )
  })
})

function fanOutSpec(): FlowSpec {
  return {
    inputs: [{ name: 'prompts', type: 'text[]' }],
    outputs: [{ name: 'pictures', type: 'image[]' }],
    nodes: flowSpecOfFanOut(),
  }
}

function flowSpecOfFanOut(): Record<string, NodeSpec> {
  return {
    paint: {
      model: T2I,
      inputs: [{ name: 'prompt', type: 'text' }],
      outputs: [['image', 'image']],
      config: { flow_inputs: { prompt: 'prompts' }, flow_outputs: { image: 'pictures' } },
    },
    bigger: {
      model: UPSCALE,
      inputs: [{ name: 'image', type: 'image', from: 'paint.image' }],
      outputs: [['image', 'image']],
    },
    save: {
      builtin: 'save_to_assets',
      inputs: [{ name: 'image', type: 'image', from: 'bigger.image' }],
      outputs: [['asset_id', 'string']],
    },
  }
}

describe('parseFlowDocument', () => {
  it('reads a minimal hand-written file, filling in what the service would', () => {
    const parsed = parseFlowDocument(
      JSON.stringify({
        id: FLOW,
        name: 'Red Fox!',
        nodes: [
          {
            id: u(2),
            label: 'Words',
            type_code: 'builtin',
            builtin_node_code: 'text',
            inputs: [{ id: u(3), name: 'value', variable_type_code: 'text', value: 'a fox' }],
            outputs: [{ id: u(4), name: 'text', variable_type_code: 'text' }],
          },
        ],
      }),
    )
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
    const flow = parsed.flow
    expect(flow).toMatchObject({ slug: 'red-fox', version: 0, inputs: [], outputs: [] })
    expect(flow.nodes[0]).toMatchObject({ flow_id: FLOW, x: 0, width: 220, collapsed: false })
    expect(flow.nodes[0]?.inputs[0]).toMatchObject({
      flow_node_id: u(2),
      source_output_id: null,
      retry_source_output_id: null,
      is_required: false,
    })
    expect(validateFlow(flow, catalog)).toEqual([])
  })

  it('names every unknown, missing or malformed field at once, never throwing', () => {
    const parsed = parseFlowDocument({
      id: FLOW,
      nodes: [
        {
          id: 'n1',
          label: 'Words',
          type_code: 'builtin',
          inputs: [{ id: u(3), name: 'value', variable_type_code: 'text', source_ouput_id: u(9) }],
          x: 'left',
        },
      ],
      colour: 'red',
    })
    expect(parsed.ok).toBe(false)
    if (parsed.ok) return
    expect(kinds(parsed.problems).sort()).toEqual(
      [
        'MISSING_FIELD@name',
        'INVALID_FIELD@nodes.0.id',
        'INVALID_FIELD@nodes.0.x',
        'UNKNOWN_FIELD@nodes.0.inputs.0.source_ouput_id',
        'UNKNOWN_FIELD@colour',
      ].sort(),
    )
    const unknown = parsed.problems.find((p) => p.path === 'nodes.0.inputs.0.source_ouput_id')
    expect(unknown).toMatchObject({ nodeId: 'n1', inputName: 'value' })
  })

  it('says when the file is not JSON', () => {
    const parsed = parseFlowDocument('{"id": ')
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(kinds(parsed.problems)).toEqual(['INVALID_JSON@'])
  })

  it('refuses an input that claims another node', () => {
    const parsed = parseFlowDocument({
      id: FLOW,
      name: 'x',
      nodes: [
        {
          id: u(2),
          label: 'a',
          type_code: 'builtin',
          inputs: [{ id: u(3), flow_node_id: u(7), name: 'value', variable_type_code: 'text' }],
        },
      ],
    })
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) {
      expect(kinds(parsed.problems)).toEqual(['INVALID_FIELD@nodes.0.inputs.0.flow_node_id'])
      expect(parsed.problems[0]).toMatchObject({ nodeId: u(2), inputName: 'value' })
    }
  })
})

describe('planFlow', () => {
  it('orders the nodes, binds their inputs and finds the retry loop', () => {
    const flow = build(GOOD)
    const plan = planOf(flow.doc)
    const position = (key: string) => plan.order.indexOf(flow.node(key))
    expect(position('words')).toBeLessThan(position('picture'))
    expect(position('picture')).toBeLessThan(position('bigger'))
    expect(position('bigger')).toBeLessThan(position('judge'))
    expect(position('bigger')).toBeLessThan(position('save'))

    const judge = plan.nodes.get(flow.node('judge'))
    expect(judge?.upstream).toEqual([flow.node('words'), flow.node('bigger')])
    expect(plan.nodes.get(flow.node('bigger'))?.downstream).toEqual([
      flow.node('judge'),
      flow.node('save'),
    ])

    const words = plan.nodes.get(flow.node('words'))?.inputs
    expect(words?.get('subject')).toMatchObject({ from: 'flow_input', name: 'subject' })
    expect(words?.get('mood')).toMatchObject({
      from: 'value',
      value: 'calm',
      retry: { nodeId: flow.node('judge'), outputName: 'issues' },
    })
    const picture = plan.nodes.get(flow.node('picture'))?.inputs
    expect(picture?.get('prompt')).toMatchObject({ from: 'edge', nodeId: flow.node('words') })
    expect(picture?.get('style')).toMatchObject({ from: 'default', value: 'soft' })
    expect(picture?.has('seed')).toBe(false)
    expect(judge?.inputs.get('min_score')).toMatchObject({ from: 'default', value: 0.5 })
    expect(judge?.inputs.get('instructions')).toBeUndefined()

    expect(plan.retries).toEqual([
      {
        gateNodeId: flow.node('judge'),
        gateOutputId: flow.out('judge.issues'),
        gateOutputName: 'issues',
        nodeId: flow.node('words'),
        inputName: 'mood',
        maxAttempts: 2,
        loop: ['words', 'picture', 'bigger', 'judge'].map(flow.node),
      },
    ])
    expect(plan.flowOutputs).toEqual([
      {
        name: 'score',
        nodeId: flow.node('judge'),
        outputId: flow.out('judge.score'),
        outputName: 'score',
      },
      {
        name: 'asset',
        nodeId: flow.node('save'),
        outputId: flow.out('save.asset_id'),
        outputName: 'asset_id',
      },
    ])
    expect(plan.fanOuts).toEqual([])
  })

  it('says what re-runs after an edit and what feeds a node', () => {
    const flow = build(GOOD)
    const plan = planOf(flow.doc)
    expect([...plan.downstreamOf([flow.node('bigger')])]).toEqual(
      ['bigger', 'judge', 'save'].map(flow.node),
    )
    expect([...plan.upstreamOf([flow.node('judge')])].sort()).toEqual(
      ['words', 'picture', 'bigger', 'judge'].map(flow.node).sort(),
    )
    expect(() => plan.downstreamOf([u(5)])).toThrow(/no node/)
  })

  it('finds the critical path under a duration estimate', () => {
    const flow = build(GOOD)
    const plan = planOf(flow.doc)
    const seconds: Record<string, number> = { words: 0, picture: 5, bigger: 3, judge: 4, save: 1 }
    const path = plan.criticalPath((node) => seconds[node.label] ?? 0)
    expect(path).toEqual({
      length: 12,
      nodeIds: ['words', 'picture', 'bigger', 'judge'].map(flow.node),
    })
    expect(() => plan.criticalPath(() => Number.NaN)).toThrow(RangeError)
  })

  it('gives a flow with problems its problems instead of a plan', () => {
    const result = planFlow(build({ nodes: { ghost: { model: u(404) } } }).doc, catalog)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(kinds(result.problems)).toEqual(['UNKNOWN_MODEL@nodes.0.model_id'])
  })

  it('defaults the attempts of a gate that does not say', () => {
    const spec = structuredClone(GOOD)
    delete (spec.nodes.judge as NodeSpec).config?.max_attempts
    expect(planOf(build(spec).doc).retries[0]?.maxAttempts).toBe(3)
  })
})

describe('nodeCacheKey', () => {
  const image = (url: string): MediaRef => ({
    kind: 'media',
    sha256: 'b'.repeat(64),
    content_type: 'image/png',
    url,
  })

  it('names media by content, ignores layout, and sees every input, target and config change', () => {
    const node = build(GOOD).doc.nodes[2]
    if (!node) throw new Error('no node')
    const key = nodeCacheKey(node, { image: image('https://a/1'), scale: 2 }, '1.0.0@x')
    expect(key).toMatch(/^[0-9a-f]{64}$/)
    expect(nodeCacheKey(node, { scale: 2, image: image('https://b/2?sig=z') }, '1.0.0@x')).toBe(key)
    expect(
      nodeCacheKey(
        { ...node, x: 90, label: 'Moved', collapsed: true },
        { image: image('u'), scale: 2 },
        '1.0.0@x',
      ),
    ).toBe(key)
    expect(nodeCacheKey(node, { image: image('u'), scale: 3 }, '1.0.0@x')).not.toBe(key)
    expect(nodeCacheKey(node, { image: image('u'), scale: 2 }, '1.0.1@x')).not.toBe(key)
    expect(
      nodeCacheKey({ ...node, model_id: T2I }, { image: image('u'), scale: 2 }, '1.0.0@x'),
    ).not.toBe(key)
    expect(
      nodeCacheKey(
        { ...node, config: { quality: 'high' } },
        { image: image('u'), scale: 2 },
        '1.0.0@x',
      ),
    ).not.toBe(key)
  })

  it('writes canonical JSON', () => {
    expect(canonicalJson({ b: [1, undefined, { d: 1, c: 2 }], a: 'x', z: undefined })).toBe(
      '{"a":"x","b":[1,null,{"c":2,"d":1}]}',
    )
    const loop: Record<string, unknown> = {}
    loop.self = loop
    expect(() => canonicalJson(loop)).toThrow(TypeError)
  })

  it('takes the target version from the catalog', () => {
    const doc = build(GOOD).doc
    expect(doc.nodes.map((node) => targetVersionOf(node, catalog))).toEqual([
      '1',
      `1.0.0@${STAMP}`,
      `1.0.0@${STAMP}`,
      '1',
      '1',
    ])
  })
})

describe('checkFlowInputs', () => {
  it('checks the values a run is given for the flow inputs', () => {
    const doc = build({
      inputs: [
        { name: 'subject', type: 'text', required: true },
        { name: 'count', type: 'integer' },
        { name: 'topics', type: 'text[]' },
      ],
      nodes: {},
    }).doc
    expect(checkFlowInputs(doc, { subject: 'fox', topics: ['a', 'b'] })).toEqual([])
    expect(kinds(checkFlowInputs(doc, { count: 1.5, topics: 'a', colour: 'red' }))).toEqual([
      'UNKNOWN_FLOW_INPUT@input.colour',
      'MISSING_REQUIRED_INPUT@input.subject',
      'INVALID_VALUE@input.count',
      'INVALID_VALUE@input.topics',
    ])
  })
})

describe('the built-in table', () => {
  it('has the codes the issue names, each with ports', () => {
    expect(BUILTIN_NODES.map((node) => node.code)).toEqual([
      'text',
      'number',
      'image',
      'prompt_template',
      'image_resize',
      'image_crop',
      'pick_from_list',
      'compare',
      'branch',
      'evaluate',
      'save_to_assets',
    ])
    for (const node of BUILTIN_NODES) expect(node.outputs.length).toBeGreaterThan(0)
  })
})

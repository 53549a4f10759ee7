import type {
  FlowInputCreate,
  FlowNodeCreate,
  FlowNodeInputCreate,
  FlowOutputCreate,
  Workflow,
} from '../../../src-shared/api'
import {
  CATALOG_TIMESTAMP,
  catalogId,
  findModel,
  microToDecimal,
  type VariableTypeCode,
} from '../models'
import { isoTime } from '../clock'
import { buildFlowGraph } from './graph'
import type { StoredFlow } from './present'
import { catalogResolver } from './resolver'

/**
 * The flow templates every organization sees (GET /v1/flow-templates): small, working flows
 * over the sandbox models and built-in nodes, written compactly here and built into flows by the
 * same code that builds a created flow, so a template is always a valid flow.
 *
 * To start a flow from a template, create a flow with its nodes, inputs and outputs under new
 * ids (the template's ids are its own).
 */

interface FlowPortSpec {
  name: string
  type: VariableTypeCode
  display: string
  description: string
  required?: boolean
  default?: unknown
}

interface NodeInputSpec {
  type: VariableTypeCode
  /** A literal value. */
  value?: unknown
  /** `<node key>.<output name>`: an edge. */
  from?: string
  /** The flow input that feeds it. */
  flow?: string
}

interface NodeSpec {
  key: string
  label: string
  model?: string
  builtin?: string
  x: number
  y: number
  inputs: Record<string, NodeInputSpec>
  /** Output name → its type and the flow output it fills, if any. */
  outputs: Record<string, { type: VariableTypeCode; flow?: string }>
}

interface TemplateSpec {
  slug: string
  name: string
  description: string
  category: 'images' | 'video'
  featured: boolean
  inputs: FlowPortSpec[]
  outputs: FlowPortSpec[]
  nodes: NodeSpec[]
}

const SPECS: readonly TemplateSpec[] = [
  {
    slug: 'prompt-to-image',
    name: 'Prompt to image',
    description: 'Turns a prompt into a 512×512 picture with Atelier Text to Image.',
    category: 'images',
    featured: true,
    inputs: [
      {
        name: 'prompt',
        type: 'text',
        display: 'Prompt',
        description: 'What to picture.',
        required: true,
      },
    ],
    outputs: [{ name: 'image', type: 'image', display: 'Image', description: 'The picture.' }],
    nodes: [
      {
        key: 'generate',
        label: 'Generate',
        model: 'atelier/text-to-image',
        x: 0,
        y: 0,
        inputs: {
          prompt: { type: 'text', flow: 'prompt' },
          width: { type: 'integer', value: 512 },
          height: { type: 'integer', value: 512 },
        },
        outputs: { image: { type: 'image', flow: 'image' } },
      },
    ],
  },
  {
    slug: 'image-to-upscaled-image',
    name: 'Image to upscaled image',
    description: 'Doubles the width and height of an image with Atelier Upscale.',
    category: 'images',
    featured: true,
    inputs: [
      {
        name: 'image',
        type: 'image',
        display: 'Image',
        description: 'The image to enlarge.',
        required: true,
      },
    ],
    outputs: [
      { name: 'image', type: 'image', display: 'Upscaled image', description: 'Twice the size.' },
    ],
    nodes: [
      {
        key: 'upscale',
        label: 'Upscale ×2',
        model: 'atelier/upscale',
        x: 0,
        y: 0,
        inputs: {
          image: { type: 'image', flow: 'image' },
          scale: { type: 'integer', value: 2 },
        },
        outputs: { image: { type: 'image', flow: 'image' } },
      },
    ],
  },
  {
    slug: 'generate-caption-and-evaluate',
    name: 'Generate, caption and evaluate',
    description:
      'Generates a picture from a prompt, describes it in words and has it evaluated against the prompt.',
    category: 'images',
    featured: true,
    inputs: [
      {
        name: 'prompt',
        type: 'text',
        display: 'Prompt',
        description: 'What to picture.',
        required: true,
      },
      {
        name: 'min_score',
        type: 'number',
        display: 'Minimum score',
        description: 'The evaluation score, 0 to 1, that counts as a pass.',
        default: 0.6,
      },
    ],
    outputs: [
      { name: 'image', type: 'image', display: 'Image', description: 'The picture.' },
      { name: 'caption', type: 'text', display: 'Caption', description: 'What it shows.' },
      { name: 'passed', type: 'boolean', display: 'Passed', description: 'The verdict.' },
      { name: 'score', type: 'number', display: 'Score', description: 'From 0 to 1.' },
    ],
    nodes: [
      {
        key: 'generate',
        label: 'Generate',
        model: 'atelier/text-to-image',
        x: 0,
        y: 0,
        inputs: { prompt: { type: 'text', flow: 'prompt' } },
        outputs: { image: { type: 'image', flow: 'image' } },
      },
      {
        key: 'caption',
        label: 'Caption',
        model: 'atelier/caption',
        x: 320,
        y: -120,
        inputs: {
          image: { type: 'image', from: 'generate.image' },
          detail: { type: 'enum', value: 'detailed' },
        },
        outputs: { caption: { type: 'text', flow: 'caption' } },
      },
      {
        key: 'evaluate',
        label: 'Evaluate',
        builtin: 'evaluate',
        x: 320,
        y: 120,
        inputs: {
          image: { type: 'image', from: 'generate.image' },
          prompt: { type: 'text', flow: 'prompt' },
          min_score: { type: 'number', flow: 'min_score' },
        },
        outputs: {
          passed: { type: 'boolean', flow: 'passed' },
          score: { type: 'number', flow: 'score' },
          issues: { type: 'text' },
        },
      },
    ],
  },
  {
    slug: 'prompt-template-to-image',
    name: 'Prompt template to image',
    description:
      'Fills a prompt template with a subject and a style, then pictures it: change the wording once, reuse it for every subject.',
    category: 'images',
    featured: false,
    inputs: [
      {
        name: 'subject',
        type: 'text',
        display: 'Subject',
        description: 'Who or what to picture.',
        required: true,
      },
      {
        name: 'style',
        type: 'text',
        display: 'Style',
        description: 'How it should look.',
        default: 'watercolour',
      },
    ],
    outputs: [{ name: 'image', type: 'image', display: 'Image', description: 'The picture.' }],
    nodes: [
      {
        key: 'template',
        label: 'Prompt template',
        builtin: 'prompt_template',
        x: 0,
        y: 0,
        inputs: {
          template: { type: 'text', value: 'a {subject}, {style} style, soft light' },
          subject: { type: 'text', flow: 'subject' },
          style: { type: 'text', flow: 'style' },
        },
        outputs: { prompt: { type: 'text' } },
      },
      {
        key: 'generate',
        label: 'Generate',
        model: 'atelier/text-to-image',
        x: 320,
        y: 0,
        inputs: { prompt: { type: 'text', from: 'template.prompt' } },
        outputs: { image: { type: 'image', flow: 'image' } },
      },
    ],
  },
  {
    slug: 'random-style',
    name: 'Random style',
    description:
      'Pictures a subject in a style picked at random from a list, a new one for every run.',
    category: 'images',
    featured: false,
    inputs: [
      {
        name: 'subject',
        type: 'text',
        display: 'Subject',
        description: 'Who or what to picture.',
        required: true,
      },
    ],
    outputs: [
      { name: 'image', type: 'image', display: 'Image', description: 'The picture.' },
      { name: 'style', type: 'text', display: 'Style', description: 'The style picked.' },
    ],
    nodes: [
      {
        key: 'styles',
        label: 'Pick a style',
        builtin: 'pick_from_list',
        x: 0,
        y: 0,
        inputs: {
          items: { type: 'text', value: 'watercolour\nink drawing\npixel art\noil paint' },
        },
        outputs: { item: { type: 'text', flow: 'style' } },
      },
      {
        key: 'template',
        label: 'Prompt template',
        builtin: 'prompt_template',
        x: 320,
        y: 0,
        inputs: {
          template: { type: 'text', value: '{subject} as {style}' },
          subject: { type: 'text', flow: 'subject' },
          style: { type: 'text', from: 'styles.item' },
        },
        outputs: { prompt: { type: 'text' } },
      },
      {
        key: 'generate',
        label: 'Generate',
        model: 'atelier/text-to-image',
        x: 640,
        y: 0,
        inputs: { prompt: { type: 'text', from: 'template.prompt' } },
        outputs: { image: { type: 'image', flow: 'image' } },
      },
    ],
  },
  {
    slug: 'keep-the-good-ones',
    name: 'Keep the good ones',
    description:
      'Generates a picture, evaluates it, and saves it to the assets only when the score reaches the bar.',
    category: 'images',
    featured: false,
    inputs: [
      {
        name: 'prompt',
        type: 'text',
        display: 'Prompt',
        description: 'What to picture.',
        required: true,
      },
    ],
    outputs: [
      { name: 'score', type: 'number', display: 'Score', description: 'From 0 to 1.' },
      {
        name: 'asset_id',
        type: 'string',
        display: 'Saved asset',
        description: 'The new asset, when the picture was kept.',
      },
    ],
    nodes: [
      {
        key: 'generate',
        label: 'Generate',
        model: 'atelier/text-to-image',
        x: 0,
        y: 0,
        inputs: { prompt: { type: 'text', flow: 'prompt' } },
        outputs: { image: { type: 'image' } },
      },
      {
        key: 'evaluate',
        label: 'Evaluate',
        builtin: 'evaluate',
        x: 320,
        y: 120,
        inputs: {
          image: { type: 'image', from: 'generate.image' },
          prompt: { type: 'text', flow: 'prompt' },
        },
        outputs: { score: { type: 'number', flow: 'score' } },
      },
      {
        key: 'bar',
        label: 'Score ≥ 0.7',
        builtin: 'compare',
        x: 640,
        y: 120,
        inputs: {
          value: { type: 'number', from: 'evaluate.score' },
          operator: { type: 'enum', value: '>=' },
          threshold: { type: 'number', value: 0.7 },
        },
        outputs: { passed: { type: 'boolean' } },
      },
      {
        key: 'branch',
        label: 'Keep?',
        builtin: 'branch',
        x: 960,
        y: 0,
        inputs: {
          condition: { type: 'boolean', from: 'bar.passed' },
          image: { type: 'image', from: 'generate.image' },
        },
        outputs: { if_true: { type: 'image' }, if_false: { type: 'image' } },
      },
      {
        key: 'save',
        label: 'Save',
        builtin: 'save_to_assets',
        x: 1280,
        y: 0,
        inputs: { image: { type: 'image', from: 'branch.if_true' } },
        outputs: { asset_id: { type: 'string', flow: 'asset_id' } },
      },
    ],
  },
  {
    slug: 'cut-out-and-save',
    name: 'Cut out and save',
    description:
      'Removes the background of a product shot and saves the cut-out to the assets, ready for a catalogue.',
    category: 'images',
    featured: false,
    inputs: [
      {
        name: 'image',
        type: 'image',
        display: 'Photo',
        description: 'The product shot.',
        required: true,
      },
    ],
    outputs: [
      {
        name: 'image',
        type: 'image',
        display: 'Cut-out',
        description: 'The product, background removed.',
      },
      { name: 'asset_id', type: 'string', display: 'Saved asset', description: 'The new asset.' },
    ],
    nodes: [
      {
        key: 'cutout',
        label: 'Remove background',
        model: 'atelier/remove-background',
        x: 0,
        y: 0,
        inputs: { image: { type: 'image', flow: 'image' } },
        outputs: { image: { type: 'image', flow: 'image' } },
      },
      {
        key: 'save',
        label: 'Save',
        builtin: 'save_to_assets',
        x: 320,
        y: 0,
        inputs: {
          image: { type: 'image', from: 'cutout.image' },
          name: { type: 'string', value: 'cut-out' },
        },
        outputs: { asset_id: { type: 'string', flow: 'asset_id' } },
      },
    ],
  },
  {
    slug: 'prompt-to-video',
    name: 'Prompt to video',
    description: 'Turns a prompt into a two-second animated clip with Atelier Text to Video.',
    category: 'video',
    featured: true,
    inputs: [
      {
        name: 'prompt',
        type: 'text',
        display: 'Prompt',
        description: 'What to animate.',
        required: true,
      },
    ],
    outputs: [{ name: 'video', type: 'video', display: 'Clip', description: 'The animation.' }],
    nodes: [
      {
        key: 'animate',
        label: 'Animate',
        model: 'atelier/text-to-video',
        x: 0,
        y: 0,
        inputs: {
          prompt: { type: 'text', flow: 'prompt' },
          duration_seconds: { type: 'number', value: 2 },
        },
        outputs: { video: { type: 'video', flow: 'video' } },
      },
    ],
  },
]

function modelId(slug: string): string {
  const model = findModel(slug)
  if (!model) throw new Error(`flow template: no model ${slug} in the catalog`)
  return model.id
}

function nodeBody(spec: TemplateSpec, node: NodeSpec): FlowNodeCreate {
  const id = (...parts: string[]) => catalogId('flow-template', spec.slug, ...parts)
  const flowInputs: Record<string, string> = {}
  const flowOutputs: Record<string, string> = {}
  const inputs = Object.entries(node.inputs).map(([name, input], index) => {
    const body: FlowNodeInputCreate = {
      id: id(node.key, 'in', name),
      name,
      variable_type_code: input.type,
      sort_order: index,
    }
    if (input.value !== undefined) body.value = input.value
    if (input.from) {
      const [from = '', output = ''] = input.from.split('.')
      body.source_output_id = id(from, 'out', output)
    }
    if (input.flow) flowInputs[name] = input.flow
    return body
  })
  const outputs = Object.entries(node.outputs).map(([name, output], index) => {
    if (output.flow) flowOutputs[name] = output.flow
    return {
      id: id(node.key, 'out', name),
      name,
      variable_type_code: output.type,
      sort_order: index,
    }
  })
  const config: Record<string, unknown> = {}
  if (Object.keys(flowInputs).length > 0) config.flow_inputs = flowInputs
  if (Object.keys(flowOutputs).length > 0) config.flow_outputs = flowOutputs
  return {
    id: id(node.key),
    slug: node.key,
    label: node.label,
    type_code: node.model ? 'model' : 'builtin',
    ...(node.model ? { model_id: modelId(node.model) } : { builtin_node_code: node.builtin }),
    x: node.x,
    y: node.y,
    config,
    inputs,
    outputs,
  }
}

function flowPort(spec: TemplateSpec, kind: 'input' | 'output', port: FlowPortSpec, index: number) {
  const body: FlowInputCreate & FlowOutputCreate = {
    id: catalogId('flow-template', spec.slug, kind, port.name),
    name: port.name,
    variable_type_code: port.type,
    display_name: port.display,
    description: port.description,
    sort_order: index,
  }
  return body
}

function buildTemplate(
  spec: TemplateSpec,
  index: number,
  workflows: readonly Workflow[],
): StoredFlow {
  const id = catalogId('flow-template', spec.slug)
  // A second apart, first one newest: the default order (created_at:desc) is the order above.
  const stamp = isoTime(Date.parse(CATALOG_TIMESTAMP) - index * 1000)
  const graph = buildFlowGraph(
    {
      inputs: spec.inputs.map((port, index) => ({
        ...flowPort(spec, 'input', port, index),
        is_required: port.required ?? false,
        ...(port.default === undefined ? {} : { default_value: port.default }),
      })),
      outputs: spec.outputs.map((port, index) => flowPort(spec, 'output', port, index)),
      nodes: spec.nodes.map((node) => nodeBody(spec, node)),
    },
    {
      flowId: id,
      now: stamp,
      newId: () => {
        throw new Error(`flow template ${spec.slug}: every part needs a fixed id`)
      },
      existing: new Map(),
      resolver: catalogResolver(workflows),
    },
  )
  if (graph.problems.length > 0) {
    throw new Error(`flow template ${spec.slug}: ${graph.problems.map((p) => p.message).join(' ')}`)
  }
  return {
    id,
    slug: spec.slug,
    name: spec.name,
    description: spec.description,
    cover_url: null,
    org_id: null,
    flow_type_code: 'template',
    category_code: spec.category,
    visibility_code: 'public',
    source_visibility_code: 'public',
    status_code: 'active',
    version: 1,
    current_version_id: catalogId('flow-template-version', spec.slug, 1),
    estimated_cost: microToDecimal(graph.estimatedMicro),
    context_variables: {},
    run_count: 0,
    avg_duration: null,
    cost_per_run: null,
    featured_at: spec.featured ? CATALOG_TIMESTAMP : null,
    created_by: null,
    created_at: stamp,
    updated_at: stamp,
    nodes: graph.nodes,
    inputs: graph.inputs,
    outputs: graph.outputs,
  }
}

/** The templates, built; throws if one of them is not a valid flow. */
export function buildFlowTemplates(workflows: readonly Workflow[]): StoredFlow[] {
  return SPECS.map((spec, index) => buildTemplate(spec, index, workflows))
}

export function templateId(slug: string): string {
  return catalogId('flow-template', slug)
}

import type { WorkflowInputCreate, WorkflowOutputCreate } from '../../../src-shared/api'
import { isLink, type ComfyApiNode, type ComfyApiWorkflow } from './parse'
import { SAMPLERS, SCHEDULERS, isCoreNode } from './widgets'

/** A node the import kept in the workflow but offers nothing of: a custom node it does not know. */
export interface NotExposedNode {
  nodeId: string
  classType: string
}

/** The creation body's inputs and outputs, and the nodes left as they are. */
export interface ExposedWorkflow {
  inputs: WorkflowInputCreate[]
  outputs: WorkflowOutputCreate[]
  notExposed: NotExposedNode[]
}

const SAMPLER_CLASSES = new Set(['KSampler', 'KSamplerAdvanced'])
const LATENT_CLASSES = new Set(['EmptyLatentImage', 'EmptySD3LatentImage'])
const IMAGE_LOADERS = new Set(['LoadImage', 'LoadImageMask'])
const IMAGE_OUTPUTS = new Set(['SaveImage', 'PreviewImage'])
/** How far a prompt is looked for behind the sampler: combines, control nets, area settings. */
const CONDITIONING_DEPTH = 4

const byNodeId = ([a]: [string, ComfyApiNode], [b]: [string, ComfyApiNode]) =>
  a.localeCompare(b, undefined, { numeric: true })

type Setting = Pick<
  WorkflowInputCreate,
  'variable_type_code' | 'validator_code' | 'validator_attrs'
>

const range = (min: number, max: number): Setting['validator_attrs'] => ({ min, max })

/** A choice list that always holds the workflow's own value, even one this list does not know. */
const choices = (known: readonly string[], own: unknown): Setting => ({
  variable_type_code: 'enum',
  validator_code: 'enum',
  validator_attrs: {
    values: typeof own === 'string' && !known.includes(own) ? [own, ...known] : [...known],
  },
})

/** The sampler settings offered, in the order a person reads them. */
const SAMPLER_FIELDS: readonly {
  field: string
  name: string
  display: string
  setting: (own: unknown) => Setting
}[] = [
  { field: 'seed', name: 'seed', display: 'Seed', setting: () => ({ variable_type_code: 'seed' }) },
  {
    field: 'noise_seed',
    name: 'seed',
    display: 'Seed',
    setting: () => ({ variable_type_code: 'seed' }),
  },
  {
    field: 'steps',
    name: 'steps',
    display: 'Steps',
    setting: () => ({
      variable_type_code: 'integer',
      validator_code: 'range',
      validator_attrs: range(1, 10_000),
    }),
  },
  {
    field: 'cfg',
    name: 'cfg',
    display: 'Guidance (CFG)',
    setting: () => ({
      variable_type_code: 'number',
      validator_code: 'range',
      validator_attrs: range(0, 100),
    }),
  },
  {
    field: 'sampler_name',
    name: 'sampler',
    display: 'Sampler',
    setting: (own) => choices(SAMPLERS, own),
  },
  {
    field: 'scheduler',
    name: 'scheduler',
    display: 'Scheduler',
    setting: (own) => choices(SCHEDULERS, own),
  },
]

const LATENT_FIELDS: readonly { field: string; display: string; min: number; max: number }[] = [
  { field: 'width', display: 'Width', min: 16, max: 16_384 },
  { field: 'height', display: 'Height', min: 16, max: 16_384 },
  { field: 'batch_size', display: 'Batch size', min: 1, max: 4096 },
]

/**
 * Names that stay unique when a workflow has two of a kind: the first sampler's prompt is
 * `prompt` ("Prompt"), the second's `prompt_2` ("Prompt (node 12)").
 */
function namer() {
  const counts = new Map<string, number>()
  return (name: string, display: string, nodeId: string) => {
    const n = (counts.get(name) ?? 0) + 1
    counts.set(name, n)
    return n === 1
      ? { name, display_name: display }
      : { name: `${name}_${n}`, display_name: `${display} (node ${nodeId})` }
  }
}

/** The text encoder whose literal text conditions the sampler through `field`, if there is one. */
function promptEncoder(
  workflow: ComfyApiWorkflow,
  value: unknown,
  depth = 0,
): [string, ComfyApiNode] | null {
  if (!isLink(value) || depth > CONDITIONING_DEPTH) return null
  const id = String(value[0])
  const node = workflow[id]
  if (!node) return null
  if (node.class_type.includes('CLIPTextEncode') && typeof node.inputs.text === 'string') {
    return [id, node]
  }
  for (const [field, next] of Object.entries(node.inputs)) {
    if (!/conditioning|positive|negative/.test(field)) continue
    const found = promptEncoder(workflow, next, depth + 1)
    if (found) return found
  }
  return null
}

/**
 * What a person would offer of a ComfyUI workflow: each sampler's prompt and negative prompt
 * (its `positive`/`negative` links followed to the text encoders), seed, steps, guidance,
 * sampler and scheduler; each empty latent's width, height and batch size; every image loader
 * as an image input; every save or preview node as an image output. Defaults are the
 * workflow's own values; a field fed by another node is not offered, since a value would cut
 * that link. Custom nodes are kept as they are and listed as not exposed.
 */
export function exposeComfyWorkflow(workflow: ComfyApiWorkflow): ExposedWorkflow {
  const nodes = Object.entries(workflow).sort(byNodeId)
  const inputs: WorkflowInputCreate[] = []
  const outputs: WorkflowOutputCreate[] = []
  const named = namer()
  const encoders = new Set<string>()
  const add = (
    nodeId: string,
    field: string,
    name: string,
    display: string,
    setting: Setting,
    extra: Partial<WorkflowInputCreate> = {},
  ) => {
    inputs.push({
      ...named(name, display, nodeId),
      ...setting,
      default_value: workflow[nodeId]?.inputs[field],
      sort_order: inputs.length,
      wfengine_node_id: nodeId,
      wfengine_field_name: field,
      ...extra,
    })
  }

  for (const [id, node] of nodes) {
    if (!SAMPLER_CLASSES.has(node.class_type)) continue
    for (const [link, name, display] of [
      ['positive', 'prompt', 'Prompt'],
      ['negative', 'negative_prompt', 'Negative prompt'],
    ] as const) {
      const encoder = promptEncoder(workflow, node.inputs[link])
      if (!encoder || encoders.has(encoder[0])) continue
      encoders.add(encoder[0])
      add(encoder[0], 'text', name, display, { variable_type_code: 'text' })
    }
    for (const { field, name, display, setting } of SAMPLER_FIELDS) {
      const own = node.inputs[field]
      if (own === undefined || isLink(own)) continue
      add(id, field, name, display, setting(own))
    }
  }
  for (const [id, node] of nodes) {
    if (!LATENT_CLASSES.has(node.class_type)) continue
    for (const { field, display, min, max } of LATENT_FIELDS) {
      if (typeof node.inputs[field] !== 'number') continue
      add(id, field, field, display, {
        variable_type_code: 'integer',
        validator_code: 'range',
        validator_attrs: range(min, max),
      })
    }
  }
  for (const [id, node] of nodes) {
    if (!IMAGE_LOADERS.has(node.class_type)) continue
    // The file name points into the ComfyUI machine's own input folder: no use as a default here.
    const own = node.inputs.image
    add(
      id,
      'image',
      'image',
      'Image',
      { variable_type_code: 'image' },
      {
        default_value: undefined,
        is_required: true,
        default_behavior_code: 'require',
        ...(typeof own === 'string' && own !== ''
          ? { description: `In the workflow: ${own}` }
          : {}),
      },
    )
  }
  const outputNames = namer()
  for (const [id, node] of nodes) {
    if (!IMAGE_OUTPUTS.has(node.class_type)) continue
    outputs.push({
      ...outputNames('image', 'Image', id),
      variable_type_code: 'image',
      sort_order: outputs.length,
      wfengine_node_id: id,
      wfengine_field_name: 'images',
    })
  }
  const notExposed = nodes
    .filter(([, node]) => !isCoreNode(node.class_type))
    .map(([nodeId, node]) => ({ nodeId, classType: node.class_type }))
  return {
    inputs: inputs.map((input) => {
      // A default the workflow did not give is left out, not sent as null.
      if (input.default_value !== undefined) return input
      const { default_value: _unset, ...rest } = input
      return rest
    }),
    outputs,
    notExposed,
  }
}

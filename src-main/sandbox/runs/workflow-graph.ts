import type { Workflow } from '../../../src-shared/api'
import { estimateCost, findModel, type CatalogModel } from '../models'
import { runModelStep } from './model-target'
import { addNodeWork, checkPorts, failedStep, startOutcome, stoppedFailure } from './steps'
import type { GraphOutcome, StepContext, StepResult } from './steps'
import { asModelInput, isRecord, isStoredFile, nodeSeed } from './values'
import { feedersFirst } from './order'

/**
 * Workflow-engine workflows, run procedurally. The sandbox has no workflow engine; it reads the
 * graph of `workflow_json` (the API form `{"<id>": {class_type, inputs}}`, or the editor form
 * `{nodes, links}`), writes the run's inputs into the node fields they name (`wfengine_node_id`,
 * `wfengine_field_name`) and walks the nodes in dependency order, one node run each. Nodes are
 * recognised by their class type: image loaders, text encoders, empty latents and samplers carry
 * their settings along; a decoder renders the picture with Atelier Text to Image (prompt,
 * negative prompt, size and seed from the graph); an upscaler enlarges its image with Atelier
 * Upscale (4× when its upscale model's name says 4x, else 2×); save and preview nodes pass their
 * image on; any other node passes on what it was fed. Every output slot of a node carries the
 * node's one value. An image output whose node made no image (a graph the sandbox cannot follow)
 * is rendered from the workflow's text inputs instead, and its log says so.
 */

type Kind =
  'load_image' | 'text' | 'latent' | 'sampler' | 'decode' | 'upscale' | 'save' | 'loader' | 'other'

interface GraphNode {
  id: string
  classType: string
  /** Literal values of its fields, the run's inputs written in. */
  fields: Record<string, unknown>
  /** Fields fed by another node's output. */
  links: Record<string, string>
}

const TEXT_TO_IMAGE = 'atelier/text-to-image'
const UPSCALE = 'atelier/upscale'
const CARRY_MS = 5

function kindOf(classType: string): Kind {
  const name = classType.toLowerCase()
  if (name.includes('loadimage')) return 'load_image'
  if (name.includes('textencode')) return 'text'
  if (name.includes('emptylatent')) return 'latent'
  if (name.includes('sampler')) return 'sampler'
  if (name.includes('decode')) return 'decode'
  if (name.includes('loader')) return 'loader'
  if (name.includes('upscale')) return 'upscale'
  if (name.includes('saveimage') || name.includes('preview')) return 'save'
  return 'other'
}

const byId = (a: GraphNode, b: GraphNode) => a.id.localeCompare(b.id, undefined, { numeric: true })

/** The nodes of `workflow_json`, in no particular order; none for a shape it does not know. */
export function parseWorkflowGraph(json: Record<string, unknown>): GraphNode[] {
  const entries = Object.entries(json)
  if (entries.length > 0 && entries.every(([, node]) => isRecord(node) && 'class_type' in node)) {
    return entries.map(([id, node]) => {
      const record = node as Record<string, unknown>
      const fields: Record<string, unknown> = {}
      const links: Record<string, string> = {}
      for (const [name, value] of Object.entries(isRecord(record.inputs) ? record.inputs : {})) {
        const [from, slot] = Array.isArray(value) ? (value as unknown[]) : []
        if (
          Array.isArray(value) &&
          value.length === 2 &&
          typeof slot === 'number' &&
          String(from) in json
        ) {
          links[name] = String(from)
        } else {
          fields[name] = value
        }
      }
      return { id, classType: String(record.class_type), fields, links }
    })
  }
  if (!Array.isArray(json.nodes)) return []
  // Editor form: links are rows [link id, from node, from slot, to node, to slot, type].
  const rows = Array.isArray(json.links) ? (json.links as unknown[]).filter(Array.isArray) : []
  return (json.nodes as unknown[]).filter(isRecord).map((node) => {
    const links: Record<string, string> = {}
    for (const input of Array.isArray(node.inputs) ? (node.inputs as unknown[]) : []) {
      if (!isRecord(input) || typeof input.name !== 'string' || input.link === null) continue
      const row = rows.find((candidate) => (candidate as unknown[])[0] === input.link) as
        unknown[] | undefined
      if (row) links[input.name] = String(row[1])
    }
    return {
      id: String(node.id),
      classType: typeof node.type === 'string' ? node.type : 'Node',
      fields: {},
      links,
    }
  })
}

/** Dependency order, the node ids' order among equals; a loop keeps the id order. */
function dependencyOrder(nodes: readonly GraphNode[]): GraphNode[] {
  const sorted = [...nodes].sort(byId)
  const ids = new Set(sorted.map((node) => node.id))
  return feedersFirst(sorted, (node, placed) =>
    Object.values(node.links).every((from) => placed.has(from) || !ids.has(from)),
  )
}

const isImage = (value: unknown) =>
  isStoredFile(value) || (typeof value === 'string' && value.trim() !== '')

function catalogModel(slug: string): CatalogModel {
  const model = findModel(slug)
  if (!model) throw new Error(`the catalog has no ${slug}`)
  return model
}

function dimension(value: unknown, fallback: number): number {
  const number = typeof value === 'number' && Number.isFinite(value) ? Math.round(value) : fallback
  return Math.min(2048, Math.max(64, number))
}

async function render(
  ctx: StepContext,
  slug: string,
  input: Record<string, unknown>,
  seed: number,
): Promise<StepResult> {
  const step = await runModelStep(
    ctx.services,
    catalogModel(slug),
    asModelInput(ctx.services, input),
    {
      seed,
      fetchImage: ctx.fetchImage,
      signal: ctx.signal,
      random: ctx.services.random,
    },
  )
  const image = (step.output?.images as unknown[] | undefined)?.[0]
  if (step.output === null || image === undefined) {
    return failedStep(
      {
        code: step.node.failure_code ?? 'MODEL_ERROR',
        stage: step.node.failure_stage ?? 'inference',
        message: step.node.failure_message ?? `${slug} made no image.`,
      },
      step.workMs,
      step.node.logs,
    )
  }
  return {
    ports: { value: image },
    output: { image, seed: step.output.seed },
    cost_micro: step.node.cost_micro,
    workMs: step.workMs,
    logs: step.node.logs,
    failure: null,
  }
}

const carry = (value: unknown, output: Record<string, unknown>): StepResult => ({
  ports: { value },
  output,
  cost_micro: 0,
  workMs: CARRY_MS,
  logs: [],
  failure: null,
})

async function runNode(
  ctx: StepContext,
  node: GraphNode,
  fed: Record<string, unknown>,
): Promise<StepResult> {
  const { fields } = node
  const linked = Object.values(fed)
  switch (kindOf(node.classType)) {
    case 'load_image':
      return carry(fields.image, { image: fields.image ?? null })
    case 'text': {
      const text = typeof fields.text === 'string' ? fields.text : ''
      return carry({ text }, { text })
    }
    case 'latent': {
      const latent = { width: dimension(fields.width, 512), height: dimension(fields.height, 512) }
      return carry(latent, latent)
    }
    case 'sampler': {
      const text = (value: unknown) =>
        isRecord(value) && typeof value.text === 'string' ? value.text : ''
      const latent = isRecord(fed.latent_image) ? fed.latent_image : {}
      const seed = fields.seed
      const settings = {
        width: dimension(latent.width, 512),
        height: dimension(latent.height, 512),
        prompt: text(fed.positive),
        negative_prompt: text(fed.negative),
        seed: engineSeed(seed) ?? nodeSeed(ctx.seed, node.id),
      }
      return carry(settings, settings)
    }
    case 'decode': {
      const settings = linked.find(
        (value): value is Record<string, unknown> => isRecord(value) && 'prompt' in value,
      )
      const prompt =
        typeof settings?.prompt === 'string' && settings.prompt.trim() !== ''
          ? settings.prompt
          : 'an untitled workflow picture'
      const seed = typeof settings?.seed === 'number' ? settings.seed : nodeSeed(ctx.seed, node.id)
      const input: Record<string, unknown> = {
        prompt,
        width: dimension(settings?.width, 512),
        height: dimension(settings?.height, 512),
        seed,
      }
      if (typeof settings?.negative_prompt === 'string' && settings.negative_prompt !== '') {
        input.negative_prompt = settings.negative_prompt
      }
      return render(ctx, TEXT_TO_IMAGE, input, seed)
    }
    case 'upscale': {
      const image = linked.find(isImage)
      if (image === undefined) {
        return failedStep({
          code: 'INPUT_VALIDATION_FAILED',
          stage: 'preprocess',
          message: `Workflow node ${node.id} (${node.classType}) has no image to enlarge; connect an image to it.`,
        })
      }
      const names = JSON.stringify([fields, ...linked.filter((value) => !isImage(value))])
      const scale = /4x|x4/i.test(names) ? 4 : 2
      return render(ctx, UPSCALE, { image, scale }, nodeSeed(ctx.seed, node.id))
    }
    case 'save': {
      const image = linked.find(isImage) ?? null
      return carry(image, { image })
    }
    case 'loader': {
      const name = Object.values(fields).find((value) => typeof value === 'string') ?? null
      return carry({ loader: node.classType, name }, { name })
    }
    case 'other': {
      const value = linked[0] ?? null
      return carry(value, { value })
    }
  }
}

/** The run's input values written into the node fields they name; a left-out seed is the run's. */
function applyInputs(
  workflow: Workflow,
  nodes: GraphNode[],
  input: Record<string, unknown>,
  seed: number,
): void {
  for (const port of workflow.inputs) {
    const node = nodes.find((candidate) => candidate.id === port.wfengine_node_id)
    if (!node || port.wfengine_field_name === null) continue
    const value = input[port.name] ?? (port.variable_type_code === 'seed' ? seed : undefined)
    if (value === undefined) continue
    node.fields[port.wfengine_field_name] = value
    // A value given for a field overrides the connection that fed it.
    Reflect.deleteProperty(node.links, port.wfengine_field_name)
  }
}

/**
 * A workflow's seed in the range the picture models take (0 to 2^32 - 1). ComfyUI's samplers take
 * seeds up to 2^64, and imported workflows carry such seeds: the same seed still makes the same
 * picture, where refusing it would fail every run of a real-world workflow.
 */
function engineSeed(seed: unknown): number | null {
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0) return null
  return seed % 2 ** 32
}

/** Text input values, for a picture the graph itself does not render. */
function fallbackInput(workflow: Workflow, input: Record<string, unknown>, seed: number) {
  const texts = workflow.inputs
    .filter(
      (port) =>
        ['text', 'string'].includes(port.variable_type_code) && !/negative/i.test(port.name),
    )
    .map((port) => input[port.name])
    .filter((value): value is string => typeof value === 'string' && value.trim() !== '')
  return {
    prompt: texts.join(', ') || workflow.name,
    width: dimension(input.width, 512),
    height: dimension(input.height, 512),
    seed: typeof input.seed === 'number' ? input.seed : seed,
  }
}

/** Micro-credits a run of the workflow is expected to cost: its renders at the input's size. */
export function estimateWorkflow(workflow: Workflow, input: Record<string, unknown>): number {
  const nodes = parseWorkflowGraph(workflow.workflow_json)
  const size = {
    prompt: 'estimate',
    width: dimension(input.width, 512),
    height: dimension(input.height, 512),
  }
  let micro = 0
  let renders = 0
  for (const node of nodes) {
    const kind = kindOf(node.classType)
    if (kind === 'decode') micro += estimateCost(catalogModel(TEXT_TO_IMAGE), size).micro
    // The dearer factor: the difference is refunded when the run ends.
    if (kind === 'upscale')
      micro += estimateCost(catalogModel(UPSCALE), { image: 'x', scale: 4 }).micro
    if (kind === 'decode' || kind === 'upscale') renders++
  }
  if (renders === 0) {
    const images = workflow.outputs.filter((output) => output.variable_type_code === 'image').length
    micro += images * estimateCost(catalogModel(TEXT_TO_IMAGE), size).micro
  }
  return micro
}

/**
 * Runs a workflow on an input keyed by its input names (checked against them first:
 * INPUT_VALIDATION_FAILED at preprocess), one node run per graph node (`wfengine_node_id`); the
 * output is keyed by the workflow's output names. The first node that fails ends the run, its
 * failure naming the node in its stage (`node:<id>`) and message.
 */
export async function runWorkflowGraph(
  ctx: StepContext,
  workflow: Workflow,
  given: Record<string, unknown>,
): Promise<GraphOutcome> {
  const ports = workflow.inputs.map((port) => ({
    ...port,
    behavior_code: port.default_behavior_code,
  }))
  const checked = checkPorts(`The workflow ${JSON.stringify(workflow.name)}`, ports, given)
  const outcome = startOutcome(workflow.outputs, checked.problems)
  if (checked.problems.length > 0) return outcome
  const nodes = parseWorkflowGraph(workflow.workflow_json)
  applyInputs(workflow, nodes, checked.input, ctx.seed)
  const values = new Map<string, unknown>()
  const record = (
    id: string | null,
    classType: string,
    fed: Record<string, unknown>,
    step: StepResult,
  ) => {
    addNodeWork(outcome, step, {
      flow_node_id: null,
      wfengine_node_id: id,
      input: fed,
      logs: [
        { level_code: 'info', message: `Running ${classType} node ${id ?? '(output)'}.` },
        ...step.logs,
      ],
    })
    if (step.failure) {
      outcome.failure = {
        code: step.failure.code,
        stage: `node:${id ?? 'output'}`,
        message: `Workflow node ${id ?? '(output)'} failed at ${step.failure.stage}: ${step.failure.message}`,
      }
    }
  }
  for (const node of dependencyOrder(nodes)) {
    if (ctx.signal.aborted) {
      outcome.failure = stoppedFailure()
      return outcome
    }
    const fed: Record<string, unknown> = {}
    for (const [field, from] of Object.entries(node.links)) fed[field] = values.get(from) ?? null
    const step = await runNode(ctx, node, fed)
    record(node.id, node.classType, { ...node.fields, ...fed }, step)
    if (outcome.failure) return outcome
    values.set(node.id, step.ports.value ?? null)
  }

  let fallback: unknown
  for (const port of workflow.outputs) {
    const value = port.wfengine_node_id === null ? undefined : values.get(port.wfengine_node_id)
    if (port.variable_type_code !== 'image' && port.variable_type_code !== 'video') {
      outcome.output[port.name] =
        typeof value === 'string'
          ? value
          : isRecord(value) && typeof value.text === 'string'
            ? value.text
            : null
      continue
    }
    if (isImage(value)) {
      outcome.output[port.name] = value
      continue
    }
    if (port.variable_type_code === 'video') continue
    if (fallback === undefined) {
      if (ctx.signal.aborted) {
        outcome.failure = stoppedFailure()
        return outcome
      }
      const input = fallbackInput(workflow, checked.input, ctx.seed)
      outcome.logs.push({
        level_code: 'info',
        message: `No node of the graph renders the ${port.name} output the sandbox can follow, so it was rendered from the workflow's text inputs.`,
      })
      const step = await render(ctx, TEXT_TO_IMAGE, input, input.seed)
      record(port.wfengine_node_id, 'fallback render', input, step)
      if (outcome.failure) return outcome
      fallback = step.ports.value
    }
    outcome.output[port.name] = fallback
  }
  return outcome
}

import type { Workflow } from '../../../src-shared/api'
import { AUTHORING_COLLECTIONS, type StoredFlow, type StoredNode } from '../authoring'
import { findModel, type ModelLog } from '../models'
import { runBuiltin } from './builtin-nodes'
import { runModelStep } from './model-target'
import {
  checkPorts,
  failedStep,
  stoppedFailure,
  type Failure,
  addNodeWork,
  startOutcome,
  type GraphOutcome,
  type StepContext,
  type StepResult,
} from './steps'
import { asModelInput, isRecord, isStoredFile, nodeSeed } from './values'
import { runWorkflowGraph } from './workflow-graph'
import { feedersFirst } from './order'

/** Sub-flows within sub-flows stop here, even without a loop: a graph this deep is a mistake. */
export const MAX_FLOW_DEPTH = 8

const slugOf = (node: StoredNode) => node.slug ?? node.id
const describe = (node: StoredNode) => `node ${JSON.stringify(node.label)} (${slugOf(node)})`

/** Runs one node on what reaches its inputs; each kind of node has its own. */
type RunNode = (
  ctx: StepContext,
  node: StoredNode,
  input: Record<string, unknown>,
) => Promise<StepResult>

/**
 * The nodes in an order where every node comes after the nodes that feed it (its edges), and
 * otherwise in the flow's own order. Authoring refuses loops; should one slip through, the nodes
 * on it keep the flow's order rather than never running.
 */
export function executionOrder(nodes: readonly StoredNode[]): StoredNode[] {
  const ownerOf = new Map<string, string>()
  for (const node of nodes) for (const output of node.outputs) ownerOf.set(output.id, node.id)
  const waitingOn = new Map<string, Set<string>>()
  for (const node of nodes) {
    const feeders = new Set<string>()
    for (const input of node.inputs) {
      const from = input.source_output_id === null ? undefined : ownerOf.get(input.source_output_id)
      if (from !== undefined && from !== node.id) feeders.add(from)
    }
    waitingOn.set(node.id, feeders)
  }
  return feedersFirst(nodes, (node, placed) =>
    [...(waitingOn.get(node.id) ?? [])].every((from) => placed.has(from)),
  )
}

/** What a node runs, for its first log line. */
function what(node: StoredNode): string {
  switch (node.type_code) {
    case 'model':
      return `the model ${findModel(node.model_id ?? '')?.slug ?? String(node.model_id)}`
    case 'builtin':
      return `the built-in node ${String(node.builtin_node_code)}`
    case 'sub_flow':
      return `the sub-flow ${String(node.sub_flow_id)}`
    default:
      return `the workflow ${String(node.wfengine_workflow_id)}`
  }
}

/** The outputs a node made, in words: `image (128×96 image/png), prompt`. */
function madeOf(ports: Record<string, unknown>): string {
  const parts = Object.entries(ports).map(([name, value]) => {
    if (isStoredFile(value)) {
      const size = value.width === undefined ? '' : `${value.width}×${String(value.height)} `
      return `${name} (${size}${value.content_type})`
    }
    return name
  })
  return parts.length > 0 ? parts.join(', ') : 'no output'
}

/** What reaches a node's inputs; `missing` names an input whose feeding node produced nothing. */
function gather(
  node: StoredNode,
  flowInput: Record<string, unknown>,
  values: ReadonlyMap<string, unknown>,
): { input: Record<string, unknown>; missing: string | null } {
  const mapped = isRecord(node.config.flow_inputs) ? node.config.flow_inputs : {}
  const input: Record<string, unknown> = {}
  for (const port of node.inputs) {
    if (port.source_output_id !== null) {
      if (!values.has(port.source_output_id)) return { input, missing: port.name }
      input[port.name] = values.get(port.source_output_id)
      continue
    }
    const flowName = mapped[port.name]
    if (typeof flowName === 'string' && flowInput[flowName] !== undefined) {
      input[port.name] = flowInput[flowName]
    } else if (port.value !== null) {
      input[port.name] = port.value
    }
  }
  return { input, missing: null }
}

/** Prefixes the log lines of a graph run inside a node with where they come from. */
function nested(where: string, outcome: GraphOutcome, labels: ReadonlyMap<string, string>) {
  const lines: ModelLog[] = outcome.logs.map((line) => ({
    ...line,
    message: `[${where}] ${line.message}`,
  }))
  for (const node of outcome.nodes) {
    const label =
      labels.get(node.flow_node_id ?? '') ??
      (node.wfengine_node_id === null ? 'a node' : `node ${node.wfengine_node_id}`)
    for (const line of node.logs) {
      if (line.level_code === 'debug') continue
      lines.push({ ...line, message: `[${where} › ${label}] ${line.message}` })
    }
  }
  return lines
}

function fromOutcome(
  where: string,
  outcome: GraphOutcome,
  labels: Map<string, string>,
): StepResult {
  const logs = nested(where, outcome, labels)
  if (outcome.failure) {
    const failure = { ...outcome.failure, message: `In ${where}: ${outcome.failure.message}` }
    return failedStep(failure, outcome.workMs, logs)
  }
  return {
    ports: outcome.output,
    output: outcome.output,
    cost_micro: outcome.cost_micro,
    workMs: outcome.workMs,
    logs,
    failure: null,
  }
}

const runModelNode: RunNode = async (ctx, node, input) => {
  const model = node.model_id === null ? undefined : findModel(node.model_id)
  if (!model) {
    return failedStep({
      code: 'MODEL_UNAVAILABLE',
      stage: 'preprocess',
      message: `The node names a model (${String(node.model_id)}) the catalog no longer has; pick one from GET /v1/models.`,
    })
  }
  const step = await runModelStep(ctx.services, model, asModelInput(ctx.services, input), {
    seed: nodeSeed(ctx.seed, node.id),
    fetchImage: ctx.fetchImage,
    signal: ctx.signal,
    random: ctx.services.random,
  })
  // As the model took it (defaults, seed), files shown as the files they are rather than URLs.
  const shown = Object.fromEntries(
    Object.entries(step.node.input ?? {}).map(([name, value]) => [name, input[name] ?? value]),
  )
  const output = step.output
  if (output === null) {
    return {
      ports: {},
      output: null,
      cost_micro: 0,
      workMs: step.workMs,
      logs: step.node.logs,
      input: shown,
      failure: {
        code: step.node.failure_code ?? 'MODEL_ERROR',
        stage: step.node.failure_stage ?? 'inference',
        message: step.node.failure_message ?? 'The model failed.',
      },
    }
  }
  // Ports are named like the model's outputs; the normalized output lists images, one video, text.
  const ports: Record<string, unknown> = {}
  for (const def of model.outputs) {
    if (def.variable_type_code === 'image') {
      ports[def.name] = (output.images as unknown[] | undefined)?.[0] ?? null
    } else if (def.variable_type_code === 'video') {
      ports[def.name] = output.video ?? null
    } else {
      ports[def.name] = output.text ?? null
    }
  }
  return {
    ports,
    output: { ...ports, seed: output.seed },
    input: shown,
    cost_micro: step.node.cost_micro,
    workMs: step.workMs,
    logs: step.node.logs,
    failure: null,
  }
}

const runSubFlow: RunNode = async (ctx, node, input) => {
  const flowId = node.sub_flow_id ?? ''
  const flow = ctx.services.store.get<StoredFlow>(AUTHORING_COLLECTIONS.flows, flowId, ctx.orgId)
  if (!flow) {
    return failedStep({
      code: 'FLOW_NOT_FOUND',
      stage: 'preprocess',
      message: `The sub-flow ${flowId} is not a flow of this organization any more; point the node at another flow.`,
    })
  }
  if (ctx.flowStack.includes(flow.id) || ctx.flowStack.length >= MAX_FLOW_DEPTH) {
    return failedStep({
      code: 'FLOW_RECURSION',
      stage: 'preprocess',
      message: ctx.flowStack.includes(flow.id)
        ? `The sub-flow ${JSON.stringify(flow.name)} is already running further up: it contains itself, directly or through its sub-flows, and would never end. Point the node at another flow.`
        : `Sub-flows are nested more than ${MAX_FLOW_DEPTH} deep; flatten the flow.`,
    })
  }
  const outcome = await runFlowGraph(
    { ...ctx, flowStack: [...ctx.flowStack, flow.id] },
    flow,
    input,
  )
  const labels = new Map(flow.nodes.map((inner) => [inner.id, inner.label]))
  return fromOutcome(`sub-flow ${JSON.stringify(flow.name)}`, outcome, labels)
}

const runWorkflowNode: RunNode = async (ctx, node, input) => {
  const id = node.wfengine_workflow_id ?? ''
  const workflow = ctx.services.store.get<Workflow>(
    AUTHORING_COLLECTIONS.workflows,
    id,
    ctx.orgId,
    {
      includeGlobal: true,
    },
  )
  if (!workflow) {
    return failedStep({
      code: 'WORKFLOW_NOT_FOUND',
      stage: 'preprocess',
      message: `The workflow ${id} is not a workflow of this organization any more; point the node at another one.`,
    })
  }
  const outcome = await runWorkflowGraph(
    { ...ctx, seed: nodeSeed(ctx.seed, node.id) },
    workflow,
    input,
  )
  return fromOutcome(`workflow ${JSON.stringify(workflow.name)}`, outcome, new Map())
}

function runNode(ctx: StepContext, node: StoredNode, input: Record<string, unknown>) {
  switch (node.type_code) {
    case 'model':
      return runModelNode(ctx, node, input)
    case 'builtin':
      return runBuiltin(ctx, node.builtin_node_code ?? '', node, input)
    case 'sub_flow':
      return runSubFlow(ctx, node, input)
    case 'wfengine_workflow':
      return runWorkflowNode(ctx, node, input)
    default:
      return Promise.resolve(
        failedStep({
          code: 'NODE_UNAVAILABLE',
          stage: 'preprocess',
          message: `The sandbox cannot run nodes of type ${node.type_code}.`,
        }),
      )
  }
}

/**
 * Runs a flow's graph on an input keyed by its flow input names: the input is checked against
 * the flow inputs (INPUT_VALIDATION_FAILED at preprocess), then every node runs in turn, each
 * fed by its edges, its flow inputs or its values. A node fed by an output nothing produced (the
 * side a branch did not take) is skipped, and so are the nodes it feeds. The first node that
 * fails ends the graph: the failure keeps the node's code and names the node in its stage
 * (`node:<slug>`) and message. The output is keyed by the flow output names.
 */
export async function runFlowGraph(
  ctx: StepContext,
  flow: StoredFlow,
  given: Record<string, unknown>,
): Promise<GraphOutcome> {
  const checked = checkPorts(`The flow ${JSON.stringify(flow.name)}`, flow.inputs, given)
  const outcome = startOutcome(flow.outputs, checked.problems)
  if (checked.problems.length > 0) return outcome
  const values = new Map<string, unknown>()
  for (const node of executionOrder(flow.nodes)) {
    if (ctx.signal.aborted) {
      outcome.failure = stoppedFailure()
      return outcome
    }
    const { input, missing } = gather(node, checked.input, values)
    if (missing !== null) {
      outcome.logs.push({
        level_code: 'info',
        message: `Skipped ${describe(node)}: its input ${JSON.stringify(missing)} is fed by an output that was not produced (a branch went the other way, or its node was skipped).`,
      })
      continue
    }
    const step = await runNode(ctx, node, input)
    const opening: ModelLog = { level_code: 'info', message: `Running ${what(node)}.` }
    const closing: ModelLog[] = step.failure
      ? []
      : [{ level_code: 'info', message: `Done; it made ${madeOf(step.ports)}.` }]
    addNodeWork(outcome, step, {
      flow_node_id: node.id,
      wfengine_node_id: null,
      input: step.input ?? input,
      logs: [opening, ...step.logs, ...closing],
    })
    if (step.failure) {
      outcome.failure = nodeFailure(node, step.failure)
      return outcome
    }
    for (const port of node.outputs) {
      if (step.ports[port.name] !== undefined) values.set(port.id, step.ports[port.name])
    }
    const filled = isRecord(node.config.flow_outputs) ? node.config.flow_outputs : {}
    for (const [portName, flowName] of Object.entries(filled)) {
      const port = node.outputs.find((output) => output.name === portName)
      if (typeof flowName === 'string' && port && values.has(port.id)) {
        outcome.output[flowName] = values.get(port.id)
      }
    }
  }
  return outcome
}

function nodeFailure(node: StoredNode, failure: Failure): Failure {
  return {
    code: failure.code,
    stage: `node:${slugOf(node)}`,
    message: `The ${describe(node)} failed at ${failure.stage}: ${failure.message}`,
  }
}

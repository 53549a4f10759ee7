import type { FlowNode } from '../../../src-shared/api'
import type { FlowRunsRepository } from '../../db/repositories/flow-runs'
import type { FlowDocument, PortValue } from '../types'
import {
  nodeCacheKey,
  planFlow,
  targetVersionOf,
  type FlowCatalog,
  type FlowPlan,
} from '../validate'
import { FlowRunError } from './errors'
import { flowInputValue, runnerFor, type FlowRunners } from './scheduler'
import { drawSeeds } from './seeds'

/**
 * What a run of a flow is expected to cost, node by node, before anything runs: the one
 * estimate behind `atelier run`'s "Estimate" line, the balance check of `runFlow` and the
 * editor's estimate, so that none of them promises a price a run will not charge.
 *
 * A node is priced by its runner's `estimate` with what is known of its inputs, unless the run
 * will take its outputs from the cache: then it costs 0 and is counted in `cachedNodes`. That
 * is predicted exactly as the scheduler decides it (see `scheduler.ts#execute`):
 *
 * - the key is `nodeCacheKey` over the resolved inputs, with the seeds left on the dice out of it
 *   (`drawSeeds`), and a succeeded node run of the same profile and organization under that key
 *   is a hit; a resumed flow run's own succeeded node runs count as hits too;
 * - forced nodes (and what they feed) are never hits;
 * - a node's resolved inputs are known only when every node feeding it is a hit (their cached
 *   outputs are its inputs): a node downstream of one that will run is predicted to run, since
 *   what it will be given cannot be known yet;
 * - a node fed by a hit that left the wired output out (a branch not taken), or by a node that
 *   will be skipped, will be skipped and costs 0, as the scheduler skips it;
 * - sub-flows are not cached themselves, their inner nodes are: a sub-flow node costs what its
 *   inner nodes will, and those are counted one by one in `cachedNodes` (as the flow run's
 *   `totals.cached` counts them).
 *
 * A flow that cannot be planned (the editor checks flows being edited) is priced node by node
 * with what each node itself says, without the cache: no run of it can start anyway.
 */
export interface FlowEstimate {
  /** Micro-credits by top-level node id, a sub-flow's nodes summed into their node. */
  byNode: Record<string, number>
  totalMicro: number
  /** Nodes (a sub-flow's inner nodes one by one) expected to take their outputs from the cache. */
  cachedNodes: number
}

export interface FlowEstimateOptions {
  flow: FlowDocument
  /** The flow's plan when the caller has it; planned here otherwise. */
  plan?: FlowPlan
  /** By flow input name; missing ones take the flow input's default. */
  inputs: Record<string, PortValue>
  runners: FlowRunners
  catalog: FlowCatalog
  /** Without it nothing is predicted from the cache. */
  cache?: {
    flowRuns: FlowRunsRepository
    scope: { profile: string; orgId: string }
    /** Node ids (prefixed inside sub-flows) the run will not take from the cache. */
    forced?: (nodeId: string) => boolean
    /** The flow run being resumed: its own succeeded node runs are taken as they are. */
    flowRunId?: string
  }
  /**
   * Whether a runner that cannot price a model it has not met may load it from the service
   * (`loadModels`) once; default true. The editor's check, which must answer at once, says no.
   */
  loadModels?: boolean
}

/** Thrown as FlowRunError ESTIMATE_FAILED when a node's price cannot be known. */
export async function estimateFlow(options: FlowEstimateOptions): Promise<FlowEstimate> {
  const { flow, inputs } = options
  const plan = options.plan ?? plannedOrNull(flow, options.catalog)
  const byNode: Record<string, number> = {}
  let cachedNodes = 0
  if (plan === null) {
    for (const node of flow.nodes) {
      byNode[node.id] = await priceOf(options, node, documentInputs(flow, node, inputs), 0)
    }
  } else {
    const scope = { flow, plan, inputs, unknown: new Set<string>(), prefix: '', depth: 0 }
    for (const [id, prediction] of await predictScope(options, scope)) {
      byNode[id] = prediction.costMicro
      cachedNodes += prediction.cachedNodes
    }
  }
  const totalMicro = Object.values(byNode).reduce((sum, micro) => sum + micro, 0)
  return { byNode, totalMicro, cachedNodes }
}

/** How deep sub-flows are followed, as the validation allows. */
const MAX_DEPTH = 16

interface Scope {
  flow: FlowDocument
  plan: FlowPlan
  inputs: Record<string, PortValue>
  /** Flow inputs of a sub-flow fed by nodes that will run: their values are not known yet. */
  unknown: ReadonlySet<string>
  prefix: string
  depth: number
}

interface Prediction {
  outcome: 'cached' | 'run' | 'skipped'
  /** The outputs the cache will give (a hit); unknown otherwise. */
  outputs: Record<string, PortValue> | null
  costMicro: number
  cachedNodes: number
}

const SKIPPED: Prediction = { outcome: 'skipped', outputs: null, costMicro: 0, cachedNodes: 0 }

async function predictScope(
  options: FlowEstimateOptions,
  scope: Scope,
): Promise<Map<string, Prediction>> {
  const predictions = new Map<string, Prediction>()
  for (const id of scope.plan.order) {
    const planned = scope.plan.nodes.get(id)
    if (!planned) continue
    const upstream = planned.upstream.map((from) => predictions.get(from))
    if (upstream.some((p) => p?.outcome === 'skipped')) {
      predictions.set(id, SKIPPED)
      continue
    }
    const resolved = resolveInputs(scope, id, predictions)
    if (resolved === null) {
      predictions.set(id, SKIPPED)
      continue
    }
    predictions.set(id, await predictNode(options, scope, planned.node, resolved))
  }
  return predictions
}

/**
 * A node's inputs as the scheduler will resolve them, so far as they are known: `complete` only
 * when every value is (no edge from a node that will run, no flow input that is not known).
 * Null when a hit upstream left the wired output out: the node will be skipped.
 */
function resolveInputs(
  scope: Scope,
  id: string,
  predictions: ReadonlyMap<string, Prediction>,
): { values: Record<string, PortValue>; unknown: Set<string> } | null {
  const values: Record<string, PortValue> = {}
  const unknown = new Set<string>()
  for (const [name, binding] of scope.plan.nodes.get(id)?.inputs ?? []) {
    let value: PortValue
    if (binding.from === 'edge') {
      const outputs = predictions.get(binding.nodeId)?.outputs
      if (!outputs) {
        unknown.add(name)
        continue
      }
      if (!Object.hasOwn(outputs, binding.outputName)) return null
      value = outputs[binding.outputName]
    } else if (binding.from === 'flow_input') {
      if (scope.unknown.has(binding.name)) {
        unknown.add(name)
        continue
      }
      value = flowInputValue(scope, binding.name)
    } else if (binding.from === 'value' || binding.from === 'default') {
      value = binding.value
    } else {
      continue
    }
    if (value !== undefined && value !== null) values[name] = value
  }
  return { values, unknown }
}

async function predictNode(
  options: FlowEstimateOptions,
  scope: Scope,
  node: FlowNode,
  resolved: { values: Record<string, PortValue>; unknown: Set<string> },
): Promise<Prediction> {
  const nodeId = scope.prefix + node.id
  if (node.type_code === 'sub_flow') return predictSubFlow(options, scope, node, nodeId, resolved)

  const cache = options.cache
  if (cache && resolved.unknown.size === 0) {
    const hit = cachedOutputs(options, cache, scope, node, nodeId, resolved.values)
    if (hit) return { outcome: 'cached', outputs: hit, costMicro: 0, cachedNodes: 1 }
  }
  const costMicro = await priceOf(options, node, resolved.values, scope.depth)
  return { outcome: 'run', outputs: null, costMicro, cachedNodes: 0 }
}

/** The outputs the scheduler will take instead of running the node; null when it will run. */
function cachedOutputs(
  options: FlowEstimateOptions,
  cache: NonNullable<FlowEstimateOptions['cache']>,
  scope: Scope,
  node: FlowNode,
  nodeId: string,
  values: Record<string, PortValue>,
): Record<string, PortValue> | null {
  // A resumed flow run takes what already succeeded in it before anything else, forced or not.
  if (cache.flowRunId) {
    const own = cache.flowRuns.node(cache.flowRunId, nodeId, 1)
    if (own && (own.state === 'succeeded' || own.state === 'cached') && own.outputs) {
      return own.outputs
    }
  }
  if (cache.forced?.(nodeId)) return null
  const version = targetVersionOf(node, options.catalog) ?? 'unknown'
  // The run id only decides the drawn seeds' values, which the key leaves out.
  const run = { flowRunId: '', nodeId, attempt: 1 }
  const { keyed } = drawSeeds(scope.plan.nodes.get(node.id), values, options.catalog, run)
  const hit = cache.flowRuns.cached(cache.scope, nodeCacheKey(node, keyed, version))
  return hit ? hit.outputs : null
}

async function predictSubFlow(
  options: FlowEstimateOptions,
  scope: Scope,
  node: FlowNode,
  nodeId: string,
  resolved: { values: Record<string, PortValue>; unknown: Set<string> },
): Promise<Prediction> {
  const sub = options.catalog.flow(node.sub_flow_id ?? '') as FlowDocument | undefined
  const planned = sub && scope.depth < MAX_DEPTH ? planFlow(sub, options.catalog) : null
  if (!sub || !planned?.ok) {
    throw estimateFailed(node, new Error('its sub-flow is not known here or cannot run'))
  }
  const inner = await predictScope(options, {
    flow: sub,
    plan: planned.plan,
    inputs: resolved.values,
    unknown: resolved.unknown,
    prefix: `${nodeId}/`,
    depth: scope.depth + 1,
  })
  const all = [...inner.values()]
  const costMicro = all.reduce((sum, p) => sum + p.costMicro, 0)
  const cachedNodes = all.reduce((sum, p) => sum + p.cachedNodes, 0)
  if (all.some((p) => p.outcome === 'run')) {
    return { outcome: 'run', outputs: null, costMicro, cachedNodes }
  }
  // Every inner node a hit (or skipped): the sub-flow's outputs are known too.
  const outputs: Record<string, PortValue> = {}
  for (const output of planned.plan.flowOutputs) {
    const source = inner.get(output.nodeId)?.outputs
    if (source && Object.hasOwn(source, output.outputName)) {
      outputs[output.name] = source[output.outputName]
    }
  }
  return { outcome: 'cached', outputs, costMicro, cachedNodes }
}

/**
 * A node's price by its runner. A runner that cannot price a model it has not met is given the
 * chance to load it (`loadModels`) once, unless the caller must answer at once.
 */
async function priceOf(
  options: FlowEstimateOptions,
  node: FlowNode,
  known: Record<string, PortValue>,
  depth: number,
): Promise<number> {
  if (node.type_code === 'sub_flow') {
    // Only reached for a flow that does not plan: its sub-flows are priced the same way.
    const sub = options.catalog.flow(node.sub_flow_id ?? '') as FlowDocument | undefined
    if (!sub || depth >= MAX_DEPTH || !Array.isArray(sub.nodes)) {
      throw estimateFailed(node, new Error('its sub-flow is not known here'))
    }
    let sum = 0
    for (const inner of sub.nodes) {
      sum += await priceOf(options, inner, documentInputs(sub, inner, known), depth + 1)
    }
    return sum
  }
  const runner = runnerFor(options.runners, node)
  if (!runner?.estimate) return 0
  try {
    return runner.estimate(node, known)
  } catch (first) {
    const loader = (runner as { loadModels?: (nodes: FlowNode[]) => Promise<void> }).loadModels
    if (options.loadModels === false || typeof loader !== 'function') {
      throw estimateFailed(node, first)
    }
    try {
      await loader.call(runner, [node])
      return runner.estimate(node, known)
    } catch (second) {
      throw estimateFailed(node, second)
    }
  }
}

function plannedOrNull(flow: FlowDocument, catalog: FlowCatalog): FlowPlan | null {
  const planned = planFlow(flow, catalog)
  return planned.ok ? planned.plan : null
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What a node of a flow that does not plan says of its own inputs: its values and defaults, and
 * the flow inputs it maps (given, or their defaults). Edges are not known before a run.
 */
function documentInputs(
  flow: FlowDocument,
  node: FlowNode,
  inputs: Record<string, PortValue>,
): Record<string, PortValue> {
  const mapped = isRecord(node.config.flow_inputs) ? node.config.flow_inputs : {}
  const known: Record<string, PortValue> = {}
  for (const input of node.inputs) {
    if (input.source_output_id !== null) continue
    const flowInput = mapped[input.name]
    let value: unknown
    if (typeof flowInput === 'string') {
      value = inputs[flowInput] ?? flow.inputs.find((i) => i.name === flowInput)?.default_value
    } else {
      value = input.value ?? input.default_value
    }
    if (value !== undefined && value !== null) known[input.name] = value
  }
  return known
}

function estimateFailed(node: FlowNode, cause: unknown): FlowRunError {
  return new FlowRunError(
    'ESTIMATE_FAILED',
    `The cost of node ${JSON.stringify(node.label)} cannot be estimated: ${cause instanceof Error ? cause.message : String(cause)}`,
    { cause },
  )
}

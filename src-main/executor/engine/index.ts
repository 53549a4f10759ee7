import { randomUUID } from 'node:crypto'
import type { FlowProblem } from '../../../src-shared/domain/flow'
import type {
  FailurePolicy,
  FlowRunEvent,
  FlowRunState,
  FlowRunTotals,
  NodeRunError,
  NodeRunRecord,
} from '../../../src-shared/domain/flow-run'
import type { Ledger } from '../../db'
import { isServiceError, type ServiceClient } from '../../service'
import type { OnlineCatalog } from '../catalog-online'
import type { FlowDocument, PortValue } from '../types'
import { checkFlowInputs, planFlow, type FlowCatalog } from '../validate'
import { credits, FlowRunError } from './errors'
import { estimateFlow } from './estimate'
import { Scheduler, type FlowRunners } from './scheduler'

/**
 * The scheduler: runs a flow on this machine, node by node, with the runners of `remote/` and
 * `builtins/`, and keeps a record of it in the ledger. Decisions, and why:
 *
 * - Nothing is dispatched before the whole flow is known good: the catalog is completed from
 *   the service first (when it is an `OnlineCatalog`), then every validation problem and every
 *   problem of the given inputs is reported at once (FLOW_INVALID with `problems`), then the
 *   estimate (`estimateFlow`: each node's runner's `estimate`, 0 for a node the cache will
 *   answer) is checked against GET /v1/billing/balance (INSUFFICIENT_CREDIT, naming both). A balance that cannot be read because the service is out of reach does not
 *   refuse: a flow whose nodes are all cached needs no service.
 * - Scheduling: every node whose upstream nodes have all settled starts, within a global limit
 *   and a per-model limit (a model slot is taken before a global one, always in that order, so
 *   they cannot deadlock). When slots are short, the waiting node with the longest chain of
 *   work behind it goes first (remote nodes weigh 1, built-ins 0.1): the critical path is not
 *   held up by a wide fan of short branches. Built-ins that only use this machine take one of
 *   its own slots (as many as it has cores) instead of a global one; evaluate and save to
 *   assets call the service and take global slots.
 * - Inputs: edges, flow inputs (then their defaults), values, defaults. A node fed by an output
 *   its source left out (a branch not taken) or by a skipped node is `skipped`, as the service
 *   does; a node downstream of a failure is `skipped` as `upstream-failed`.
 * - Failures: `finish-independent` lets every branch that does not depend on the failure finish;
 *   `fail-fast` stops scheduling and cancels what runs (the runners cancel remote runs). The
 *   caller's signal does the same, and the flow run ends `canceled`.
 * - Quality gates: an evaluate node that is the source of a retry edge and outputs `passed:
 *   false` sends the plan's loop (the node the retry feeds, the gate, all between) around again
 *   with attempt + 1, the retry edges' values taking the place of those inputs, up to the gate's
 *   max_attempts; the gate is told the previous attempt's evaluation (`parent_evaluation_id`)
 *   and the model run that made its image (`run_id`). When no attempt is left the gate fails
 *   (QUALITY_GATE_FAILED) and what depends on it does not run.
 * - Cache: a node's `nodeCacheKey` (kind, target and version, resolved inputs with media by
 *   sha256, config) that matches a succeeded node run of the same profile and organization
 *   gives its outputs without a dispatch (`cached`). `force` names nodes to run anyway, with
 *   everything downstream of them. Sub-flow nodes are not cached themselves: their inner nodes
 *   are, which gives the same result.
 * - The ledger keeps the flow run (`flow_runs`) and every node run (`node_runs`, written when
 *   it starts and when it ends). Running again under the same `flowRunId` resumes it: node runs
 *   that succeeded in it are taken as they are, the others run again, and the remote runner
 *   re-attaches to its intents instead of dispatching twice.
 * - Sub-flows run inside the same flow run and the same limits, their node ids prefixed
 *   `<sub-flow node id>/`; the sub-flow node's outputs are the sub-flow's flow outputs.
 */

export interface RunFlowOptions {
  flow: FlowDocument
  /** By flow input name. A resumed flow run given none takes the ones it was started with. */
  inputs?: Record<string, PortValue>
  runners: FlowRunners
  /** An `OnlineCatalog` is completed from the service before validation. */
  catalog: FlowCatalog | OnlineCatalog
  ledger: Ledger
  /** For the balance; without it the estimate is not checked. */
  client?: ServiceClient | null
  profile: string
  orgId: string
  /** Node runs at once, over the whole flow run; default 8. */
  concurrency?: number
  /** Node runs of one model at once; default the global limit. */
  perModelConcurrency?: number
  failurePolicy?: FailurePolicy
  /** Node ids to run again even when cached (what depends on them runs again too). */
  force?: readonly string[]
  /**
   * Seeds to send for seed inputs on the dice instead of drawing them, by node id then input
   * name: a re-run from a picture's record makes the same picture (see `drawSeeds`).
   */
  seeds?: Readonly<Record<string, Record<string, number>>>
  /** An earlier flow run's id: resumes it. */
  flowRunId?: string
  signal?: AbortSignal
  onEvent?: (event: FlowRunEvent) => void
  clock?: () => number
}

export interface FlowRunResult {
  flowRunId: string
  state: Exclude<FlowRunState, 'running'>
  resumed: boolean
  totals: FlowRunTotals
  /** By node id (top-level nodes), what the estimate expected each to cost. */
  estimateByNode: Record<string, number>
  /** How many nodes the estimate expected the cache to answer. */
  estimateCachedNodes: number
  /** By flow output name. */
  outputs: Record<string, PortValue>
  /** The first failure, when the flow run failed. */
  error: NodeRunError | null
  nodes: NodeRunRecord[]
}

export const DEFAULT_CONCURRENCY = 8

const isOnline = (catalog: FlowCatalog | OnlineCatalog): catalog is OnlineCatalog =>
  'complete' in catalog && typeof catalog.complete === 'function'

export async function runFlow(options: RunFlowOptions): Promise<FlowRunResult> {
  const { flow, ledger, profile, orgId } = options
  const signal = options.signal ?? new AbortController().signal
  const clock = options.clock ?? Date.now
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const perModelConcurrency = options.perModelConcurrency ?? concurrency
  const scope = { profile, orgId }

  let catalog: FlowCatalog
  if (isOnline(options.catalog)) {
    await options.catalog.complete(flow, signal)
    catalog = options.catalog.catalog
  } else {
    catalog = options.catalog
  }

  const previous = options.flowRunId ? ledger.flowRuns.get(options.flowRunId) : null
  if (previous && (previous.profile !== profile || previous.orgId !== orgId)) {
    throw new FlowRunError(
      'FLOW_RUN_CONFLICT',
      `The flow run ${previous.id} belongs to another profile or organization; resume it with that profile.`,
    )
  }
  if (previous && previous.flowId !== flow.id) {
    throw new FlowRunError(
      'FLOW_RUN_CONFLICT',
      `The flow run ${previous.id} ran the flow ${previous.flowId}, not ${flow.id}; resume it with the same flow.`,
    )
  }
  const inputs =
    options.inputs && Object.keys(options.inputs).length > 0
      ? options.inputs
      : (previous?.inputs ?? options.inputs ?? {})

  const planned = planFlow(flow, catalog)
  const problems: FlowProblem[] = [
    ...(planned.ok ? [] : planned.problems),
    ...checkFlowInputs(flow, inputs),
  ]
  for (const id of options.force ?? []) {
    if (!flow.nodes.some((node) => node.id === id || node.slug === id)) {
      problems.push({
        code: 'INVALID_CONFIG',
        message: `--force names ${JSON.stringify(id)}, which is no node of this flow (give a node id or slug).`,
        path: 'force',
      })
    }
  }
  if (!planned.ok || problems.length > 0) {
    throw new FlowRunError(
      'FLOW_INVALID',
      `The flow cannot run: ${problems.length} problem(s) to fix first.`,
      { problems },
    )
  }
  const plan = planned.plan

  const forcedIds = (options.force ?? []).map(
    (ref) => flow.nodes.find((node) => node.id === ref || node.slug === ref)?.id ?? ref,
  )
  const forced = new Set<string>()
  for (const id of plan.downstreamOf(forcedIds)) forced.add(id)
  // Inside a forced sub-flow node, every inner node runs again too.
  const forcedPrefixes = [...forced].map((id) => `${id}/`)
  const isForced = (id: string) =>
    forced.has(id) || forcedPrefixes.some((prefix) => id.startsWith(prefix))

  const estimated = await estimateFlow({
    flow,
    plan,
    inputs,
    runners: options.runners,
    catalog,
    cache: {
      flowRuns: ledger.flowRuns,
      scope,
      forced: isForced,
      ...(previous ? { flowRunId: previous.id } : {}),
    },
  })
  const estimateByNode = estimated.byNode
  const estimateMicro = estimated.totalMicro
  if (estimateMicro > 0 && options.client) {
    const balanceMicro = await balanceOf(options.client, orgId, signal)
    if (balanceMicro !== null && balanceMicro < estimateMicro) {
      throw new FlowRunError(
        'INSUFFICIENT_CREDIT',
        `This flow run is estimated to cost ${credits(estimateMicro)} credits, but the balance is ${credits(balanceMicro)} credits; nothing was started. Add credit, or run fewer or cheaper nodes.`,
        { estimateMicro, balanceMicro },
      )
    }
  }

  const flowRunId = options.flowRunId ?? randomUUID()
  const emit = (event: FlowRunEvent) => {
    options.onEvent?.(event)
  }
  const scheduler = new Scheduler({
    flowRunId,
    runners: options.runners,
    catalog,
    flowRuns: ledger.flowRuns,
    scope,
    concurrency,
    perModelConcurrency,
    failurePolicy: options.failurePolicy ?? 'finish-independent',
    forced: isForced,
    ...(options.seeds ? { seeds: options.seeds } : {}),
    signal,
    emit,
    clock,
  })
  scheduler.totals.estimateMicro = estimateMicro

  const { resumed } = ledger.flowRuns.start({
    id: flowRunId,
    profile,
    orgId,
    flowId: flow.id,
    flowVersion: flow.version,
    inputs,
    totals: scheduler.totals,
    document: flow as unknown as Record<string, unknown>,
  })
  emit({
    type: 'flow-started',
    flowRunId,
    flowId: flow.id,
    resumed,
    estimateMicro,
    estimateByNode,
    cachedNodes: estimated.cachedNodes,
  })

  let state: Exclude<FlowRunState, 'running'> = 'failed'
  let outputs: Record<string, PortValue> = {}
  let error: NodeRunError | null = null
  try {
    const states = await scheduler.runScope({ flow, plan, inputs, prefix: '' })
    for (const output of plan.flowOutputs) {
      const node = states.get(output.nodeId)
      if (node?.status === 'done' && Object.hasOwn(node.outputs, output.outputName)) {
        outputs[output.name] = node.outputs[output.outputName]
      }
    }
    error = scheduler.failure
    state = scheduler.canceledByUser ? 'canceled' : error ? 'failed' : 'succeeded'
    if (state === 'canceled') outputs = {}
  } catch (caught) {
    error = {
      code: 'SCHEDULER_FAILED',
      message: caught instanceof Error ? caught.message : String(caught),
    }
    state = 'failed'
  } finally {
    ledger.flowRuns.finish(flowRunId, state, scheduler.totals, error)
  }
  const totals = { ...scheduler.totals }
  emit({ type: 'flow-finished', flowRunId, state, totals, outputs })
  return {
    flowRunId,
    state,
    resumed,
    totals,
    estimateByNode,
    estimateCachedNodes: estimated.cachedNodes,
    outputs,
    error,
    nodes: ledger.flowRuns.nodes(flowRunId),
  }
}

/** The balance in micro-credits; null when the service cannot be reached. */
async function balanceOf(
  client: ServiceClient,
  orgId: string,
  signal: AbortSignal,
): Promise<number | null> {
  try {
    const balance = await client.get('/v1/billing/balance', {
      headers: { 'X-Organization-Id': orgId },
      signal,
    })
    const value = Number(balance.balance)
    return Number.isFinite(value) ? Math.round(value * 1_000_000) : null
  } catch (error) {
    if (isServiceError(error) && error.status === 0) return null
    throw error
  }
}

export { credits, FlowRunError, isFlowRunError, type FlowRunErrorCode } from './errors'
export { runnerFor, type FlowRunners } from './scheduler'

import { availableParallelism } from 'node:os'
import type { FlowNode } from '../../../src-shared/api'
import type {
  FailurePolicy,
  FlowRunEvent,
  FlowRunTotals,
  NodeRunError,
  NodeRunRecord,
} from '../../../src-shared/domain/flow-run'
import type { FlowRunsRepository } from '../../db/repositories/flow-runs'
import type { FlowDocument, NodeEvent, NodeOutcome, NodeRunner, PortValue } from '../types'
import {
  nodeCacheKey,
  planFlow,
  targetVersionOf,
  type FlowCatalog,
  type FlowPlan,
  type PlannedNode,
  type RetryPlan,
} from '../validate'
import { Limiter } from '../../limiter'
import { drawnSeedMessage } from '../../../src-shared/domain/flow'
import { drawSeeds, seedsSent } from './seeds'

/** The runner for each kind of node; sub-flows are run by the scheduler itself. */
export interface FlowRunners {
  model?: NodeRunner
  builtin?: NodeRunner
  wfengine_workflow?: NodeRunner
}

/** The runner of a node's kind; none for a sub-flow (the scheduler runs its graph itself). */
export function runnerFor(runners: FlowRunners, node: FlowNode): NodeRunner | undefined {
  switch (node.type_code) {
    case 'model':
      return runners.model
    case 'builtin':
      return runners.builtin
    case 'wfengine_workflow':
      return runners.wfengine_workflow
    default:
      return undefined
  }
}

export interface SchedulerOptions {
  flowRunId: string
  runners: FlowRunners
  catalog: FlowCatalog
  flowRuns: FlowRunsRepository
  scope: { profile: string; orgId: string }
  concurrency: number
  perModelConcurrency: number
  failurePolicy: FailurePolicy
  /** Node ids (prefixed inside sub-flows) that must not take their outputs from the cache. */
  forced: (nodeId: string) => boolean
  /** Seeds to send instead of drawing them, by node id then input name (see `drawSeeds`). */
  seeds?: Readonly<Record<string, Record<string, number>>>
  signal: AbortSignal
  emit: (event: FlowRunEvent) => void
  clock: () => number
}

type Status = 'pending' | 'running' | 'done' | 'skipped' | 'failed' | 'canceled'

interface NodeState {
  status: Status
  attempt: number
  outputs: Record<string, PortValue>
  costMicro: number
  remoteRunId?: string
  batchId?: string
  /** Skipped because something it needs failed (not a branch not taken). */
  upstreamFailed?: boolean
}

interface Scope {
  flow: FlowDocument
  plan: FlowPlan
  inputs: Record<string, PortValue>
  /** `''` for the flow itself, `<sub-flow node id>/` (nested) inside a sub-flow. */
  prefix: string
}

type Finished =
  | { status: 'done'; outcome: NodeOutcome }
  | { status: 'failed'; error: NodeRunError }
  | { status: 'canceled' }

const CANCEL_CODES = new Set(['CANCELED', 'ABORTED'])

/** Built-ins that call the service: they hold global slots like model nodes. */
const SERVICE_BUILTINS = new Set(['evaluate', 'save_to_assets'])

/**
 * Built-ins that run on this machine alone (text, templates, image resize…) take a slot of the
 * machine's own, not one of the global slots: those bound the work sent to the service, which a
 * template filled in a millisecond should not hold back.
 */
const isLocalWork = (node: FlowNode): boolean =>
  node.type_code === 'builtin' && !SERVICE_BUILTINS.has(node.builtin_node_code ?? '')

/**
 * A node's weight in the chains that rank waiting nodes: remote work counts 1, a local built-in
 * a tenth (it takes milliseconds, but still breaks ties between otherwise equal chains).
 */
const slotWeight = (node: FlowNode): number => (node.type_code === 'builtin' ? 0.1 : 1)

const isSettled = (state: NodeState | undefined) =>
  state !== undefined && state.status !== 'pending' && state.status !== 'running'

const hasGraph = (flow: unknown): flow is FlowDocument => {
  const f = flow as Partial<FlowDocument> | undefined
  return !!f && Array.isArray(f.nodes) && Array.isArray(f.inputs) && Array.isArray(f.outputs)
}

function errorOf(error: unknown): NodeRunError {
  const code = (error as { code?: unknown } | null)?.code
  return {
    code: typeof code === 'string' ? code : 'NODE_FAILED',
    message: error instanceof Error ? error.message : String(error),
  }
}

/**
 * One flow run's scheduling: every node whose inputs are ready starts, within the global and
 * per-model limits; outcomes go to the ledger as they come. See `index.ts` for the rules.
 */
export class Scheduler {
  readonly totals: FlowRunTotals = {
    nodes: 0,
    dispatched: 0,
    cached: 0,
    skipped: 0,
    failed: 0,
    canceled: 0,
    estimateMicro: 0,
    costMicro: 0,
  }
  /** Set once the flow run stops scheduling: a cancel, or a failure under fail-fast. */
  private stopped = false
  private readonly stopper = new AbortController()
  private readonly signal: AbortSignal
  private readonly global: Limiter
  /** Built-ins that only use this machine: as many at once as it has cores (see isLocalWork). */
  private readonly local: Limiter
  private readonly perModel = new Map<string, Limiter>()
  /** By scope, then node id: how much of the graph waits behind the node (see slotWeight). */
  private readonly priorities = new WeakMap<Scope, Map<string, number>>()
  private firstFailure: NodeRunError | null = null

  constructor(private readonly options: SchedulerOptions) {
    this.global = new Limiter(options.concurrency)
    this.local = new Limiter(Math.max(2, availableParallelism()))
    this.signal = AbortSignal.any([options.signal, this.stopper.signal])
    const onCancel = () => {
      this.stop()
    }
    if (options.signal.aborted) this.stop()
    else options.signal.addEventListener('abort', onCancel, { once: true })
  }

  get canceledByUser(): boolean {
    return this.options.signal.aborted
  }

  get failure(): NodeRunError | null {
    return this.firstFailure
  }

  private stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.stopper.abort(new Error('The flow run was stopped.'))
  }

  /** Runs a graph (the flow, or a sub-flow) to its end; resolves with every node's state. */
  runScope(scope: Scope): Promise<Map<string, NodeState>> {
    const { plan } = scope
    this.priorities.set(scope, plan.tailLengths(slotWeight))
    this.totals.nodes += plan.order.length
    const states = new Map<string, NodeState>(
      plan.order.map((id) => [id, { status: 'pending', attempt: 1, outputs: {}, costMicro: 0 }]),
    )
    const retriesOf = new Map<string, RetryPlan[]>()
    for (const retry of plan.retries) {
      retriesOf.set(retry.gateNodeId, [...(retriesOf.get(retry.gateNodeId) ?? []), retry])
    }
    /** By node id: the values retry edges bring on the next attempt, by input name. */
    const overrides = new Map<string, Record<string, PortValue>>()
    /** By gate node id: the evaluation of its previous attempt. */
    const previousEvaluation = new Map<string, string>()
    let running = 0

    return new Promise((resolve) => {
      const settle = (id: string, state: NodeState, finished: Finished) => {
        running--
        if (finished.status === 'done') {
          state.outputs = finished.outcome.outputs
          state.costMicro = finished.outcome.costMicro
          if (finished.outcome.remoteRunId) state.remoteRunId = finished.outcome.remoteRunId
          if (finished.outcome.batchId) state.batchId = finished.outcome.batchId
          state.status = 'done'
          const gates = retriesOf.get(id)
          if (gates && finished.outcome.outputs.passed === false) {
            this.gateFailed(scope, id, state, gates, states, overrides, previousEvaluation)
          }
        } else if (finished.status === 'failed') {
          state.status = 'failed'
          this.nodeFailed(finished.error)
        } else {
          state.status = 'canceled'
          this.totals.canceled++
        }
        pump()
      }

      const pump = () => {
        let open = false
        for (const id of plan.order) {
          const state = states.get(id) as NodeState
          if (state.status === 'running') {
            open = true
            continue
          }
          if (state.status !== 'pending') continue
          if (this.stopped) {
            state.status = 'canceled'
            this.totals.canceled++
            this.emitNode(scope, id, state, { type: 'node-canceled' })
            this.saveSettled(scope, id, state, 'canceled')
            continue
          }
          const planned = plan.nodes.get(id)
          if (!planned) continue
          const upstream = planned.upstream.map((from) => states.get(from))
          if (!upstream.every(isSettled)) {
            open = true
            continue
          }
          const failed = upstream.some(
            (s) => s?.status === 'failed' || s?.status === 'canceled' || s?.upstreamFailed,
          )
          const resolved = failed ? null : this.resolveInputs(scope, id, state, states, overrides)
          if (failed || resolved === null || upstream.some((s) => s?.status === 'skipped')) {
            state.status = 'skipped'
            state.upstreamFailed = failed
            this.totals.skipped++
            this.emitNode(scope, id, state, {
              type: 'node-skipped',
              reason: failed ? 'upstream-failed' : 'branch-not-taken',
            })
            this.saveSettled(scope, id, state, 'skipped')
            continue
          }
          state.status = 'running'
          running++
          open = true
          const injected = this.injected(planned, resolved, state, states, previousEvaluation)
          void this.execute(scope, planned.node, state, resolved, injected).then((finished) => {
            settle(id, state, finished)
          })
        }
        if (!open && running === 0) resolve(states)
      }
      pump()
    })
  }

  private nodeFailed(error: NodeRunError): void {
    this.totals.failed++
    this.firstFailure ??= error
    if (this.options.failurePolicy === 'fail-fast') this.stop()
  }

  /**
   * A quality gate said no: the loop runs again with the gate's outputs on its retry edges, or,
   * with no attempt left, the gate fails and what depends on it does not run.
   */
  private gateFailed(
    scope: Scope,
    gateId: string,
    gate: NodeState,
    retries: readonly RetryPlan[],
    states: Map<string, NodeState>,
    overrides: Map<string, Record<string, PortValue>>,
    previousEvaluation: Map<string, string>,
  ): void {
    const maxAttempts = Math.max(...retries.map((retry) => retry.maxAttempts))
    if (gate.attempt >= maxAttempts || this.stopped) {
      gate.status = 'failed'
      const error = {
        code: 'QUALITY_GATE_FAILED',
        message: `The quality gate failed on all ${gate.attempt} attempt(s) it allows; raise max_attempts or lower the score it needs.`,
      }
      this.emitNode(scope, gateId, gate, { type: 'node-failed', error })
      this.nodeFailed(error)
      return
    }
    const evaluationId = gate.outputs.evaluation_id
    if (typeof evaluationId === 'string') previousEvaluation.set(gateId, evaluationId)
    for (const retry of retries) {
      overrides.set(retry.nodeId, {
        ...overrides.get(retry.nodeId),
        [retry.inputName]: gate.outputs[retry.gateOutputName],
      })
    }
    const loop = new Set(retries.flatMap((retry) => retry.loop))
    this.emitNode(scope, gateId, gate, {
      type: 'node-log',
      level: 'warning',
      message: `The quality gate failed attempt ${gate.attempt} of ${maxAttempts}: running ${loop.size} node(s) again.`,
    })
    for (const id of loop) {
      const state = states.get(id)
      if (!state) continue
      state.status = 'pending'
      state.attempt++
      state.outputs = {}
      state.costMicro = 0
      delete state.remoteRunId
      delete state.batchId
    }
  }

  /** A node's inputs from edges, flow inputs, values and defaults; null when an edge is empty. */
  private resolveInputs(
    scope: Scope,
    id: string,
    state: NodeState,
    states: Map<string, NodeState>,
    overrides: Map<string, Record<string, PortValue>>,
  ): Record<string, PortValue> | null {
    const planned = scope.plan.nodes.get(id)
    if (!planned) return null
    const retried = state.attempt > 1 ? overrides.get(id) : undefined
    const inputs: Record<string, PortValue> = {}
    for (const [name, binding] of planned.inputs) {
      let value: PortValue
      if (retried && Object.hasOwn(retried, name)) {
        value = retried[name]
      } else if (binding.from === 'edge') {
        const source = states.get(binding.nodeId)
        // A branch not taken leaves its output out: what it feeds has nothing to run on.
        if (!source || !Object.hasOwn(source.outputs, binding.outputName)) return null
        value = source.outputs[binding.outputName]
      } else if (binding.from === 'flow_input') {
        value = flowInputValue(scope, binding.name)
      } else if (binding.from === 'value' || binding.from === 'default') {
        value = binding.value
      } else {
        continue
      }
      if (value !== undefined && value !== null) inputs[name] = value
    }
    return inputs
  }

  /**
   * What an evaluate node is told beyond its wiring: the model run that made its image
   * (`run_id`) and, on a retry, the evaluation it re-judges (`parent_evaluation_id`). Kept out
   * of the cache key: they name where the work came from, not what it is.
   */
  private injected(
    planned: PlannedNode,
    inputs: Record<string, PortValue>,
    state: NodeState,
    states: Map<string, NodeState>,
    previousEvaluation: Map<string, string>,
  ): Record<string, PortValue> {
    const { node } = planned
    if (node.type_code !== 'builtin' || node.builtin_node_code !== 'evaluate') return {}
    const extra: Record<string, PortValue> = {}
    const image = planned.inputs.get('image')
    if (inputs.run_id === undefined && image?.from === 'edge') {
      const source = states.get(image.nodeId)
      if (source?.remoteRunId && !source.batchId) extra.run_id = source.remoteRunId
    }
    const parent = previousEvaluation.get(node.id)
    if (state.attempt > 1 && parent && inputs.parent_evaluation_id === undefined) {
      extra.parent_evaluation_id = parent
    }
    return extra
  }

  private async execute(
    scope: Scope,
    node: FlowNode,
    state: NodeState,
    inputs: Record<string, PortValue>,
    injected: Record<string, PortValue>,
  ): Promise<Finished> {
    const { flowRunId, flowRuns } = this.options
    const nodeId = scope.prefix + node.id
    const attempt = state.attempt
    const queuedMs = this.options.clock()
    this.emitNode(scope, node.id, state, { type: 'node-queued' })
    if (node.type_code === 'sub_flow') return this.runSubFlow(scope, node, state, inputs, queuedMs)

    const version = targetVersionOf(node, this.options.catalog) ?? 'unknown'
    const planned = scope.plan.nodes.get(node.id)
    const run = { flowRunId, nodeId, attempt }
    const { keyed, drawn } = drawSeeds(
      planned,
      inputs,
      this.options.catalog,
      run,
      this.options.seeds?.[nodeId],
    )
    // A gate's later attempts are other work than its first, even on the same inputs: a retry
    // that found the first attempt's outputs in the cache could never change the verdict.
    const cacheKey = nodeCacheKey(
      node,
      attempt > 1 ? { ...keyed, '#attempt': attempt } : keyed,
      version,
    )
    const record = (fields: Partial<NodeRunRecord>): NodeRunRecord => ({
      flowRunId,
      nodeId,
      attempt,
      cacheKey,
      state: 'queued',
      outputs: null,
      costMicro: 0,
      remoteRunId: null,
      batchId: null,
      cachedFrom: null,
      error: null,
      queuedMs,
      startedMs: null,
      endedMs: null,
      ...fields,
    })

    // A resumed flow run: what already succeeded in it is not run again.
    const own = flowRuns.node(flowRunId, nodeId, attempt)
    if (own && (own.state === 'succeeded' || own.state === 'cached') && own.outputs) {
      return this.fromCache(scope, node, state, own.outputs, own.cachedFrom ?? flowRunId, {
        remoteRunId: own.remoteRunId,
        batchId: own.batchId,
      })
    }
    if (!this.options.forced(nodeId)) {
      const hit = flowRuns.cached(this.options.scope, cacheKey)
      if (hit) {
        flowRuns.saveNode(
          record({
            state: 'cached',
            outputs: hit.outputs,
            cachedFrom: hit.flowRunId,
            endedMs: this.options.clock(),
          }),
        )
        // The outputs were made with the seeds of the node run they come from: those are this
        // node run's seeds too, for the record of what it hands on.
        const origin = flowRuns.sent(hit.flowRunId, hit.nodeId, hit.attempt)
        const cachedSent = { ...keyed, ...origin?.seeds }
        flowRuns.saveSent(flowRunId, nodeId, attempt, {
          inputs: cachedSent,
          seeds: seedsSent(planned, cachedSent, this.options.catalog),
        })
        return this.fromCache(scope, node, state, hit.outputs, hit.flowRunId, {})
      }
    }

    const runner = runnerFor(this.options.runners, node)
    if (!runner) {
      const error = {
        code: 'RUNNER_MISSING',
        message: `Nothing here can run nodes of type ${node.type_code} (node ${JSON.stringify(node.label)}).`,
      }
      flowRuns.saveNode(record({ state: 'failed', error, endedMs: this.options.clock() }))
      this.emitNode(scope, node.id, state, { type: 'node-failed', error })
      return { status: 'failed', error }
    }

    const releases: (() => void)[] = []
    try {
      const priority = this.priorities.get(scope)?.get(node.id) ?? 0
      if (node.type_code === 'model' && node.model_id) {
        releases.push(await this.modelLimiter(node.model_id).acquire(this.signal, priority))
      }
      const slots = isLocalWork(node) ? this.local : this.global
      releases.push(await slots.acquire(this.signal, priority))
    } catch {
      for (const release of releases) release()
      this.emitNode(scope, node.id, state, { type: 'node-canceled' })
      flowRuns.saveNode(record({ state: 'canceled', endedMs: this.options.clock() }))
      return { status: 'canceled' }
    }

    const startedMs = this.options.clock()
    flowRuns.saveNode(record({ state: 'running', startedMs }))
    const sent = { ...keyed, ...drawn }
    flowRuns.saveSent(flowRunId, nodeId, attempt, {
      inputs: sent,
      seeds: seedsSent(planned, sent, this.options.catalog),
    })
    this.totals.dispatched++
    this.emitNode(scope, node.id, state, { type: 'node-running' })
    for (const [name, seed] of Object.entries(drawn)) {
      this.emitNode(scope, node.id, state, {
        type: 'node-log',
        level: 'info',
        message: drawnSeedMessage(name, seed),
      })
    }
    try {
      const outcome = await runner.run({
        flowRunId,
        node: scope.prefix === '' ? node : { ...node, id: nodeId },
        inputs: { ...sent, ...injected },
        attempt,
        signal: this.signal,
        emit: (event) => {
          this.nodeEvent(scope, node.id, state, event)
        },
      })
      this.totals.costMicro += outcome.costMicro
      flowRuns.saveNode(
        record({
          state: 'succeeded',
          outputs: outcome.outputs,
          costMicro: outcome.costMicro,
          remoteRunId: outcome.remoteRunId ?? null,
          batchId: outcome.batchId ?? null,
          startedMs,
          endedMs: this.options.clock(),
        }),
      )
      this.emitNode(scope, node.id, state, {
        type: 'node-succeeded',
        outputs: outcome.outputs,
        costMicro: outcome.costMicro,
        ...(outcome.remoteRunId ? { remoteRunId: outcome.remoteRunId } : {}),
        ...(outcome.batchId ? { batchId: outcome.batchId } : {}),
      })
      return { status: 'done', outcome }
    } catch (caught) {
      const error = errorOf(caught)
      const canceled = this.signal.aborted && (CANCEL_CODES.has(error.code) || this.stopped)
      flowRuns.saveNode(
        record({
          state: canceled ? 'canceled' : 'failed',
          error: canceled ? null : error,
          startedMs,
          endedMs: this.options.clock(),
        }),
      )
      if (canceled) {
        this.emitNode(scope, node.id, state, { type: 'node-canceled' })
        return { status: 'canceled' }
      }
      this.emitNode(scope, node.id, state, { type: 'node-failed', error })
      return { status: 'failed', error }
    } finally {
      for (const release of releases.reverse()) release()
    }
  }

  private fromCache(
    scope: Scope,
    node: FlowNode,
    state: NodeState,
    outputs: Record<string, unknown>,
    fromFlowRunId: string,
    remote: { remoteRunId?: string | null; batchId?: string | null },
  ): Finished {
    this.totals.cached++
    this.emitNode(scope, node.id, state, { type: 'node-cached', outputs, fromFlowRunId })
    return {
      status: 'done',
      outcome: {
        outputs,
        costMicro: 0,
        ...(remote.remoteRunId ? { remoteRunId: remote.remoteRunId } : {}),
        ...(remote.batchId ? { batchId: remote.batchId } : {}),
      },
    }
  }

  private async runSubFlow(
    scope: Scope,
    node: FlowNode,
    state: NodeState,
    inputs: Record<string, PortValue>,
    queuedMs: number,
  ): Promise<Finished> {
    const nodeId = scope.prefix + node.id
    const base: NodeRunRecord = {
      flowRunId: this.options.flowRunId,
      nodeId,
      attempt: state.attempt,
      cacheKey: null,
      state: 'running',
      outputs: null,
      costMicro: 0,
      remoteRunId: null,
      batchId: null,
      cachedFrom: null,
      error: null,
      queuedMs,
      startedMs: this.options.clock(),
      endedMs: null,
    }
    const fail = (error: NodeRunError): Finished => {
      this.options.flowRuns.saveNode({
        ...base,
        state: 'failed',
        error,
        endedMs: this.options.clock(),
      })
      this.emitNode(scope, node.id, state, { type: 'node-failed', error })
      return { status: 'failed', error }
    }
    const sub = this.options.catalog.flow(node.sub_flow_id ?? '')
    if (!hasGraph(sub)) {
      return fail({
        code: 'SUB_FLOW_UNKNOWN',
        message: `The graph of the sub-flow ${String(node.sub_flow_id)} of node ${JSON.stringify(node.label)} is not known here; sync the flows and run again.`,
      })
    }
    const planned = planFlow(sub, this.options.catalog)
    if (!planned.ok) {
      return fail({
        code: 'SUB_FLOW_INVALID',
        message: `The sub-flow ${JSON.stringify(sub.name)} of node ${JSON.stringify(node.label)} cannot run: ${planned.problems.map((p) => p.message).join(' ')}`,
      })
    }
    this.options.flowRuns.saveNode(base)
    this.emitNode(scope, node.id, state, { type: 'node-running' })
    const states = await this.runScope({
      flow: sub,
      plan: planned.plan,
      inputs,
      prefix: `${nodeId}/`,
    })
    const all = [...states.values()]
    const costMicro = all.reduce((sum, s) => sum + s.costMicro, 0)
    if (all.some((s) => s.status === 'failed' || (s.status === 'skipped' && s.upstreamFailed))) {
      return fail({
        code: 'SUB_FLOW_FAILED',
        message: `A node of the sub-flow ${JSON.stringify(sub.name)} failed.`,
      })
    }
    if (all.some((s) => s.status === 'canceled')) {
      this.options.flowRuns.saveNode({
        ...base,
        state: 'canceled',
        endedMs: this.options.clock(),
      })
      this.emitNode(scope, node.id, state, { type: 'node-canceled' })
      return { status: 'canceled' }
    }
    const outputs: Record<string, PortValue> = {}
    for (const output of planned.plan.flowOutputs) {
      const inner = states.get(output.nodeId)
      if (inner?.status === 'done' && Object.hasOwn(inner.outputs, output.outputName)) {
        outputs[output.name] = inner.outputs[output.outputName]
      }
    }
    this.options.flowRuns.saveNode({
      ...base,
      state: 'succeeded',
      outputs,
      costMicro,
      endedMs: this.options.clock(),
    })
    this.emitNode(scope, node.id, state, { type: 'node-succeeded', outputs, costMicro })
    // The inner nodes counted their own cost already.
    return { status: 'done', outcome: { outputs, costMicro } }
  }

  private modelLimiter(modelId: string): Limiter {
    let limiter = this.perModel.get(modelId)
    if (!limiter) {
      limiter = new Limiter(this.options.perModelConcurrency)
      this.perModel.set(modelId, limiter)
    }
    return limiter
  }

  private saveSettled(scope: Scope, id: string, state: NodeState, settled: 'skipped' | 'canceled') {
    const now = this.options.clock()
    this.options.flowRuns.saveNode({
      flowRunId: this.options.flowRunId,
      nodeId: scope.prefix + id,
      attempt: state.attempt,
      cacheKey: null,
      state: settled,
      outputs: null,
      costMicro: 0,
      remoteRunId: null,
      batchId: null,
      cachedFrom: null,
      error: null,
      queuedMs: null,
      startedMs: null,
      endedMs: now,
    })
  }

  private nodeEvent(scope: Scope, id: string, state: NodeState, event: NodeEvent): void {
    switch (event.type) {
      case 'progress':
        this.emitNode(scope, id, state, {
          type: 'node-progress',
          fraction: event.fraction,
          ...(event.message === undefined ? {} : { message: event.message }),
        })
        return
      case 'log':
        this.emitNode(scope, id, state, {
          type: 'node-log',
          level: event.level,
          message: event.message,
        })
        return
      case 'remote-run':
        this.emitNode(scope, id, state, {
          type: 'node-remote-run',
          runId: event.runId,
          ...(event.batchId === undefined ? {} : { batchId: event.batchId }),
        })
        return
      case 'cost':
        this.emitNode(scope, id, state, { type: 'node-cost', costMicro: event.costMicro })
        return
    }
  }

  private emitNode(
    scope: Scope,
    id: string,
    state: NodeState,
    event: DistributiveOmit<
      Extract<FlowRunEvent, { nodeId: string }>,
      'flowRunId' | 'nodeId' | 'attempt'
    >,
  ): void {
    try {
      this.options.emit({
        ...event,
        flowRunId: this.options.flowRunId,
        nodeId: scope.prefix + id,
        attempt: state.attempt,
      })
    } catch {
      // A listener that throws must not take the flow run down with it.
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/**
 * A flow input's value in a run: the one the run was given, else the input's default. The
 * scheduler and the estimate both resolve flow inputs this way, so they predict the same keys.
 */
export function flowInputValue(
  scope: { inputs: Readonly<Record<string, PortValue>>; flow: FlowDocument },
  name: string,
): PortValue {
  return scope.inputs[name] ?? scope.flow.inputs.find((input) => input.name === name)?.default_value
}

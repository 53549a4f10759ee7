import { performance } from 'node:perf_hooks'
import type { NodeRun, Run, RunLog, RunStatusCode } from '../../../src-shared/api'
import { formatCredits } from '../accounts'
import { isoTime } from '../clock'
import { requireCallbackSecret } from '../deliveries/secrets'
import { SandboxError } from '../errors'
import { microToDecimal, type LogLevelCode, type ModelLog } from '../models'
import type { SandboxServices } from '../services'
import { MonotonicIds } from './ids'
import { fingerprintOf, IdempotencyKeys } from './idempotency'
import { imageFetcher } from './images'
import { modelTargetHandler } from './model-target'
import { presentRun } from './present'
import { RunRecords } from './records'
import {
  isTerminal,
  type DispatchRequest,
  type DispatchResult,
  type NodeWork,
  type RunObserver,
  type RunTarget,
  type RunWork,
  type StoredRun,
  type TargetHandler,
} from './types'

/** The latency (`config.latencyMs`) at which a run takes its model's nominal `workMs`. */
export const NOMINAL_LATENCY_MS = 300
/** Even instant work (a rejected input) spends this nominal time going through the stages. */
export const MIN_WORK_MS = 60
/** Share of a run's time spent queued, then queued + starting; running takes the rest. */
const QUEUED_SHARE = 0.1
const STARTED_SHARE = 0.3
/** Running phases shorter than this get no intermediate progress updates. */
const PROGRESS_TICK_MIN_MS = 40
/** Model work done at once; the rest waits in the queue as on a real service. */
const DEFAULT_WORK_SLOTS = 8
const IDEMPOTENCY_SCOPE = 'runs'

const RUN_NOT_FOUND = 'RUN_NOT_FOUND'

export const runNotFound = () =>
  new SandboxError(404, RUN_NOT_FOUND, 'The run was not found in this organization.')

interface ActiveRun {
  orgId: string
  controller: AbortController
  timer: NodeJS.Timeout | null
}

interface Waiter {
  resolve: (run: Run) => void
  reject: (error: Error) => void
}

type Step = { at: number; apply: () => boolean }

export interface RunEngineOptions {
  /** How many runs do their work at the same time (default 8). */
  workSlots?: number
}

function seedOf(input: Record<string, unknown>, random: () => number): number {
  const given = input.seed
  if (typeof given === 'number' && Number.isSafeInteger(given) && given >= 0) return given
  return Math.floor(random() * 0x1_0000_0000)
}

/**
 * The run life cycle: dispatch (idempotency, credit hold, the queued record), then queued →
 * starting → running → succeeded | failed | canceled with latency scaled by `config.latencyMs`,
 * logs at each stage, node runs, settlement of the credit hold and one `run.finished` event.
 *
 * Charging: the estimate is taken at dispatch (402 INSUFFICIENT_CREDIT when the balance cannot
 * cover it); at the end the run costs its real price, and the difference is refunded. A failed or
 * canceled run costs nothing and is refunded in full. Should the real price exceed the hold, the
 * extra is taken if the balance allows, otherwise the run costs what was held.
 *
 * Node runs: a run's nodes share its running phase by their nominal work. Each node run opens
 * when its turn comes and closes as the next one opens (the last one with the run), so canceling
 * stops the node at work and the nodes still pending never get a node run.
 *
 * Observers (`observe`) hear of every status change inside the transaction that makes it: batches
 * keep their items in step with their runs that way.
 *
 * Restarts: work in progress lives in this process. When the engine starts on a data folder with
 * runs left queued, starting or running, it fails them with failure_code SANDBOX_RESTARTED
 * (refunded, `run.finished` fired) rather than resuming them: their inputs may be presigned URLs
 * of the previous process, which die with it, and a re-run is one call.
 */
export class RunEngine {
  private readonly handlers = new Map<RunTarget['type'], TargetHandler>()
  private readonly ids = new MonotonicIds()
  private readonly records: RunRecords
  private readonly idempotency: IdempotencyKeys
  private readonly active = new Map<string, ActiveRun>()
  private readonly waiters = new Map<string, Waiter[]>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private readonly announcements: { orgId: string; run: Run }[] = []
  private readonly slotQueue: (() => void)[] = []
  private readonly observers: RunObserver[] = []
  private readonly workSlots: number
  private busySlots = 0
  private stopped = false

  constructor(
    private readonly services: SandboxServices,
    options: RunEngineOptions = {},
  ) {
    this.records = new RunRecords(services.db)
    this.idempotency = new IdempotencyKeys(services.db, IDEMPOTENCY_SCOPE)
    this.workSlots = options.workSlots ?? DEFAULT_WORK_SLOTS
    this.handlers.set('model', modelTargetHandler(services))
    this.failInterrupted()
  }

  /** Adds a kind of run target (flows, workflows); the model target is built in. */
  registerTarget(type: RunTarget['type'], handler: TargetHandler): void {
    this.handlers.set(type, handler)
  }

  /** Follows every status change of every run (see `RunObserver`). */
  observe(observer: RunObserver): void {
    this.observers.push(observer)
  }

  private notify(orgId: string, run: StoredRun): void {
    for (const observer of this.observers) {
      try {
        observer(orgId, run)
      } catch (error) {
        // An observer's bug must not undo the run's own change.
        console.error('sandbox: a run observer failed', error)
      }
    }
  }

  private handlerFor(target: RunTarget): TargetHandler {
    const handler = this.handlers.get(target.type)
    if (!handler) {
      throw new SandboxError(
        501,
        'NOT_IMPLEMENTED',
        `The sandbox cannot run ${target.type} targets yet.`,
      )
    }
    return handler
  }

  private now(): { ms: number; iso: string } {
    const ms = this.services.clock()
    return { ms, iso: isoTime(ms) }
  }

  private log(
    orgId: string,
    runId: string,
    level: LogLevelCode,
    message: string,
    data: Record<string, unknown> | null = null,
    nodeRunId: string | null = null,
  ): void {
    const { ms, iso } = this.now()
    const log: RunLog = {
      id: this.ids.next(ms),
      run_id: runId,
      node_run_id: nodeRunId,
      level_code: level,
      message,
      data,
      created_at: iso,
    }
    this.records.insertLog(orgId, log)
  }

  // ------------------------------------------------------------------------------------------
  // Reading

  /** The run as the API answers it (fresh output URLs); a 404 RUN_NOT_FOUND otherwise. */
  get(orgId: string, runId: string): Run {
    const stored = this.records.run(orgId, runId)
    if (!stored) throw runNotFound()
    return presentRun(this.services, stored)
  }

  /** The stored run with its internals (seed, credit hold, callback secret), or undefined. */
  stored(orgId: string, runId: string): StoredRun | undefined {
    return this.records.run(orgId, runId)
  }

  /** Resolves with the run once it is terminal (at once if it already is). */
  whenFinished(orgId: string, runId: string): Promise<Run> {
    const run = this.get(orgId, runId)
    if (isTerminal(run.status_code)) return Promise.resolve(run)
    if (this.stopped) return Promise.reject(new Error('The sandbox has stopped.'))
    return new Promise((resolve, reject) => {
      const list = this.waiters.get(runId) ?? []
      list.push({ resolve, reject })
      this.waiters.set(runId, list)
    })
  }

  // ------------------------------------------------------------------------------------------
  // Dispatch

  /**
   * Creates a queued run and starts it, or, for an Idempotency-Key already used with the same
   * fingerprint, answers the first run (`replayed`). The key check, the credit hold, the run
   * record and the key record are one transaction, so concurrent requests with one key make one
   * run. Synchronous, so callers (batches) may dispatch inside their own transaction; the work
   * starts on a later tick.
   */
  dispatch(orgId: string, request: DispatchRequest): DispatchResult {
    if (this.stopped) {
      throw new SandboxError(503, 'SERVICE_UNAVAILABLE', 'The sandbox is shutting down.')
    }
    const handler = this.handlerFor(request.target)
    const key = request.idempotencyKey ?? null
    const fingerprint = key
      ? fingerprintOf(request.fingerprint ?? { ...request, idempotencyKey: undefined })
      : ''
    const outcome = this.services.store.transaction(() => {
      if (key) {
        const earlier = this.idempotency.find(orgId, key, fingerprint)
        if (earlier) {
          const run = this.records.run(orgId, earlier)
          if (!run) throw runNotFound()
          return { run, replayed: true }
        }
      }
      requireCallbackSecret(this.services.store, orgId, request.callback_secret_id)
      const fields = handler.resolve(orgId, request.target)
      const estimate = handler.estimate(orgId, request.target, request.input)
      if (!this.services.accounts.charge(orgId, estimate)) {
        const balance = this.services.accounts.balance(orgId).balance_micro
        throw new SandboxError(
          402,
          'INSUFFICIENT_CREDIT',
          `This run costs an estimated ${microToDecimal(estimate)} credits but the balance is ${formatCredits(balance)} credits. Top up the balance, then dispatch again.`,
        )
      }
      const { ms, iso } = this.now()
      const { parentId, ...targetFields } = fields
      const run: StoredRun = {
        id: this.ids.next(ms),
        org_id: orgId,
        target_type_code: request.target.type,
        source_code: request.source_code,
        ...targetFields,
        batch_id: request.batch_id ?? null,
        parent_run_id: request.parent_run_id ?? null,
        status_code: 'queued',
        input: request.input,
        output: null,
        metadata: request.metadata ?? null,
        callback_url: request.callback_url ?? null,
        idempotency_key: key,
        progress: 0,
        cost: null,
        estimated_cost: microToDecimal(estimate),
        failure_code: null,
        failure_stage: null,
        failure_message: null,
        duration_ms: null,
        created_at: iso,
        queued_at: iso,
        started_at: null,
        completed_at: null,
        updated_at: iso,
        _sandbox: {
          seed: seedOf(request.input, this.services.random),
          held_micro: estimate,
          callback_secret_id: request.callback_secret_id ?? null,
          target: request.target,
        },
      }
      this.records.insertRun(orgId, parentId, run)
      this.log(
        orgId,
        run.id,
        'info',
        `Queued a run of ${run.model_slug ?? run.flow_id ?? run.wfengine_workflow_id ?? run.target_type_code}; ${run.estimated_cost ?? '0'} credits are held until it finishes.`,
        {
          estimated_cost: run.estimated_cost,
          seed: run._sandbox.seed,
          source_code: run.source_code,
        },
      )
      if (key) this.idempotency.remember(orgId, key, fingerprint, run.id, iso)
      return { run, replayed: false }
    })
    if (!outcome.replayed) this.start(orgId, outcome.run, handler)
    return { run: presentRun(this.services, outcome.run), replayed: outcome.replayed }
  }

  /**
   * A new run of the same target and input (`source_code: rerun`, `parent_run_id` set); the
   * callback URL and metadata are the original's unless given. The seed is drawn again unless the
   * input names one: a re-run is another attempt, not a replay.
   */
  rerun(
    orgId: string,
    runId: string,
    overrides: { callback_url?: string; metadata?: Record<string, unknown> | null },
    idempotency: { key?: string | null; fingerprint?: unknown } = {},
  ): DispatchResult {
    const original = this.records.run(orgId, runId)
    if (!original) throw runNotFound()
    return this.dispatch(orgId, {
      target: original._sandbox.target,
      input: original.input,
      callback_url: overrides.callback_url ?? original.callback_url,
      callback_secret_id: original._sandbox.callback_secret_id,
      metadata: overrides.metadata === undefined ? original.metadata : overrides.metadata,
      idempotencyKey: idempotency.key ?? null,
      fingerprint: idempotency.fingerprint,
      source_code: 'rerun',
      parent_run_id: original.id,
    })
  }

  /** Replaces a run's metadata, whatever its status: the only change a caller may make. */
  updateMetadata(orgId: string, runId: string, metadata: Record<string, unknown> | null): Run {
    const updated = this.services.store.transaction(() => {
      const run = this.records.run(orgId, runId)
      if (!run) throw runNotFound()
      run.metadata = metadata
      run.updated_at = this.now().iso
      this.records.saveRun(orgId, run)
      return run
    })
    return presentRun(this.services, updated)
  }

  // ------------------------------------------------------------------------------------------
  // The life cycle

  private acquireSlot(): Promise<void> {
    if (this.busySlots < this.workSlots) {
      this.busySlots++
      return Promise.resolve()
    }
    return new Promise((resolve) => this.slotQueue.push(resolve))
  }

  private releaseSlot(): void {
    const next = this.slotQueue.shift()
    if (next) next()
    else this.busySlots--
  }

  private start(orgId: string, run: StoredRun, handler: TargetHandler): void {
    const active: ActiveRun = { orgId, controller: new AbortController(), timer: null }
    this.active.set(run.id, active)
    const dispatchedAt = performance.now()
    const { signal } = active.controller
    const job = {
      orgId,
      runId: run.id,
      target: run._sandbox.target,
      input: run.input,
      seed: run._sandbox.seed,
      signal,
      fetchImage: imageFetcher(this.services, orgId, signal),
    }
    const work = async (): Promise<RunWork | null> => {
      await this.acquireSlot()
      try {
        if (signal.aborted) return null
        return await handler.execute(job)
      } catch (error) {
        return crashed(error)
      } finally {
        this.releaseSlot()
      }
    }
    void work().then((result) => {
      if (!result || signal.aborted || this.stopped || this.active.get(run.id) !== active) return
      this.follow(active, run.id, this.plan(orgId, run.id, result, dispatchedAt))
    })
  }

  /**
   * The transitions of a run whose work is done, on the performance clock. The run stays queued
   * for its share of the time or until its work is done, whichever is later (a worker takes it
   * then), so starting and running always get their shares however long the work took.
   */
  private plan(orgId: string, runId: string, work: RunWork, dispatchedAt: number): Step[] {
    const total =
      (Math.max(work.workMs, MIN_WORK_MS) * this.services.config.latencyMs) / NOMINAL_LATENCY_MS
    const startingAt = Math.max(dispatchedAt + total * QUEUED_SHARE, performance.now())
    const runningAt = startingAt + total * (STARTED_SHARE - QUEUED_SHARE)
    const running = total * (1 - STARTED_SHARE)
    const steps: Step[] = [
      { at: startingAt, apply: () => this.toStarting(orgId, runId) },
      { at: runningAt, apply: () => this.toRunning(orgId, runId) },
    ]
    const spans = nodeSpans(work.nodes)
    const last = work.nodes.length - 1
    work.nodes.forEach((node, index) => {
      const span = spans[index] ?? { start: 0, end: 1 }
      steps.push({
        at: runningAt + running * span.start,
        apply: () => this.openNode(orgId, runId, node),
      })
      // The last node closes with the run, in the same transaction.
      if (index < last) {
        steps.push({
          at: runningAt + running * span.end,
          apply: () => this.closeNode(orgId, runId, index, node),
        })
      }
    })
    if (running >= PROGRESS_TICK_MIN_MS) {
      const shares =
        work.nodes.length > 1 ? spans.slice(0, -1).map((span) => span.end) : [0.25, 0.5, 0.75]
      for (const share of shares) {
        steps.push({
          at: runningAt + running * share,
          apply: () => this.progress(orgId, runId, share),
        })
      }
    }
    steps.push({ at: runningAt + running, apply: () => this.complete(orgId, runId, work) })
    // Stable: steps due at the same instant keep the order they were added in.
    return steps.sort((a, b) => a.at - b.at)
  }

  /**
   * Applies the steps whose time has come, in one transaction (with no latency a run's whole life
   * is due at once), announces what finished, then waits for the next step.
   */
  private follow(active: ActiveRun, runId: string, steps: Step[]): void {
    if (this.stopped || this.active.get(runId) !== active) return
    let wait = 0
    try {
      this.services.store.transaction(() => {
        for (let step = steps[0]; step; step = steps[0]) {
          wait = step.at - performance.now()
          if (wait > 0) return
          steps.shift()
          if (!step.apply()) {
            this.active.delete(runId)
            steps.length = 0
          }
        }
      })
    } catch (error) {
      // Left as it is; the next start fails it cleanly (SANDBOX_RESTARTED).
      console.error(`sandbox: run ${runId} could not advance`, error)
      this.release(runId)
      return
    }
    this.announce()
    // A finished run has left `active`; stop() empties it, so no timer outlives the engine.
    if (steps.length === 0 || this.active.get(runId) !== active) return
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      active.timer = null
      this.follow(active, runId, steps)
    }, wait)
    timer.unref()
    this.timers.add(timer)
    active.timer = timer
  }

  /** Changes a run that is still in progress; false when it is gone or already terminal. */
  private change(orgId: string, runId: string, apply: (run: StoredRun, now: string) => void) {
    return this.services.store.transaction(() => {
      const run = this.records.run(orgId, runId)
      if (!run || isTerminal(run.status_code)) return false
      const { iso } = this.now()
      const was = run.status_code
      apply(run, iso)
      run.updated_at = iso
      this.records.saveRun(orgId, run)
      if (run.status_code !== was) this.notify(orgId, run)
      return true
    })
  }

  /** Whether the run exists and has not reached a terminal status. */
  private inProgress(orgId: string, runId: string): boolean {
    const run = this.records.run(orgId, runId)
    return run !== undefined && !isTerminal(run.status_code)
  }

  private toStarting(orgId: string, runId: string): boolean {
    return this.change(orgId, runId, (run, now) => {
      run.status_code = 'starting'
      run.started_at = now
      const waited = Date.parse(now) - Date.parse(run.queued_at ?? run.created_at)
      const message = `A worker picked up the run and is loading ${LOADING[run.target_type_code]}.`
      this.log(orgId, runId, 'info', message, { queued_ms: Math.max(0, waited) })
    })
  }

  private toRunning(orgId: string, runId: string): boolean {
    return this.change(orgId, runId, (run) => {
      run.status_code = 'running'
      this.log(orgId, runId, 'info', 'The run is running.')
    })
  }

  /** A node's turn has come: its node run opens, with the node's log lines but its errors. */
  private openNode(orgId: string, runId: string, node: NodeWork): boolean {
    return this.services.store.transaction(() => {
      if (!this.inProgress(orgId, runId)) return false
      const nodeRun = this.openNodeRun(orgId, runId, node, this.now().iso)
      // Errors are written when the node ends: until then it is still running.
      for (const line of node.logs.filter((entry) => entry.level_code !== 'error')) {
        this.log(orgId, runId, line.level_code, line.message, null, nodeRun.id)
      }
      return true
    })
  }

  /** A node other than the last is done: its node run closes with the node's outcome. */
  private closeNode(orgId: string, runId: string, index: number, node: NodeWork): boolean {
    return this.services.store.transaction(() => {
      if (!this.inProgress(orgId, runId)) return false
      const nodeRun = this.records.nodeRunsOf(orgId, runId)[index]
      if (nodeRun && !isTerminal(nodeRun.status_code)) {
        this.closeNodeRun(orgId, runId, nodeRun, node, node.status_code, this.now().iso)
      }
      return true
    })
  }

  private progress(orgId: string, runId: string, share: number): boolean {
    return this.change(orgId, runId, (run) => {
      run.progress = share
    })
  }

  private openNodeRun(orgId: string, runId: string, node: NodeWork, now: string): NodeRun {
    const nodeRun: NodeRun = {
      id: this.ids.next(this.services.clock()),
      run_id: runId,
      flow_node_id: node.flow_node_id,
      wfengine_node_id: node.wfengine_node_id,
      status_code: 'running',
      input: node.input,
      output: null,
      cost: null,
      failure_code: null,
      failure_stage: null,
      failure_message: null,
      started_at: now,
      completed_at: null,
      created_at: now,
      updated_at: now,
    }
    this.records.insertNodeRun(orgId, nodeRun)
    return nodeRun
  }

  /** Settles the credit hold against the real price; answers what the run costs. */
  private settle(orgId: string, held: number, price: number): number {
    if (price <= held) {
      if (held > price) this.services.accounts.refund(orgId, held - price)
      return price
    }
    return this.services.accounts.charge(orgId, price - held) ? price : held
  }

  /**
   * Makes a run terminal, once: settles credits, closes node runs, logs, then fires
   * `run.finished`. Answers the finished run, or null when it was already terminal.
   */
  private finish(
    orgId: string,
    runId: string,
    status: 'succeeded' | 'failed' | 'canceled',
    details: {
      price: number
      output?: Record<string, unknown> | null
      failure?: { code: string; stage: string; message: string }
      nodes?: readonly NodeWork[]
      logs?: readonly ModelLog[]
      message: (cost: string) => [LogLevelCode, string]
    },
  ): Run | null {
    const finished = this.services.store.transaction(() => {
      const run = this.records.run(orgId, runId)
      if (!run || isTerminal(run.status_code)) return null
      const { ms, iso } = this.now()
      const cost = this.settle(orgId, run._sandbox.held_micro, details.price)
      const was = run.status_code
      run.status_code = status
      run.output = details.output ?? null
      run.cost = microToDecimal(cost)
      if (status === 'succeeded') run.progress = 1
      run.failure_code = details.failure?.code ?? null
      run.failure_stage = details.failure?.stage ?? null
      run.failure_message = details.failure?.message ?? null
      run.completed_at = iso
      run.duration_ms = Math.max(0, ms - Date.parse(run.created_at))
      run.updated_at = iso
      this.records.saveRun(orgId, run)
      this.notify(orgId, run)
      this.closeNodeRuns(orgId, runId, status, was, details.nodes ?? [], iso)
      for (const line of details.logs ?? []) this.log(orgId, runId, line.level_code, line.message)
      const [level, message] = details.message(run.cost)
      this.log(orgId, runId, level, message, {
        status_code: status,
        cost: run.cost,
        held: microToDecimal(run._sandbox.held_micro),
        refunded: microToDecimal(Math.max(0, run._sandbox.held_micro - cost)),
        duration_ms: run.duration_ms,
      })
      return run
    })
    if (!finished) return null
    this.release(runId)
    const run = presentRun(this.services, finished)
    this.announcements.push({ orgId, run })
    return run
  }

  /** Fires `run.finished` for the runs finished since the last call, once their writes are in. */
  private announce(): void {
    for (const { orgId, run } of this.announcements.splice(0)) {
      try {
        this.services.events.emit('run.finished', orgId, run)
      } catch (error) {
        // A listener's bug must not leave the run's waiters hanging or break the timer chain.
        console.error('sandbox: a run.finished listener failed', error)
      }
      const waiting = this.waiters.get(run.id) ?? []
      this.waiters.delete(run.id)
      for (const waiter of waiting) waiter.resolve(run)
    }
  }

  private closeNodeRuns(
    orgId: string,
    runId: string,
    status: 'succeeded' | 'failed' | 'canceled',
    was: RunStatusCode,
    nodes: readonly NodeWork[],
    now: string,
  ): void {
    const all = this.records.nodeRunsOf(orgId, runId)
    all.forEach((nodeRun, index) => {
      if (isTerminal(nodeRun.status_code)) return
      const node = status === 'canceled' ? undefined : nodes[index]
      this.closeNodeRun(orgId, runId, nodeRun, node, node?.status_code ?? status, now)
      if (status === 'canceled') {
        this.log(orgId, runId, 'warning', `The node was stopped while ${was}.`, null, nodeRun.id)
      }
    })
  }

  private closeNodeRun(
    orgId: string,
    runId: string,
    nodeRun: NodeRun,
    node: NodeWork | undefined,
    status: 'succeeded' | 'failed' | 'canceled',
    now: string,
  ): void {
    nodeRun.status_code = status
    nodeRun.output = node?.output ?? null
    nodeRun.cost = microToDecimal(node?.cost_micro ?? 0)
    nodeRun.failure_code = node?.failure_code ?? null
    nodeRun.failure_stage = node?.failure_stage ?? null
    nodeRun.failure_message = node?.failure_message ?? null
    nodeRun.completed_at = now
    nodeRun.updated_at = now
    this.records.saveNodeRun(orgId, nodeRun)
    for (const line of node?.logs.filter((entry) => entry.level_code === 'error') ?? []) {
      this.log(orgId, runId, line.level_code, line.message, null, nodeRun.id)
    }
  }

  private complete(orgId: string, runId: string, work: RunWork): boolean {
    if (work.ok) {
      this.finish(orgId, runId, 'succeeded', {
        price: work.cost_micro,
        output: work.output,
        nodes: work.nodes,
        logs: work.logs,
        message: (cost) => ['info', `The run succeeded; it cost ${cost} credits.`],
      })
    } else {
      this.finish(orgId, runId, 'failed', {
        price: 0,
        failure: {
          code: work.failure_code,
          stage: work.failure_stage,
          message: work.failure_message,
        },
        nodes: work.nodes,
        logs: work.logs,
        message: () => [
          'error',
          `The run failed at ${work.failure_stage} (${work.failure_code}): ${work.failure_message} The held credits were refunded.`,
        ],
      })
    }
    return false
  }

  /** Cancels a run in progress: 200 with the canceled run, 409 when it already finished. */
  cancel(orgId: string, runId: string): Run {
    const current = this.records.run(orgId, runId)
    if (!current) throw runNotFound()
    const was = current.status_code
    const run = this.finish(orgId, runId, 'canceled', {
      price: 0,
      message: () => [
        'warning',
        `The run was canceled while ${was}; the held credits were refunded.`,
      ],
    })
    this.announce()
    if (!run) {
      throw new SandboxError(
        409,
        'CONFLICT',
        `The run already finished (${this.records.run(orgId, runId)?.status_code ?? was}); only queued, starting or running runs can be canceled.`,
      )
    }
    return run
  }

  /** Forgets a finished run's work: its timer is cleared and any work still going is aborted. */
  private release(runId: string): void {
    const active = this.active.get(runId)
    this.active.delete(runId)
    if (!active) return
    if (active.timer) {
      clearTimeout(active.timer)
      this.timers.delete(active.timer)
    }
    active.controller.abort()
  }

  // ------------------------------------------------------------------------------------------
  // Start and stop

  /** See the class comment: runs a previous process left unfinished are failed and refunded. */
  private failInterrupted(): void {
    const interrupted = this.records.unfinished()
    if (interrupted.length === 0) return
    // Failed now, announced on the next tick: the other areas are not listening yet.
    const finished: { orgId: string; runId: string; was: string }[] = []
    for (const { orgId, run } of interrupted) {
      finished.push({ orgId, runId: run.id, was: run.status_code })
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      for (const { orgId, runId, was } of finished) {
        if (this.stopped) return
        this.finish(orgId, runId, 'failed', {
          price: 0,
          failure: {
            code: 'SANDBOX_RESTARTED',
            stage: was === 'running' ? 'inference' : 'preprocess',
            message: `The sandbox stopped while the run was ${was}, so its work was lost. Re-run it.`,
          },
          message: () => [
            'error',
            `The sandbox restarted while the run was ${was}; the run failed and the held credits were refunded.`,
          ],
        })
        this.announce()
      }
    }, 0)
    timer.unref()
    this.timers.add(timer)
  }

  /** Clears every timer and abandons work in progress; nothing touches the database after this. */
  stop(): void {
    this.stopped = true
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    for (const active of this.active.values()) active.controller.abort()
    this.active.clear()
    this.announcements.length = 0
    for (const resolve of this.slotQueue.splice(0)) resolve()
    const error = new Error('The sandbox stopped before the run finished.')
    for (const waiting of this.waiters.values()) for (const waiter of waiting) waiter.reject(error)
    this.waiters.clear()
  }
}

/** What a run loads when a worker picks it up, for its log line. */
const LOADING: Record<RunTarget['type'], string> = {
  model: 'the model',
  flow: 'the flow',
  wfengine_workflow: 'the workflow',
}

/**
 * Each node's share of the running phase, in turn: from its nominal work time, or equal shares
 * when the nodes do not say.
 */
function nodeSpans(nodes: readonly NodeWork[]): { start: number; end: number }[] {
  const weights = nodes.map((node) => Math.max(1, node.workMs ?? 1))
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  let at = 0
  return weights.map((weight) => {
    const span = { start: at / total, end: (at + weight) / total }
    at += weight
    return span
  })
}

/** A handler that threw instead of answering a failure: the run fails at inference. */
function crashed(error: unknown): RunWork {
  const message = `The model crashed: ${error instanceof Error ? error.message : String(error)}`
  return {
    ok: false,
    failure_code: 'MODEL_ERROR',
    failure_stage: 'inference',
    failure_message: message,
    workMs: 0,
    logs: [{ level_code: 'error', message }],
    nodes: [],
  }
}

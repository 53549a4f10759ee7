import { randomUUID } from 'node:crypto'
import type { Batch, BatchCreate, FlowNode, Run, RunDispatch } from '../../../src-shared/api'
import type { Intent, IntentState, Ledger } from '../../db'
import {
  isServiceError,
  newIdempotencyKey,
  type ServiceClient,
  type ServiceError,
} from '../../service'
import type { NodeEvent, NodeOutcome, NodeRunContext, NodeRunner, PortValue } from '../types'
import { isRemoteNodeError, RemoteNodeError } from './errors'
import {
  batchRuns,
  costMicroOf,
  listBatchRuns,
  DEFAULT_POLL,
  announceBatch,
  followBatch,
  followRun,
  getBatch,
  getRun,
  sleep,
  type FollowContext,
  type PollPolicy,
} from './follow'
import { freshUrls } from './fresh-urls'
import { findBatchId, findRun } from './lookup'
import { RunDurations } from './poll-timing'
import { ModelCatalog, type ModelLookup } from './models'
import { nodeOutputs } from './outputs'
import { estimateRunMicro } from './pricing'
import { inputsHash } from './values'
import {
  batchBody,
  isBatchIntent,
  itemInputs,
  metadataOf,
  planFanOut,
  runBody,
  serviceInput,
  type IntentMetadata,
  type RemoteTarget,
  type UrlFor,
} from './request'

/**
 * The moments of a dispatch a crash can fall between, in order. Told to `onPoint` (tests kill
 * the process there); `answered` comes after the service's answer, before it is committed.
 */
export type DispatchPoint = 'before-intent' | 'intent-committed' | 'sending-committed' | 'answered'

export interface RemoteRunnerOptions {
  client: ServiceClient
  ledger: Ledger
  /** The profile and organization the intents belong to; every request names the organization. */
  profile: string
  orgId: string
  /** Finds models without a request (the mirror: `mirrorModels`); the service is asked otherwise. */
  models?: ModelLookup | undefined
  /**
   * This machine's time, for how far back a lost batch is searched (from the earlier of the
   * intent's time and now); Date.now by default.
   */
  clock?: (() => number) | undefined
  poll?: Partial<PollPolicy> | undefined
  /**
   * How long earlier runs of a target took (service times, ms, oldest first), to time the first
   * polls of a target this runner has not seen finish yet (the mirror: `mirrorDurations`).
   */
  durations?: ((target: string) => readonly number[]) | undefined
  /** For tests only: told at each dispatch point, before going on. */
  onPoint?:
    ((point: DispatchPoint, at: { nodeId: string; intentId: string | null }) => void) | undefined
}

/** What re-attaching to an intent came to. */
export interface ReattachResult {
  intentId: string
  nodeId: string | null
  state: IntentState
  remoteRunId: string | null
  batchId: string | null
  costMicro: number
  error: { code: string; message: string } | null
}

/** A remote run or batch in a terminal status (or, for `succeeded` intents, as it ended). */
type Remote = { kind: 'run'; run: Run } | { kind: 'batch'; batch: Batch }

/** Send-and-look-up rounds of one dispatch, each with the client's own retries inside. */
const DISPATCH_ROUNDS = 3
const OPEN_STATES: ReadonlySet<IntentState> = new Set(['prepared', 'sending', 'dispatched'])

const noEvents = (): void => undefined

/**
 * What the user reads when a dispatch could not be confirmed. True because the intent keeps its
 * idempotency key and a resume looks the run up before sending it again.
 */
export const INTERRUPTED_MESSAGE =
  'The run stopped because the service could not be reached. Nothing was charged twice: Resume continues where it stopped.'

/** The service could not be reached at all while sending: the intent stays open for a resume. */
function interrupted(intent: Intent, cause: ServiceError): RemoteNodeError {
  return new RemoteNodeError('SERVICE_UNREACHABLE', INTERRUPTED_MESSAGE, {
    intentId: intent.id,
    cause,
  })
}

function canceled(details: { intentId?: string; remoteRunId?: string; batchId?: string } = {}) {
  return new RemoteNodeError('CANCELED', 'The node run was canceled.', details)
}

/**
 * Runs model nodes (and workflow-engine nodes) on the service, with the ledger's guarantee that
 * paid work is never done twice. See `index.ts` for the rules.
 */
export class RemoteRunner implements NodeRunner {
  private readonly client: ServiceClient
  private readonly ledger: Ledger
  private readonly profile: string
  private readonly orgId: string
  private readonly poll: PollPolicy
  private readonly catalog: ModelCatalog
  private readonly onPoint: RemoteRunnerOptions['onPoint']
  /** Where lookups go: the client, and the organization every request names. */
  private readonly service: { client: ServiceClient; orgId: string; clock: () => number }
  /** How long runs of each target took lately, to time the polls of the next ones. */
  private readonly durations: RunDurations
  /** Intents being driven in this process: a second caller waits for the first. */
  private readonly inflight = new Map<string, Promise<Remote>>()

  constructor(options: RemoteRunnerOptions) {
    this.client = options.client
    this.ledger = options.ledger
    this.profile = options.profile
    this.orgId = options.orgId
    this.poll = { ...DEFAULT_POLL, ...definedOnly(options.poll ?? {}) }
    this.catalog = new ModelCatalog(options.client, options.orgId, options.models)
    this.durations = new RunDurations(options.durations)
    this.onPoint = options.onPoint
    this.service = {
      client: options.client,
      orgId: options.orgId,
      clock: options.clock ?? Date.now,
    }
  }

  /** Bound, so the scheduler may hand `runner.run` around on its own. */
  readonly run = (context: NodeRunContext): Promise<NodeOutcome> => this.runNode(context)

  /**
   * Micro-credits the node is expected to cost: its model's pricing rules applied to each run it
   * will make (one per fanned-out item). Workflow-engine nodes publish no pricing: 0. A model
   * neither the lookup nor an earlier `run`/`loadModels` has seen throws MODEL_UNKNOWN.
   */
  readonly estimate = (node: FlowNode, inputs: Record<string, PortValue>): number => {
    if (node.type_code === 'wfengine_workflow') return 0
    if (node.type_code !== 'model') throw notRemote(node)
    const model = this.catalog.known(node.model_id ?? '')
    if (!model) {
      throw new RemoteNodeError(
        'MODEL_UNKNOWN',
        `The price of the node ${JSON.stringify(node.label)} is unknown: its model ${String(node.model_id)} is not in the local catalog. Sync the catalog (or load the models) first.`,
      )
    }
    const given = Object.fromEntries(
      Object.entries(inputs).filter(([, value]) => value !== null && value !== undefined),
    )
    const plan = planFanOut(node, given, { typeCode: 'model', ref: model.slug, model })
    if (plan.count === null) return estimateRunMicro(model, given)
    let total = 0
    for (let i = 0; i < plan.count; i++) {
      total += estimateRunMicro(model, itemInputs(given, plan.names, i))
    }
    return total
  }

  /** Fetches the models of these nodes from the service, so `estimate` knows them. */
  async loadModels(nodes: readonly FlowNode[]): Promise<void> {
    const refs = new Set(
      nodes.flatMap((node) => (node.type_code === 'model' && node.model_id ? [node.model_id] : [])),
    )
    await Promise.all([...refs].map((ref) => this.catalog.load(ref)))
  }

  /**
   * Re-attaches to every intent of the flow run that is not final, after a crash or a kill, and
   * follows each to its end: `prepared` is sent (it never was), `sending` is looked up first and
   * followed when found or sent with its own key and bytes when not, `dispatched` is followed.
   * Failures are reported per intent, never thrown.
   */
  async resumeFlowRun(flowRunId: string): Promise<ReattachResult[]> {
    const open = this.ledger.intents
      .open({ profile: this.profile, orgId: this.orgId })
      .filter((intent) => intent.flowRunId === flowRunId)
    return Promise.all(open.map((intent) => this.reattach(intent)))
  }

  /** Follows one intent to its end (sending it first if needed); see `resumeFlowRun`. */
  async reattach(intent: Intent): Promise<ReattachResult> {
    if (intent.profile !== this.profile || intent.orgId !== this.orgId) {
      throw new RangeError(
        `The intent ${intent.id} belongs to another profile or organization than this runner.`,
      )
    }
    let error: ReattachResult['error'] = null
    let remote: Remote | null = null
    try {
      remote = await this.drive(intent, this.followContext(undefined, noEvents))
    } catch (caught) {
      error = {
        code: isRemoteNodeError(caught) || isServiceError(caught) ? caught.code : 'ERROR',
        message: caught instanceof Error ? caught.message : String(caught),
      }
    }
    const now = this.ledger.intents.get(intent.id) ?? intent
    const batch = remote?.kind === 'batch' ? remote.batch : null
    return {
      intentId: now.id,
      nodeId: now.nodeId,
      state: now.state,
      remoteRunId: remote?.kind === 'run' ? remote.run.id : batch ? null : now.remoteRunId,
      batchId: batch?.id ?? (isBatchIntent(now) ? now.remoteRunId : null),
      costMicro: remote
        ? costMicroOf(remote.kind === 'run' ? remote.run.cost : remote.batch.cost)
        : 0,
      error,
    }
  }

  // ------------------------------------------------------------------------------------------

  private async runNode(context: NodeRunContext): Promise<NodeOutcome> {
    if (context.signal.aborted) throw canceled()
    const target = await this.targetOf(context.node)
    const plan = planFanOut(context.node, context.inputs, target)
    if (plan.count === 0) return emptyFanOut(context.node, target)
    const hash = inputsHash(context.inputs)
    const existing = this.reusable(context, target, hash, plan.count !== null)
    if (plan.count !== null) {
      return this.runFanOut(
        context,
        target,
        hash,
        { names: plan.names, count: plan.count },
        existing,
      )
    }
    const urlFor = freshUrls(this.service, context.signal)
    const intent =
      existing ?? (await this.prepare(context, target, hash, runBodyOf(context.inputs, urlFor)))
    const remote = await this.drive(intent, this.followContext(context.signal, context.emit))
    return this.outcome(context, target, intent, remote)
  }

  /**
   * A node whose list inputs fan out: one batch for the items no earlier batch of this target
   * made already. Items that succeeded in an earlier batch (the same inputs, by their hash) are
   * taken back as they are, so re-running a node whose batch partly failed pays only for what
   * failed; when none is left, nothing is sent.
   */
  private async runFanOut(
    context: NodeRunContext,
    target: RemoteTarget,
    hash: string,
    plan: { names: string[]; count: number },
    existing: Intent | null,
  ): Promise<NodeOutcome> {
    const { node, signal, emit } = context
    const items = Array.from({ length: plan.count }, (_, i) =>
      itemInputs(context.inputs, plan.names, i),
    )
    const hashes = items.map((item) => inputsHash(item))
    const urlFor = freshUrls(this.service, signal)
    // A resumed node run sends what its intent holds; the rest was taken back before.
    const sent = existing ? itemIndexesOf(existing) : null
    const paid = await this.paidItems(
      target,
      hashes.map((h, i) => (sent?.has(i) ? null : h)),
      existing?.remoteRunId ?? null,
      signal,
    )
    const missing = sent
      ? [...sent].sort((a, b) => a - b)
      : hashes.flatMap((_, i) => (paid.has(i) ? [] : [i]))
    for (const run of new Set(paid.values())) {
      emit({
        type: 'remote-run',
        runId: run.id,
        ...(run.batch_id ? { batchId: run.batch_id } : {}),
      })
    }
    const runs = new Map<number, Run>(paid)
    let costMicro = 0
    let batchId: string | undefined
    let intentId: string | undefined
    if (missing.length > 0) {
      const intent =
        existing ??
        (await this.prepare(context, target, hash, async (metadata) =>
          batchBody(
            target.ref,
            await Promise.all(
              missing.map(async (index) => ({
                index,
                input: await serviceInput(items[index] ?? {}, urlFor),
                inputsHash: hashes[index] ?? '',
              })),
            ),
            metadata,
          ),
        ))
      intentId = intent.id
      const remote = await this.drive(intent, this.followContext(signal, emit))
      if (remote.kind !== 'batch') throw new Error('A fan-out intent was followed as a single run.')
      const { batch } = remote
      batchId = batch.id
      costMicro = costMicroOf(batch.cost)
      emit({ type: 'cost', costMicro })
      if (batch.status_code === 'canceled') throw canceled({ intentId, batchId })
      const made = await batchRuns(this.service, batch, signal)
      made.forEach((run, position) => {
        runs.set(itemOf(run) ?? missing[position] ?? position, run)
      })
    }
    if (missing.length === 0) emit({ type: 'cost', costMicro })
    const ids = { ...(intentId ? { intentId } : {}), ...(batchId ? { batchId } : {}) }
    const failed = hashes.flatMap((_, i) => (runs.get(i)?.status_code === 'succeeded' ? [] : [i]))
    if (failed.length > 0) {
      const first = runs.get(failed[0] ?? 0)
      throw new RemoteNodeError(
        'NODE_FAILED',
        `${failed.length} of ${plan.count} items did not succeed; item ${(failed[0] ?? 0) + 1}: ${failureWords(first, first?.status_code ?? 'its run cannot be found').replace(/\.$/, '')}. Run the node again: the items that succeeded are kept and not paid for again.`,
        { ...ids, failureCode: first?.failure_code ?? null },
      )
    }
    const perItem = await Promise.all(
      hashes.map((_, i) => nodeOutputs(node, target.model, runs.get(i), signal)),
    )
    const names = new Set(perItem.flatMap((outputs) => Object.keys(outputs)))
    for (const port of node.outputs) names.add(port.name)
    const outputs: Record<string, PortValue> = {}
    for (const name of names) outputs[name] = perItem.map((item) => item[name] ?? null)
    return { outputs, costMicro, ...(batchId ? { batchId } : {}) }
  }

  /**
   * By item index: a succeeded run of an earlier batch of this target with the item's inputs
   * (null hashes are not looked for). The latest few ended batches are read; `skip` is the
   * node run's own batch.
   */
  private async paidItems(
    target: RemoteTarget,
    hashes: readonly (string | null)[],
    skip: string | null,
    signal: AbortSignal,
  ): Promise<Map<number, Run>> {
    const found = new Map<number, Run>()
    const wanted = new Map<string, number[]>()
    hashes.forEach((h, i) => {
      if (h !== null) wanted.set(h, [...(wanted.get(h) ?? []), i])
    })
    if (wanted.size === 0) return found
    const scope = { profile: this.profile, orgId: this.orgId }
    for (const earlier of this.ledger.intents.endedBatches(scope, target.ref)) {
      if (!earlier.remoteRunId || earlier.remoteRunId === skip) continue
      for (const run of await listBatchRuns(this.service, earlier.remoteRunId, signal)) {
        if (run.status_code !== 'succeeded') continue
        const h = (run.metadata as { atelier_item_inputs_hash?: unknown } | null)
          ?.atelier_item_inputs_hash
        if (typeof h !== 'string') continue
        for (const index of wanted.get(h) ?? []) found.set(index, run)
        wanted.delete(h)
      }
      if (wanted.size === 0) break
    }
    return found
  }

  private async targetOf(node: FlowNode): Promise<RemoteTarget> {
    if (node.type_code === 'model') {
      if (!node.model_id) {
        throw new RemoteNodeError(
          'MODEL_UNKNOWN',
          `The node ${JSON.stringify(node.label)} names no model. Pick one in the node's settings.`,
        )
      }
      const model = await this.catalog.load(node.model_id)
      return { typeCode: 'model', ref: model.slug, model }
    }
    if (node.type_code === 'wfengine_workflow' && node.wfengine_workflow_id) {
      return { typeCode: 'wfengine_workflow', ref: node.wfengine_workflow_id, model: null }
    }
    throw notRemote(node)
  }

  /**
   * The intent this node run already has: same flow run, node, attempt, target and inputs, not
   * failed or canceled. Open ones are re-attached to; a succeeded one is paid work to reuse.
   */
  private reusable(
    context: NodeRunContext,
    target: RemoteTarget,
    hash: string,
    fannedOut: boolean,
  ): Intent | null {
    for (const intent of this.ledger.intents.forNode(context.flowRunId, context.node.id)) {
      if (intent.profile !== this.profile || intent.orgId !== this.orgId) continue
      if (intent.targetRef !== target.ref || intent.inputsHash !== hash) continue
      if (metadataOf(intent).atelier_attempt !== context.attempt) continue
      if (isBatchIntent(intent) !== fannedOut) continue
      if (OPEN_STATES.has(intent.state) || intent.state === 'succeeded') return intent
    }
    return null
  }

  /** Builds the exact request and commits the intent, before anything is sent. */
  private async prepare(
    context: NodeRunContext,
    target: RemoteTarget,
    hash: string,
    body: (metadata: IntentMetadata) => Promise<RunDispatch | BatchCreate>,
  ): Promise<Intent> {
    const id = randomUUID()
    const metadata: IntentMetadata = {
      atelier_intent_id: id,
      atelier_flow_run_id: context.flowRunId,
      atelier_node_id: context.node.id,
      atelier_attempt: context.attempt,
    }
    const request = await body(metadata)
    this.point('before-intent', context.node.id, null)
    const intent = this.ledger.intents.record({
      id,
      profile: this.profile,
      orgId: this.orgId,
      flowRunId: context.flowRunId,
      nodeId: context.node.id,
      targetTypeCode: target.typeCode,
      targetRef: target.ref,
      inputsHash: hash,
      idempotencyKey: newIdempotencyKey(),
      request,
    })
    this.point('intent-committed', context.node.id, intent.id)
    return intent
  }

  private followContext(
    signal: AbortSignal | undefined,
    emit: (event: NodeEvent) => void,
  ): FollowContext {
    return { client: this.client, orgId: this.orgId, poll: this.poll, signal, emit }
  }

  private drive(intent: Intent, ctx: FollowContext): Promise<Remote> {
    const running = this.inflight.get(intent.id)
    if (running) return running
    const driving = this.driveOnce(intent, ctx).finally(() => this.inflight.delete(intent.id))
    this.inflight.set(intent.id, driving)
    return driving
  }

  /** Dispatches the intent if it has not been, follows it to its end, and commits the end. */
  private async driveOnce(given: Intent, ctx: FollowContext): Promise<Remote> {
    // The stored row, not the caller's copy: another caller may have moved it on.
    const intent = this.ledger.intents.get(given.id) ?? given
    const batch = isBatchIntent(intent)
    if (intent.state === 'succeeded' && intent.remoteRunId) {
      if (!batch) ctx.emit({ type: 'remote-run', runId: intent.remoteRunId })
      const remote: Remote = batch
        ? { kind: 'batch', batch: await getBatch(ctx, intent.remoteRunId) }
        : { kind: 'run', run: await getRun(ctx, intent.remoteRunId) }
      if (remote.kind === 'batch') announceBatch(ctx, remote.batch)
      return remote
    }
    if (!OPEN_STATES.has(intent.state)) {
      throw new RemoteNodeError(
        'OUTCOME_UNKNOWN',
        `The intent ${intent.id} already ended (${intent.state}); there is nothing to re-attach to.`,
        { intentId: intent.id },
      )
    }
    const attached = intent.state === 'dispatched' ? intent.remoteRunId : null
    const sentAt = performance.now()
    const remoteId = attached ?? (await this.dispatch(intent, ctx.signal))
    if (ctx.signal?.aborted) return this.cancelRemote(intent, remoteId, batch, ctx)
    if (!batch) ctx.emit({ type: 'remote-run', runId: remoteId })
    let remote: Remote
    try {
      remote = batch
        ? { kind: 'batch', batch: await followBatch(ctx, remoteId) }
        : {
            kind: 'run',
            run: await followRun(ctx, remoteId, {
              expectedMs: this.durations.expected(intent.targetRef),
              dispatchedAt: attached === null ? sentAt : undefined,
            }),
          }
    } catch (error) {
      if (ctx.signal?.aborted) return this.cancelRemote(intent, remoteId, batch, ctx)
      if (error instanceof RemoteNodeError) throw error
      throw new RemoteNodeError(
        'SERVICE_UNREACHABLE',
        `Following the remote run failed: ${error instanceof Error ? error.message : String(error)}`,
        { intentId: intent.id, cause: error },
      )
    }
    if (remote.kind === 'run') this.durations.note(intent.targetRef, remote.run)
    this.settle(intent, remote)
    return remote
  }

  /**
   * Sends the intent's stored request with its own key until the service answers, looking the
   * run up first whenever an earlier attempt (in this process or before a crash) may have
   * reached it. Answers the remote run (or batch) id, committed as `dispatched`.
   */
  private async dispatch(intent: Intent, signal: AbortSignal | undefined): Promise<string> {
    const batch = isBatchIntent(intent)
    const nodeId = intent.nodeId ?? ''
    let mayExist = intent.state === 'sending'
    let lastError: unknown = null
    for (let round = 0; round < DISPATCH_ROUNDS; round++) {
      if (round > 0 && !signal?.aborted) {
        await sleep(
          Math.min(this.poll.maxMs, this.poll.initialMs * this.poll.factor ** round),
          undefined,
        )
      }
      if (mayExist) {
        let found: string | null
        try {
          found = batch
            ? await findBatchId(this.service, intent)
            : ((await findRun(this.service, intent))?.id ?? null)
        } catch (error) {
          // Not knowing whether it exists, sending again could only be safe by the key; the
          // lookup is what makes sure, so it is tried again rather than skipped.
          lastError = error
          continue
        }
        if (found !== null) {
          this.ledger.intents.markDispatched(intent.id, found)
          return found
        }
      }
      if (signal?.aborted) {
        this.ledger.intents.finish(intent.id, 'abandoned', {
          error: 'Canceled before it was sent.',
        })
        throw canceled({ intentId: intent.id })
      }
      if (!this.ledger.intents.markSending(intent.id)) return this.movedOn(intent)
      this.point('sending-committed', nodeId, intent.id)
      mayExist = true
      let answerId: string
      try {
        answerId = await this.post(intent)
      } catch (error) {
        lastError = error
        if (!isServiceError(error)) throw error
        this.refuseIfFinal(intent, error)
        this.ledger.intents.noteError(intent.id, `${error.code}: ${error.message}`)
        // Nobody answered at that address: more rounds would only make the user wait to hear it.
        if (error.code === 'NETWORK_ERROR' && !error.outcomeUnknown) {
          throw interrupted(intent, error)
        }
        continue
      }
      this.point('answered', nodeId, intent.id)
      this.ledger.intents.markDispatched(intent.id, answerId)
      return answerId
    }
    throw new RemoteNodeError('OUTCOME_UNKNOWN', INTERRUPTED_MESSAGE, {
      intentId: intent.id,
      cause: lastError,
    })
  }

  /** Another process moved the intent on while this one was about to send it. */
  private movedOn(intent: Intent): string {
    const now = this.ledger.intents.get(intent.id)
    if (now?.remoteRunId) return now.remoteRunId
    throw new RemoteNodeError(
      'OUTCOME_UNKNOWN',
      `The intent ${intent.id} was ${now?.state ?? 'removed'} by another process meanwhile.`,
      { intentId: intent.id },
    )
  }

  /** A refusal that another attempt would only repeat ends the intent (nothing was created). */
  private refuseIfFinal(intent: Intent, error: ServiceError): void {
    if (error.outcomeUnknown) return
    const { status, code } = error
    if (status === 402) {
      this.ledger.intents.finish(intent.id, 'failed', { error: `${code}: ${error.message}` })
      const model = this.catalog.known(intent.targetRef)
      const input = (intent.request as Partial<RunDispatch>).input ?? {}
      const estimate = model ? estimateRunMicro(model, input) : 0
      throw new RemoteNodeError(
        'INSUFFICIENT_CREDIT',
        `The balance is too low to run ${intent.targetRef}${estimate > 0 && !isBatchIntent(intent) ? ` (about ${formatCredits(estimate)} credits)` : ''}. Top up the balance, then run the flow again.`,
        { intentId: intent.id, cause: error },
      )
    }
    // 409 IDEMPOTENCY_KEY_REUSED: the key already made something; the next round looks it up.
    if (status === 409 && code === 'IDEMPOTENCY_KEY_REUSED') return
    if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
      this.ledger.intents.finish(intent.id, 'failed', { error: `${code}: ${error.message}` })
      throw new RemoteNodeError(
        'DISPATCH_REFUSED',
        `The service refused to run ${intent.targetRef}: ${error.serviceMessage ?? error.message}`,
        { intentId: intent.id, cause: error },
      )
    }
  }

  private async post(intent: Intent): Promise<string> {
    const headers = { 'Idempotency-Key': intent.idempotencyKey, 'X-Organization-Id': intent.orgId }
    if (isBatchIntent(intent)) {
      const batch = await this.client.post('/v1/batches', {
        body: intent.request as BatchCreate,
        headers,
      })
      return batch.id
    }
    const body = intent.request as RunDispatch
    if (intent.targetTypeCode === 'wfengine_workflow') {
      const run = await this.client.post('/v1/comfyui-workflows/{comfyui_workflow_id}/runs', {
        params: { path: { comfyui_workflow_id: intent.targetRef } },
        body,
        headers,
      })
      return run.id
    }
    const [provider = '', model = ''] = intent.targetRef.split('/')
    const run = await this.client.post('/v1/models/{provider}/{model}/runs', {
      params: { path: { provider, model } },
      body,
      headers,
    })
    return run.id
  }

  /**
   * Cancels the remote run (or batch) of a canceled node run and commits how it really ended: a
   * run that finished first keeps its status (paid work stays reusable). Always throws CANCELED.
   */
  private async cancelRemote(
    intent: Intent,
    remoteId: string,
    batch: boolean,
    ctx: FollowContext,
  ): Promise<never> {
    const ids = batch
      ? { intentId: intent.id, batchId: remoteId }
      : { intentId: intent.id, remoteRunId: remoteId }
    const headers = { 'X-Organization-Id': intent.orgId }
    let remote: Remote
    try {
      try {
        remote = batch
          ? {
              kind: 'batch',
              batch: await this.client.post('/v1/batches/{batch_id}/cancel', {
                params: { path: { batch_id: remoteId } },
                headers,
              }),
            }
          : {
              kind: 'run',
              run: await this.client.post('/v1/runs/{run_id}/cancel', {
                params: { path: { run_id: remoteId } },
                headers,
              }),
            }
      } catch (error) {
        // 409: it had already ended; read how.
        if (!(isServiceError(error) && error.status === 409)) throw error
        remote = batch
          ? { kind: 'batch', batch: await getBatch(ctx, remoteId) }
          : { kind: 'run', run: await getRun(ctx, remoteId) }
      }
    } catch (error) {
      this.ledger.intents.noteError(
        intent.id,
        `Canceled here, but the remote ${batch ? 'batch' : 'run'} could not be canceled: ${error instanceof Error ? error.message : String(error)}`,
      )
      throw new RemoteNodeError(
        'CANCELED',
        `The node run was canceled, but its remote ${batch ? 'batch' : 'run'} ${remoteId} could not be canceled (${error instanceof Error ? error.message : String(error)}); it may still run and be charged. Cancel it from the run list.`,
        { ...ids, cause: error },
      )
    }
    this.settle(intent, remote)
    throw canceled(ids)
  }

  /** Commits how the remote run or batch ended. */
  private settle(intent: Intent, remote: Remote): void {
    const { intents } = this.ledger
    if (remote.kind === 'run') {
      const { run } = remote
      if (run.status_code === 'succeeded')
        intents.finish(intent.id, 'succeeded', { remoteRunId: run.id })
      else if (run.status_code === 'canceled')
        intents.finish(intent.id, 'canceled', { remoteRunId: run.id })
      else if (run.status_code === 'failed') {
        intents.finish(intent.id, 'failed', {
          remoteRunId: run.id,
          error: `${run.failure_code ?? 'FAILED'}: ${failureWords(run, 'the run failed')}`,
        })
      }
      return
    }
    const { batch } = remote
    if (batch.status_code === 'succeeded')
      intents.finish(intent.id, 'succeeded', { remoteRunId: batch.id })
    else if (batch.status_code === 'canceled')
      intents.finish(intent.id, 'canceled', { remoteRunId: batch.id })
    else if (batch.status_code === 'failed' || batch.status_code === 'partial_succeeded') {
      intents.finish(intent.id, 'failed', {
        remoteRunId: batch.id,
        error: `${batch.failed_count} of ${batch.item_count} items failed, ${batch.canceled_count} canceled`,
      })
    }
  }

  /** The node's outcome from its ended remote run or batch; throws for anything but success. */
  private async outcome(
    context: NodeRunContext,
    target: RemoteTarget,
    intent: Intent,
    remote: Remote,
  ): Promise<NodeOutcome> {
    const { node, signal, emit } = context
    if (remote.kind === 'run') {
      const { run } = remote
      const costMicro = costMicroOf(run.cost)
      emit({ type: 'cost', costMicro })
      const ids = { intentId: intent.id, remoteRunId: run.id }
      if (run.status_code === 'canceled') throw canceled(ids)
      if (run.status_code !== 'succeeded') {
        throw new RemoteNodeError(
          'NODE_FAILED',
          failureWords(
            run,
            `The run of ${target.ref} failed${run.failure_code ? ` (${run.failure_code})` : ''}.`,
          ),
          {
            ...ids,
            failureCode: run.failure_code,
          },
        )
      }
      const outputs = await nodeOutputs(node, target.model, run, signal)
      return { outputs, costMicro, remoteRunId: run.id }
    }
    throw new Error('A single-run intent was followed as a batch.')
  }

  private point(point: DispatchPoint, nodeId: string, intentId: string | null): void {
    this.onPoint?.(point, { nodeId, intentId })
  }
}

/**
 * The service's words for why a run failed, or `fallback` when it sent none: `failure_message`
 * may be null, and a service may well send it empty (found against a service generated from the
 * contract, seed 1), which left the node's error without a word.
 */
function failureWords(run: Pick<Run, 'failure_message'> | undefined, fallback: string): string {
  const said = run?.failure_message?.trim() ?? ''
  return said === '' ? fallback : said
}

/** The body of a single run's intent, built once the intent's metadata is known. */
const runBodyOf =
  (inputs: Record<string, PortValue>, urlFor: UrlFor) =>
  async (metadata: IntentMetadata): Promise<RunDispatch> =>
    runBody(await serviceInput(inputs, urlFor), metadata)

/** The item indexes a batch intent's request holds (each item's run carries its index). */
function itemIndexesOf(intent: Intent): Set<number> {
  const items = (intent.request as { items?: { metadata?: { atelier_item?: unknown } }[] }).items
  const indexes = new Set<number>()
  ;(items ?? []).forEach((item, position) => {
    const index = item.metadata?.atelier_item
    indexes.add(typeof index === 'number' ? index : position)
  })
  return indexes
}

/** The index in the node's lists of the item a batch run was made for. */
function itemOf(run: Run): number | undefined {
  const index = (run.metadata as { atelier_item?: unknown } | null)?.atelier_item
  return typeof index === 'number' ? index : undefined
}

/** The outcome of fanning out an empty list: every output an empty list, nothing dispatched. */
function emptyFanOut(node: FlowNode, target: RemoteTarget): NodeOutcome {
  const names =
    node.outputs.length > 0
      ? node.outputs.map((p) => p.name)
      : (target.model?.outputs ?? []).map((d) => d.name)
  return { outputs: Object.fromEntries(names.map((name) => [name, []])), costMicro: 0 }
}

function notRemote(node: FlowNode): RemoteNodeError {
  return new RemoteNodeError(
    'NOT_A_REMOTE_NODE',
    `The node ${JSON.stringify(node.label)} (${node.type_code}) does not run on the service; the remote runner takes model and workflow-engine nodes.`,
  )
}

function formatCredits(micro: number): string {
  return (micro / 1_000_000).toFixed(4)
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, item]) => item !== undefined),
  ) as Partial<T>
}

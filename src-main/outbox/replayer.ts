import type { Ledger, Mirror, OutboxEntry, OutboxScope } from '../db'
import { isServiceError, type ServiceClient, type ServiceError } from '../service'
import { isOutboxError, OutboxError, Refusal } from './errors'
import { specOf, type SendContext, type Sent } from './kinds'
import {
  describeIssues,
  describeWrite,
  isPlaceholder,
  isWriteKind,
  KIND_NAMES,
  newPlaceholder,
  placeholdersOf,
  subjectOf,
  writeSchema,
  type FlowChanges,
  type FlowGraphWrite,
  type OfflineWrite,
} from './writes'

export type ReplayState = 'ok' | 'offline' | 'unauthorized' | 'failed' | 'aborted'

export interface ReplayedEntry {
  seq: number
  kind: string
  subjectId: string | null
  outcome: 'sent' | 'rejected' | 'pending'
  code?: string
  message?: string
}

export interface ReplayReport {
  state: ReplayState
  sent: number
  rejected: number
  /** Writes of this profile and organization still waiting after this replay. */
  pending: number
  /** Plain words for people when state is not ok. */
  message?: string
  /** The service's or client's code of what stopped the replay. */
  code?: string
  /** Each entry this replay looked at, in order. */
  entries: ReplayedEntry[]
  elapsedMs: number
}

/**
 * An entry as the user sees it: the write in its own shape, and where it stands. Its fields are
 * the ledger's own (`OutboxEntry`), less what stays inside (scope, payload, idempotency key).
 */
export interface OutboxItem extends Pick<
  OutboxEntry,
  | 'seq'
  | 'kind'
  | 'subjectId'
  | 'state'
  | 'attempts'
  | 'lastError'
  | 'lastErrorCode'
  | 'createdMs'
  | 'updatedMs'
  | 'sentMs'
  | 'placeholderId'
  | 'resultId'
> {
  /** Null when the stored payload is not one this version of Atelier can read. */
  write: OfflineWrite | null
  summary: string
}

export interface OutboxReplayerOptions {
  client: ServiceClient
  ledger: Ledger
  mirror: Mirror
  profileName: string
  orgId: string
  clock?: () => number
}

export interface FeedbackInput {
  /** true thumbs-up, false thumbs-down, null clears the rating. */
  isPositive: boolean | null
  comment?: string | null
}

export interface FlowEditOptions {
  /**
   * The flow's updated_at when the user started the edit; by default the mirror's copy. Null
   * sends the edit whatever changed on the service since.
   */
  basedOn?: string | null
}

/**
 * The replay under way per ledger and scope, shared by every replayer of that queue (the
 * scheduler and a screen may each hold one): two loops over one queue would send an entry twice.
 */
const RUNNING = new WeakMap<Ledger, Map<string, Promise<ReplayReport>>>()

type Step =
  | { outcome: 'sent'; message?: string }
  | { outcome: 'rejected'; code: string; message: string }
  | { outcome: 'stop'; state: Exclude<ReplayState, 'ok'>; code: string; message: string }

/**
 * Enqueues writes made offline and replays them against the service, one profile and
 * organization at a time. See the folder's index for the decisions.
 */
export class OutboxReplayer {
  private readonly client: ServiceClient
  private readonly ledger: Ledger
  private readonly mirror: Mirror
  private readonly scope: OutboxScope
  private readonly clock: () => number

  constructor(options: OutboxReplayerOptions) {
    this.client = options.client
    this.ledger = options.ledger
    this.mirror = options.mirror
    this.scope = { profile: options.profileName, orgId: options.orgId }
    this.clock = options.clock ?? Date.now
  }

  // ---- Writes

  giveFeedback(evaluationId: string, input: FeedbackInput): OutboxItem {
    const comment = input.comment?.trim() ? input.comment : null
    return this.enqueue({
      kind: 'evaluation.feedback',
      evaluationId,
      isPositive: input.isPositive,
      reason: input.isPositive === null ? null : comment,
    })
  }

  editFlow(flowId: string, changes: FlowChanges, options: FlowEditOptions = {}): OutboxItem {
    return this.enqueue({ kind: 'flow.update', ...this.flowBase(flowId, options), changes })
  }

  replaceFlowGraph(
    flowId: string,
    graph: FlowGraphWrite,
    options: FlowEditOptions = {},
  ): OutboxItem {
    return this.enqueue({ kind: 'flow.graph', ...this.flowBase(flowId, options), graph })
  }

  /** The new folder's local id is `item.subjectId`; later writes may use it as a folder id. */
  createFolder(name: string, options: { parentId?: string | null } = {}): OutboxItem {
    return this.enqueue({
      kind: 'folder.create',
      folderId: newPlaceholder(),
      name,
      parentId: options.parentId ?? null,
    })
  }

  renameFolder(folderId: string, name: string): OutboxItem {
    return this.enqueue({ kind: 'folder.rename', folderId, name })
  }

  moveFolder(folderId: string, parentId: string | null): OutboxItem {
    return this.enqueue({ kind: 'folder.move', folderId, parentId })
  }

  deleteFolder(folderId: string): OutboxItem {
    return this.enqueue({ kind: 'folder.delete', folderId })
  }

  moveAsset(assetId: string, folderId: string | null): OutboxItem {
    return this.enqueue({ kind: 'asset.move', assetId, folderId })
  }

  /** Checks and stores one write; nothing is stored when it is not valid. */
  enqueue(write: OfflineWrite): OutboxItem {
    const parsed = writeSchema.safeParse(write)
    if (!parsed.success) {
      throw new OutboxError(
        'INVALID_WRITE',
        `This ${isWriteKind(write.kind) ? KIND_NAMES[write.kind] : 'write'} cannot be saved: ${describeIssues(parsed.error)}.`,
      )
    }
    const checked = parsed.data
    for (const ref of placeholdersOf(checked)) {
      const creator = this.ledger.outbox.withPlaceholder(ref)
      if (!creator || !this.inScope(creator)) {
        throw new OutboxError(
          'UNKNOWN_PLACEHOLDER',
          `The folder ${ref} was not created offline with this profile and organization; use a folder id of the service, or create the folder first.`,
        )
      }
    }
    const { kind, ...payload } = checked
    const entry = this.ledger.outbox.enqueue({
      ...this.scope,
      kind,
      subjectId: subjectOf(checked),
      payload,
      placeholderId: checked.kind === 'folder.create' ? checked.folderId : null,
    })
    return toItem(entry)
  }

  // ---- What the user sees

  /** Unsent writes (pending or refused) about one record, oldest first. */
  pendingFor(subjectId: string): OutboxItem[] {
    return this.ledger.outbox
      .forSubject(subjectId)
      .filter((entry) => this.inScope(entry))
      .map(toItem)
  }

  /** Every write still waiting, oldest first. */
  pending(limit = 500): OutboxItem[] {
    return this.ledger.outbox.peekPending(this.scope, limit).map(toItem)
  }

  /** Puts a refused write back in its place in the queue; `replay()` then sends it. */
  retry(seq: number): OutboxItem {
    return retryRefused(this.ledger, seq, this.scope)
  }

  /** Forgets a refused write, once the user has seen why; waiting writes cannot be dropped. */
  discard(seq: number): OutboxItem {
    return discardRefused(this.ledger, seq, this.scope)
  }

  // ---- Replay

  /**
   * Sends the waiting writes, oldest first, one at a time, and stops at the first that cannot
   * be sent now. A call while a replay of the same queue runs (from this replayer or another
   * one on the same ledger, profile and organization) gets that replay's promise, and its signal.
   */
  replay(options: { signal?: AbortSignal } = {}): Promise<ReplayReport> {
    let byScope = RUNNING.get(this.ledger)
    if (!byScope) {
      byScope = new Map()
      RUNNING.set(this.ledger, byScope)
    }
    const key = `${this.scope.profile}\u0000${this.scope.orgId}`
    const running = byScope.get(key)
    if (running) return running
    const run = this.run(options.signal).finally(() => {
      byScope.delete(key)
    })
    byScope.set(key, run)
    return run
  }

  private async run(signal: AbortSignal | undefined): Promise<ReplayReport> {
    const started = this.clock()
    const report: ReplayReport = {
      state: 'ok',
      sent: 0,
      rejected: 0,
      pending: 0,
      entries: [],
      elapsedMs: 0,
    }
    let previous: number | null = null
    try {
      for (;;) {
        if (signal?.aborted) {
          stopWith(report, 'aborted', 'ABORTED', abortedMessage())
          break
        }
        const [entry] = this.ledger.outbox.peekPending(this.scope, 1)
        if (!entry) break
        // Every step moves the head out of pending or stops; this guards that promise.
        if (entry.seq === previous) {
          stopWith(report, 'failed', 'STUCK', `Outbox entry #${entry.seq} did not move on.`)
          break
        }
        previous = entry.seq
        const step = await this.replayOne(entry, signal)
        const seen: ReplayedEntry = {
          seq: entry.seq,
          kind: entry.kind,
          subjectId: entry.subjectId,
          outcome: step.outcome === 'stop' ? 'pending' : step.outcome,
        }
        if (step.outcome !== 'sent' && 'code' in step) seen.code = step.code
        if (step.message !== undefined) seen.message = step.message
        report.entries.push(seen)
        if (step.outcome === 'sent') report.sent++
        else if (step.outcome === 'rejected') report.rejected++
        else {
          stopWith(report, step.state, step.code, step.message)
          break
        }
      }
    } catch (error) {
      // The ledger itself failed (locked, full disk): nothing was lost, the entries stay.
      stopWith(report, 'failed', 'LEDGER_ERROR', errorText(error))
    }
    report.pending = this.countPending()
    if (report.state === 'offline') {
      report.message =
        `The service cannot be reached, so ${report.pending} write(s) wait in the outbox, in order; they are sent when it answers again. ${report.message ?? ''}`.trim()
    }
    report.elapsedMs = this.clock() - started
    return report
  }

  private async replayOne(entry: OutboxEntry, signal: AbortSignal | undefined): Promise<Step> {
    if (!isWriteKind(entry.kind)) {
      // Most likely written by a newer Atelier: refusing it would lose a write that version can
      // send, and skipping it would break the order, so the replay stops until it is handled.
      const message = `Outbox entry #${entry.seq} is a ${entry.kind} write, which this version of Atelier cannot send; update Atelier to send it and the writes after it.`
      this.ledger.outbox.noteFailure(entry.seq, message, 'UNKNOWN_WRITE_KIND')
      return { outcome: 'stop', state: 'failed', code: 'UNKNOWN_WRITE_KIND', message }
    }
    const parsed = writeSchema.safeParse({ ...asObject(entry.payload), kind: entry.kind })
    if (!parsed.success) {
      return this.reject(
        entry,
        new Refusal(
          'INVALID_WRITE',
          `The stored write is not valid (${describeIssues(parsed.error)}), so it cannot be sent.`,
        ),
        false,
      )
    }
    const write = parsed.data
    let context: SendContext
    try {
      context = this.contextFor(entry, write, signal)
      // Placeholders are resolved up front, so a write that depends on a refused create is
      // refused without a request rather than half-sent.
      for (const ref of placeholdersOf(write)) context.folderId(ref)
    } catch (error) {
      if (error instanceof Refusal) return this.reject(entry, error, false)
      throw error
    }
    const spec = specOf(write)
    let sent: Sent | null = null
    let failure: unknown
    try {
      sent = await spec.send(context, write)
    } catch (error) {
      failure = error
    }
    if (!sent && isServiceError(failure) && spec.recover && !signal?.aborted) {
      try {
        sent = await spec.recover(context, write, failure)
      } catch (error) {
        failure = error
      }
    }
    if (sent) return this.settle(entry, sent)
    if (failure instanceof Refusal) return this.reject(entry, failure, false)
    return this.judge(entry, failure, signal)
  }

  private contextFor(
    entry: OutboxEntry,
    write: OfflineWrite,
    signal: AbortSignal | undefined,
  ): SendContext {
    return {
      client: this.client,
      mirror: this.mirror,
      orgId: entry.orgId,
      headers: { 'Idempotency-Key': entry.idempotencyKey, 'X-Organization-Id': entry.orgId },
      signal,
      folderId: (ref) => this.resolveFolder(ref),
      base:
        write.kind === 'flow.update' || write.kind === 'flow.graph' ? this.flowBaseOf(write) : null,
      earlierAttempts: (error?: ServiceError) =>
        entry.attempts + Math.max(0, (error?.attempts ?? 1) - 1),
    }
  }

  private resolveFolder(ref: string): string {
    if (!isPlaceholder(ref)) return ref
    const creator = this.ledger.outbox.withPlaceholder(ref)
    if (!creator || !this.inScope(creator)) {
      throw new Refusal(
        'DEPENDENCY_MISSING',
        `It points at a folder created offline (${ref}) whose creation is no longer in the outbox, so the service has no such folder. Discard this write.`,
      )
    }
    const name = describeCreator(creator)
    if (creator.state === 'sent' && creator.resultId) return creator.resultId
    if (creator.state === 'rejected') {
      throw new Refusal(
        'DEPENDENCY_REJECTED',
        `It depends on creating the folder ${name} (outbox #${creator.seq}), which the service refused (${creator.lastError ?? 'no reason given'}); so it was not sent. Retry or discard #${creator.seq} first, then retry this one.`,
      )
    }
    throw new Refusal(
      'DEPENDENCY_PENDING',
      `It depends on creating the folder ${name} (outbox #${creator.seq}), which has not been sent yet.`,
    )
  }

  /** The updated_at a flow edit expects: its own base, or what the edit before it answered. */
  private flowBaseOf(write: { basedOn: string | null; after: number | null }): string | null {
    if (write.after === null) return write.basedOn
    const prior = this.ledger.outbox.get(write.after)
    if (prior?.state === 'rejected') {
      throw new Refusal(
        'DEPENDENCY_REJECTED',
        `It was made on top of an earlier edit of this flow (outbox #${prior.seq}) that the service refused (${prior.lastError ?? 'no reason given'}); so it was not sent. Retry or discard #${prior.seq} first, then retry this one.`,
      )
    }
    if (prior?.state === 'sent' && prior.resultUpdatedAt) return prior.resultUpdatedAt
    return write.basedOn
  }

  private flowBase(
    flowId: string,
    options: FlowEditOptions,
  ): { flowId: string; basedOn: string | null; after: number | null } {
    // The mirror does not show unsent edits, so a second edit made offline is made on top of
    // the first, not on the mirror's copy: it expects what the first one leaves behind.
    const earlier = this.ledger.outbox
      .forSubject(flowId)
      .filter(
        (e) =>
          this.inScope(e) &&
          e.state === 'pending' &&
          (e.kind === 'flow.update' || e.kind === 'flow.graph'),
      )
      .at(-1)
    const basedOn =
      options.basedOn !== undefined
        ? options.basedOn
        : (this.mirror.flows.get({ orgId: this.scope.orgId }, flowId)?.updated_at ?? null)
    return { flowId, basedOn, after: earlier && basedOn !== null ? earlier.seq : null }
  }

  private settle(entry: OutboxEntry, sent: Sent): Step {
    this.ledger.outbox.markSent(entry.seq, sent.result)
    try {
      sent.apply(this.mirror)
    } catch (error) {
      // The service has it; the next sync brings the mirror's copy up to date.
      return {
        outcome: 'sent',
        message: `Sent, but the local copy could not be updated (${errorText(error)}); the next sync updates it.`,
      }
    }
    return { outcome: 'sent' }
  }

  private reject(entry: OutboxEntry, refusal: Refusal, sent: boolean): Step {
    this.ledger.outbox.markRejected(entry.seq, refusal.message, { code: refusal.code, sent })
    return { outcome: 'rejected', code: refusal.code, message: refusal.message }
  }

  /** What a failed request means for the entry and for the replay. */
  private judge(entry: OutboxEntry, error: unknown, signal: AbortSignal | undefined): Step {
    if (signal?.aborted || (isServiceError(error) && error.code === 'ABORTED')) {
      // The request may have reached the service: counted, so a repeat knows it may meet itself.
      this.ledger.outbox.noteFailure(entry.seq, abortedMessage(), 'ABORTED')
      return { outcome: 'stop', state: 'aborted', code: 'ABORTED', message: abortedMessage() }
    }
    if (!isServiceError(error)) {
      const message = errorText(error)
      this.ledger.outbox.noteFailure(entry.seq, message, 'INTERNAL')
      return { outcome: 'stop', state: 'failed', code: 'INTERNAL', message }
    }
    const { status } = error
    const refused =
      status >= 400 && status < 500 && status !== 401 && status !== 408 && status !== 429
    if (refused) {
      const said = error.serviceMessage?.trim()
      return this.reject(entry, new Refusal(error.code, said ? said : error.message), true)
    }
    this.ledger.outbox.noteFailure(entry.seq, error.message, error.code)
    const state = status === 0 ? 'offline' : status === 401 ? 'unauthorized' : 'failed'
    return { outcome: 'stop', state, code: error.code, message: error.message }
  }

  private countPending(): number {
    return this.ledger.outbox.countPending(this.scope)
  }

  private inScope(entry: OutboxEntry): boolean {
    return entry.profile === this.scope.profile && entry.orgId === this.scope.orgId
  }
}

/**
 * Puts a refused write back in its old place among the waiting ones. Without a scope, any
 * profile's entry (the command line names entries by number).
 */
export function retryRefused(ledger: Ledger, seq: number, scope?: OutboxScope): OutboxItem {
  const entry = refusedEntry(ledger, seq, 'retried', scope)
  ledger.outbox.retry(entry.seq)
  return toItem(ledger.outbox.get(seq) ?? entry)
}

/** Forgets a refused write; a waiting or sent one is refused with the reason. */
export function discardRefused(ledger: Ledger, seq: number, scope?: OutboxScope): OutboxItem {
  const entry = refusedEntry(ledger, seq, 'discarded', scope)
  ledger.outbox.discard(entry.seq)
  return toItem(entry)
}

function refusedEntry(
  ledger: Ledger,
  seq: number,
  verb: string,
  scope: OutboxScope | undefined,
): OutboxEntry {
  const entry = ledger.outbox.get(seq)
  const inScope = !scope || (entry?.profile === scope.profile && entry.orgId === scope.orgId)
  if (!entry || !inScope) {
    throw new OutboxError(
      'ENTRY_NOT_FOUND',
      `There is no outbox entry #${seq}${scope ? ' for this profile and organization' : ''}; \`atelier outbox\` lists them.`,
    )
  }
  if (entry.state !== 'rejected') {
    throw new OutboxError(
      'ENTRY_NOT_REJECTED',
      entry.state === 'pending'
        ? `Outbox entry #${seq} is waiting to be sent, not refused; only refused writes can be ${verb}.`
        : `Outbox entry #${seq} was already sent; only refused writes can be ${verb}.`,
    )
  }
  return entry
}

/** An entry for display, whatever its kind or payload. */
export function toItem(entry: OutboxEntry): OutboxItem {
  const parsed = isWriteKind(entry.kind)
    ? writeSchema.safeParse({ ...asObject(entry.payload), kind: entry.kind })
    : null
  const write = parsed?.success ? parsed.data : null
  return {
    seq: entry.seq,
    kind: entry.kind,
    subjectId: entry.subjectId,
    state: entry.state,
    write,
    summary: write ? describeWrite(write) : `${entry.kind} (not readable by this version)`,
    attempts: entry.attempts,
    lastError: entry.lastError,
    lastErrorCode: entry.lastErrorCode,
    createdMs: entry.createdMs,
    updatedMs: entry.updatedMs,
    sentMs: entry.sentMs,
    placeholderId: entry.placeholderId,
    resultId: entry.resultId,
  }
}

function describeCreator(entry: OutboxEntry): string {
  const name = asObject(entry.payload).name
  return typeof name === 'string' ? JSON.stringify(name) : (entry.placeholderId ?? '')
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

function stopWith(
  report: ReplayReport,
  state: Exclude<ReplayState, 'ok'>,
  code: string,
  message: string,
): void {
  report.state = state
  report.code = code
  report.message = message
}

function abortedMessage(): string {
  return 'The replay was stopped; the write stays in the outbox, in its place, and the next replay sends it.'
}

function errorText(error: unknown): string {
  if (isOutboxError(error)) return error.message
  return error instanceof Error ? error.message : String(error)
}

import { isoTime } from '../clock'
import type { SandboxServices } from '../services'
import type { DeliveryQueries } from './queries'
import {
  COLLECTIONS,
  OPEN_STATES,
  type DeliveryAttempt,
  type DeliveryCollection,
  type DeliveryCore,
  type DeliveryStatus,
  type FailureReason,
  type WebhookDeliveryAttempt,
} from './records'
import { sign } from './secrets'
import { checkTarget, postOnce, type PostOutcome, type TargetCheck } from './sender'

export interface DeliverySettings {
  /** Per attempt, from connecting to the end of the answer. */
  timeoutMs: number
  /** The wait after the first failed attempt; each later wait doubles it. */
  retryBaseMs: number
  /** Attempts per delivery, the first included. The spec leaves it open; 5 matches its retry guidance. */
  maxAttempts: number
}

export const DEFAULT_SETTINGS: DeliverySettings = {
  timeoutMs: 5_000,
  retryBaseMs: 1_000,
  maxAttempts: 5,
}

/** Where a delivery goes and the key that signs it, or why it cannot go anywhere any more. */
export type Target = { url: string; key: string } | { gone: string }

export interface DeliveryKind {
  /** Looked up at each attempt, so a webhook's new URL or secret applies to its retries. */
  target: (orgId: string, delivery: DeliveryCore) => Target
  /** Webhook attempts add `succeeded` and `next_retry_at` and are records of their own too. */
  webhook: boolean
}

interface Ref {
  collection: DeliveryCollection
  orgId: string
  id: string
}

type Verdict = 'succeeded' | 'rejected' | 'retry'

/** 2xx succeeds; a 4xx other than 408 and 429 says the receiver will never take it; the rest may pass later. */
function verdictOf(outcome: PostOutcome): Verdict {
  const status = outcome.statusCode
  if (status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return 'rejected'
  }
  if (status !== null && status >= 200 && status < 300 && outcome.error === null) {
    return 'succeeded'
  }
  return 'retry'
}

function summary(outcome: PostOutcome): string {
  if (outcome.error !== null) return outcome.error
  return `the receiver answered HTTP ${String(outcome.statusCode)}.`
}

const MAX_TIMER_MS = 2 ** 31 - 1

function abortion(signal: AbortSignal): Promise<'aborted'> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve('aborted')
      return
    }
    signal.addEventListener(
      'abort',
      () => {
        resolve('aborted')
      },
      { once: true },
    )
  })
}

/**
 * Sends deliveries and retries them. State lives in the delivery records (pending → processing
 * → succeeded, or → queued → processing … → failed / failed_non_retryable), so a restarted
 * sandbox picks up where the last one stopped: `resume` schedules every unfinished delivery,
 * and an attempt cut off by `stop` was never recorded, so it is simply made again.
 */
export class DeliveryEngine {
  settings: DeliverySettings = { ...DEFAULT_SETTINGS }
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private readonly inflight = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >()
  private stopped = false

  constructor(
    private readonly services: SandboxServices,
    private readonly queries: DeliveryQueries,
    private readonly kinds: Record<DeliveryCollection, DeliveryKind>,
  ) {}

  /** The state fields of a new delivery, in the contract's order: nothing tried, first attempt due now. */
  freshState(now: string) {
    return {
      status_code: 'pending' as const,
      failure_reason_code: null,
      failure_detail: null,
      attempt_count: 0,
      max_attempts: this.settings.maxAttempts,
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
      completed_at: null,
      attempts: [] as never[],
    }
  }

  /** Stores a new delivery and arranges its first attempt. */
  open<T extends DeliveryCore>(
    collection: DeliveryCollection,
    orgId: string,
    parentId: string,
    delivery: T,
  ): T {
    this.services.store.insert(collection, orgId, delivery, parentId)
    this.schedule(collection, orgId, delivery.id, this.services.clock())
    return delivery
  }

  /** Arranges the next attempt of a delivery for `dueAtMs` (now when it is overdue). */
  schedule(collection: DeliveryCollection, orgId: string, id: string, dueAtMs: number): void {
    if (this.stopped) return
    const key = `${collection}/${id}`
    clearTimeout(this.timers.get(key))
    const delay = Math.min(Math.max(0, dueAtMs - this.services.clock()), MAX_TIMER_MS)
    const timer = setTimeout(() => {
      this.timers.delete(key)
      this.start({ collection, orgId, id })
    }, delay)
    timer.unref()
    this.timers.set(key, timer)
  }

  /** Schedules every unfinished delivery found in the database (at start). */
  resume(): void {
    const collections = Object.keys(this.kinds) as DeliveryCollection[]
    for (const open of this.queries.open(collections)) {
      const due = open.dueAt === null ? Number.NaN : Date.parse(open.dueAt)
      this.schedule(
        open.collection,
        open.orgId,
        open.id,
        Number.isNaN(due) ? this.services.clock() : due,
      )
    }
  }

  /** Drops a delivery's timer and cuts its attempt short (its owner is being deleted). */
  forget(collection: DeliveryCollection, id: string): void {
    const key = `${collection}/${id}`
    clearTimeout(this.timers.get(key))
    this.timers.delete(key)
    this.inflight.get(key)?.controller.abort()
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
    const running = [...this.inflight.values()]
    for (const attempt of running) attempt.controller.abort()
    await Promise.allSettled(running.map((attempt) => attempt.done))
  }

  private start(ref: Ref): void {
    const key = `${ref.collection}/${ref.id}`
    if (this.stopped || this.inflight.has(key)) return
    const controller = new AbortController()
    const done = this.attempt(ref, controller.signal)
      .catch((error: unknown) => {
        if (!this.stopped) console.error(`sandbox: delivery ${ref.id} failed unexpectedly`, error)
      })
      .finally(() => {
        this.inflight.delete(key)
      })
    this.inflight.set(key, { controller, done })
  }

  /** Whether the work of an attempt must be dropped unrecorded: closing, or its owner is gone. */
  private abandoned(signal: AbortSignal): boolean {
    return this.stopped || signal.aborted
  }

  private async attempt(ref: Ref, signal: AbortSignal): Promise<void> {
    const { store } = this.services
    const delivery = store.get<DeliveryCore>(ref.collection, ref.id, ref.orgId)
    if (!delivery || !OPEN_STATES.includes(delivery.status_code)) return
    const target = this.kinds[ref.collection].target(ref.orgId, delivery)
    if ('gone' in target) {
      this.finish(ref, 'failed_non_retryable', null, target.gone)
      return
    }
    this.change(ref, (current) => ({
      ...current,
      status_code: 'processing',
      next_attempt_at: null,
    }))

    const check: TargetCheck | 'aborted' = await Promise.race([
      checkTarget(target.url),
      abortion(signal),
    ])
    if (check === 'aborted' || this.abandoned(signal)) return
    if (!check.ok) {
      this.finish(ref, 'failed_non_retryable', 'dns_validation_failed', check.detail)
      return
    }

    const attemptId = store.newId()
    const startedAt = store.now()
    const body = Buffer.from(delivery.payload_bytes, 'utf8')
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'Atelier-Sandbox-Deliveries',
      'Service-Signature': sign(target.key, body),
      // The attempt's own id: a receiver's log line joins the attempt record by it.
      'Service-Request-Id': attemptId,
      // Receivers are asked to be idempotent on the delivery id; this is where they find it.
      'Service-Delivery-Id': delivery.id,
    }
    const outcome = await postOnce(check.url, body, headers, this.settings.timeoutMs, signal)
    if (this.abandoned(signal)) return
    this.record(ref, attemptId, startedAt, outcome)
  }

  private delayAfter(attemptNumber: number): number {
    return this.settings.retryBaseMs * 2 ** (attemptNumber - 1)
  }

  private record(ref: Ref, attemptId: string, startedAt: string, outcome: PostOutcome): void {
    const { store } = this.services
    const webhook = this.kinds[ref.collection].webhook
    const verdict = verdictOf(outcome)
    const next = store.transaction(() => {
      const current = store.get<DeliveryCore>(ref.collection, ref.id, ref.orgId)
      if (!current) return null
      const number = current.attempt_count + 1
      const nowMs = this.services.clock()
      const now = isoTime(nowMs)
      let status: DeliveryStatus = 'queued'
      let reason: FailureReason | null = null
      let detail: string | null = null
      let retryAtMs: number | null = null
      if (verdict === 'succeeded') {
        status = 'succeeded'
      } else if (verdict === 'rejected') {
        status = 'failed_non_retryable'
        reason = 'client_rejected'
        detail = `The receiver answered HTTP ${String(outcome.statusCode)}; a 4xx other than 408 and 429 means it will not take this delivery, so it is not retried.`
      } else if (number >= current.max_attempts) {
        status = 'failed'
        reason = 'max_attempts_exhausted'
        detail = `All ${number} attempts failed; the last one: ${summary(outcome)}`
      } else {
        retryAtMs = nowMs + this.delayAfter(number)
      }
      const retryAt = retryAtMs === null ? null : isoTime(retryAtMs)
      const base: DeliveryAttempt = {
        id: attemptId,
        delivery_id: ref.id,
        attempt_number: number,
        status_code: outcome.statusCode,
        response_body: outcome.body,
        response_time_ms: outcome.timeMs,
        error_message: outcome.error,
        created_at: startedAt,
      }
      const attempt: DeliveryAttempt | WebhookDeliveryAttempt = webhook
        ? { ...base, succeeded: verdict === 'succeeded', next_retry_at: retryAt }
        : base
      store.update<DeliveryCore>(ref.collection, ref.id, ref.orgId, (delivery) => ({
        ...delivery,
        status_code: status,
        failure_reason_code: reason,
        failure_detail: detail,
        attempt_count: number,
        next_attempt_at: retryAt,
        completed_at: status === 'queued' ? null : now,
        attempts: [...delivery.attempts, attempt],
      }))
      if (webhook)
        this.services.store.insertImmutable(COLLECTIONS.webhookAttempts, ref.orgId, attempt, ref.id)
      return retryAtMs
    })
    if (next !== null) this.schedule(ref.collection, ref.orgId, ref.id, next)
  }

  private finish(
    ref: Ref,
    status: DeliveryStatus,
    reason: FailureReason | null,
    detail: string,
  ): void {
    this.change(ref, (current) => ({
      ...current,
      status_code: status,
      failure_reason_code: reason,
      failure_detail: detail,
      next_attempt_at: null,
      completed_at: this.services.store.now(),
    }))
  }

  private change(ref: Ref, fn: (current: DeliveryCore) => DeliveryCore): void {
    const { store } = this.services
    store.transaction(() => {
      if (store.get(ref.collection, ref.id, ref.orgId)) {
        store.update<DeliveryCore>(ref.collection, ref.id, ref.orgId, fn)
      }
    })
  }
}

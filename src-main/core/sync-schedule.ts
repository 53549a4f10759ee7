import type {
  SyncProgressStatus,
  SyncStatus,
  SyncStatusState,
  SyncSummary,
} from '../../src-shared/domain/sync'
import type { Logger } from '../log'
import { isServiceError, type ServiceClient } from '../service'
import type { SyncResult } from '../sync'
import type { Timers } from './timers'

export const SYNC_INTERVAL_MS = 5 * 60_000
export const OFFLINE_BACKOFF = { initialMs: 30_000, maxMs: 5 * 60_000 } as const
/**
 * While offline, a cheap request asks whether the service is back: soon at first, then less
 * often, but never more than 4 s apart, so the app notices within about 5 s without a click.
 */
export const PROBE_BACKOFF = { initialMs: 500, maxMs: 4_000 } as const
/** Progress alone is pushed at most this often; changes of state go out at once. */
export const PROGRESS_EVENT_MS = 100

/** A probe answers within this, or counts as no answer: the next one follows soon anyway. */
export const PROBE_TIMEOUT_MS = 2_000

/**
 * The probe the app uses: the service's liveness path. Any HTTP answer, even a refusal, means
 * the service can be reached again; only a connection that fails or times out means offline.
 */
export function healthProbe(client: ServiceClient): (signal: AbortSignal) => Promise<boolean> {
  return async (signal) => {
    try {
      await client.get('/v1/health', { signal, timeoutMs: PROBE_TIMEOUT_MS })
      return true
    } catch (error) {
      return isServiceError(error) && error.status > 0
    }
  }
}

/** One whole sync: pull, then whatever runs after it. Reports progress as it goes. */
export type SyncJob = (
  signal: AbortSignal,
  progress: (progress: SyncProgressStatus) => void,
) => Promise<SyncResult>

export interface SchedulerOptions {
  job: SyncJob
  logger: Logger
  clock: () => number
  timers: Timers
  intervalMs: number
  backoff: { initialMs: number; maxMs: number }
  lastOkAt: number | null
  /** Told of every new status (progress alone at most every PROGRESS_EVENT_MS). */
  onStatus: (status: SyncStatus) => void
  /**
   * One cheap request: resolves true when the service answered. Asked while offline, on
   * `probeBackoff`; a yes starts a sync at once. Without it only the sync's own backoff retries.
   */
  probe?: ((signal: AbortSignal) => Promise<boolean>) | undefined
  probeBackoff?: { initialMs: number; maxMs: number } | undefined
}

const STATE_OF: Record<SyncResult['state'], SyncStatusState> = {
  ok: 'idle',
  offline: 'offline',
  unauthorized: 'unauthorized',
  failed: 'error',
  aborted: 'idle',
}

/**
 * Runs the sync now and then, one at a time: at start, every `intervalMs` after the last one
 * ended, on demand (a demand while one runs joins it), sooner again when the service could not
 * be reached (backoff doubling from 30 s to 5 min), and at once when a request succeeds while
 * offline: while offline a cheap probe asks every 0.5 s to 4 s (`PROBE_BACKOFF`). `close` aborts the running sync and plans nothing more.
 */
export class SyncScheduler {
  private current: Promise<SyncStatus> | null = null
  /** Who `current` belongs to: a run releases it only if it is still its own. */
  private currentRun: object | null = null
  private controller: AbortController | null = null
  private timer: unknown = null
  /** Consecutive syncs that ended offline or failed: the backoff's exponent. */
  private failures = 0
  private closed = false
  private state: SyncStatus
  private lastProgressPush = 0
  private pendingProgress: ReturnType<typeof setTimeout> | null = null
  private probeTimer: unknown = null
  /** Probes asked since the state became offline: the probe backoff's exponent. */
  private probes = 0
  private probing: AbortController | null = null

  constructor(private readonly options: SchedulerOptions) {
    this.state = {
      state: 'idle',
      lastOkAt: options.lastOkAt,
      last: null,
      progress: null,
      nextAt: null,
    }
  }

  status(): SyncStatus {
    return this.state
  }

  /** Starts a sync, or joins the one running; resolves with the status once it has ended. */
  syncNow(reason = 'asked'): Promise<SyncStatus> {
    if (this.closed) return Promise.resolve(this.state)
    if (this.current) return this.current
    this.cancelTimer()
    const token = {}
    // Started a tick later, so that whoever listens to `syncing` finds `current` already set.
    const running = Promise.resolve().then(() => this.run(reason, token))
    this.current = running
    this.currentRun = token
    return running
  }

  /** Plans a sync `delayMs` from now, unless one runs or is asked for before then. */
  syncAfter(delayMs: number, reason: string): void {
    if (this.closed || this.current) return
    this.plan(delayMs, reason)
  }

  /**
   * A request of the client got a successful answer. While offline that means the service is
   * back: sync now rather than at the end of the backoff.
   */
  noteSuccess(): void {
    if (this.closed || this.current || this.state.state !== 'offline') return
    void this.syncNow('the service answered again')
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.cancelTimer()
    this.stopProbing()
    this.cancelProgress()
    this.controller?.abort(new Error('Atelier is closing.'))
    await this.current?.catch(() => undefined)
  }

  private async run(reason: string, token: object): Promise<SyncStatus> {
    try {
      return await this.runOnce(reason, token)
    } finally {
      this.release(token)
    }
  }

  /**
   * Before the final status goes out: a timer or a listener reacting to it must start a new
   * sync, not join this one.
   */
  private release(token: object): void {
    if (this.currentRun !== token) return
    this.current = null
    this.currentRun = null
  }

  private async runOnce(reason: string, token: object): Promise<SyncStatus> {
    const { logger, clock } = this.options
    const controller = new AbortController()
    this.controller = controller
    this.publish({ ...this.state, state: 'syncing', progress: null, nextAt: null })
    logger.info('sync started', { reason })
    let result: SyncResult
    try {
      result = await this.options.job(controller.signal, (progress) => {
        this.onProgress(progress)
      })
    } catch (error) {
      // The engine reports its own failures as results; this is anything else (a disk error).
      logger.error('sync stopped by an unexpected error', { err: error })
      result = {
        state: 'failed',
        message: `The sync stopped on an unexpected problem: ${error instanceof Error ? error.message : String(error)}`,
        collections: [],
        elapsedMs: 0,
      }
    } finally {
      this.controller = null
      this.cancelProgress()
    }
    if (this.closed) return this.state

    const now = clock()
    const summary = summarize(result, now)
    const ok = result.state === 'ok'
    if (ok) this.failures = 0
    else if (result.state === 'offline' || result.state === 'failed') this.failures++
    const delay = this.nextDelay(result.state)
    this.release(token)
    this.plan(delay)
    const message = `sync ${summary.outcome} in ${(summary.elapsedMs / 1000).toFixed(1)} s`
    const fields = { ...summary, collections: result.collections, nextInMs: delay }
    if (ok) logger.info(message, fields)
    else logger.warn(message, fields)
    this.publish({
      state: STATE_OF[result.state],
      lastOkAt: ok ? now : this.state.lastOkAt,
      last: summary,
      progress: null,
      nextAt: delay === null ? null : now + delay,
    })
    return this.state
  }

  private nextDelay(outcome: SyncResult['state']): number | null {
    if (outcome === 'aborted') return null
    if (outcome === 'offline' || outcome === 'failed') {
      const { initialMs, maxMs } = this.options.backoff
      return Math.min(maxMs, initialMs * 2 ** Math.max(0, this.failures - 1))
    }
    // A refused key is not fixed by asking again soon: the regular interval is enough.
    return this.options.intervalMs
  }

  private plan(delay: number | null, reason = 'scheduled'): void {
    this.cancelTimer()
    if (delay === null || this.closed) return
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = null
      void this.syncNow(reason)
    }, delay)
  }

  private cancelTimer(): void {
    if (this.timer === null) return
    this.options.timers.clearTimeout(this.timer)
    this.timer = null
  }

  private onProgress(progress: SyncProgressStatus): void {
    if (this.closed || this.state.state !== 'syncing') return
    // Kept at once, pushed at most every PROGRESS_EVENT_MS: a fast sync makes hundreds.
    this.state = { ...this.state, progress }
    if (this.pendingProgress !== null) return
    const wait = this.lastProgressPush + PROGRESS_EVENT_MS - performance.now()
    if (wait <= 0) {
      this.pushProgress()
      return
    }
    this.pendingProgress = setTimeout(() => {
      this.pendingProgress = null
      this.pushProgress()
    }, wait)
  }

  private pushProgress(): void {
    if (this.closed || this.state.state !== 'syncing') return
    this.lastProgressPush = performance.now()
    this.options.onStatus(this.state)
  }

  private cancelProgress(): void {
    if (this.pendingProgress === null) return
    clearTimeout(this.pendingProgress)
    this.pendingProgress = null
  }

  private publish(status: SyncStatus): void {
    this.cancelProgress()
    this.state = status
    this.lastProgressPush = performance.now()
    this.options.onStatus(status)
    if (status.state === 'offline') this.planProbe()
    else if (status.state !== 'syncing') this.stopProbing()
  }

  /** The next probe, unless one is planned or under way already. */
  private planProbe(): void {
    const { probe } = this.options
    if (!probe || this.closed || this.probeTimer !== null || this.probing) return
    const { initialMs, maxMs } = this.options.probeBackoff ?? PROBE_BACKOFF
    const delay = Math.min(maxMs, initialMs * 2 ** this.probes)
    this.probes++
    this.probeTimer = this.options.timers.setTimeout(() => {
      this.probeTimer = null
      void this.runProbe(probe)
    }, delay)
  }

  private async runProbe(probe: (signal: AbortSignal) => Promise<boolean>): Promise<void> {
    if (this.closed || this.state.state !== 'offline') return
    const controller = new AbortController()
    this.probing = controller
    const answered = await probe(controller.signal).catch(() => false)
    if (this.probing === controller) this.probing = null
    // Read again after the await: a sync or `close` may have changed it meanwhile.
    if (this.isClosed() || this.status().state !== 'offline') return
    if (answered) {
      void this.syncNow('the service answered again')
      return
    }
    this.planProbe()
  }

  private isClosed(): boolean {
    return this.closed
  }

  private stopProbing(): void {
    this.probes = 0
    this.probing?.abort()
    this.probing = null
    if (this.probeTimer === null) return
    this.options.timers.clearTimeout(this.probeTimer)
    this.probeTimer = null
  }
}

function summarize(result: SyncResult, finishedAt: number): SyncSummary {
  return {
    outcome: result.state,
    finishedAt,
    elapsedMs: result.elapsedMs,
    fetched: result.collections.reduce((sum, c) => sum + c.fetched, 0),
    deleted: result.collections.reduce((sum, c) => sum + c.tombstones, 0),
    message: result.message ?? null,
    code: result.code ?? null,
  }
}

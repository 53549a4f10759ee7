import type {
  SyncProgressStatus,
  SyncStatus,
  SyncStatusState,
  SyncSummary,
} from '../../src-shared/domain/sync'
import type { Logger } from '../log'
import type { SyncResult } from '../sync'
import type { Timers } from './timers'

export const SYNC_INTERVAL_MS = 5 * 60_000
export const OFFLINE_BACKOFF = { initialMs: 30_000, maxMs: 5 * 60_000 } as const
/** Progress alone is pushed at most this often; changes of state go out at once. */
export const PROGRESS_EVENT_MS = 100

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
 * offline. `close` aborts the running sync and plans nothing more.
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

import { setTimeout as delay } from 'node:timers/promises'
import type { Batch, Run, RunLog } from '../../../src-shared/api'
import { decimalMicro } from '../../db'
import { isServiceError, type ServiceClient } from '../../service'
import type { NodeEvent } from '../types'
import { RemoteNodeError } from './errors'
import { nextPollWait, type PollTiming } from './poll-timing'

export interface PollPolicy extends PollTiming {
  /**
   * Rounds of failed polls in a row (each already retried by the client) before following is
   * given up: the run goes on at the service and the intent stays open for a later resume.
   */
  maxFailedRounds: number
}

export const DEFAULT_POLL: Readonly<PollPolicy> = {
  initialMs: 100,
  factor: 1.5,
  maxMs: 5000,
  dueShare: 0.02,
  minMs: 5,
  progressMs: 1000,
  maxFailedRounds: 3,
}

/** Log lines of a run still going are read at most this often; a finished run's all at once. */
const LOG_EVERY_MS = 2000

/** What following a run needs: where to ask, when to stop, whom to tell. */
export interface FollowContext {
  client: ServiceClient
  orgId: string
  poll: PollPolicy
  signal: AbortSignal | undefined
  emit: (event: NodeEvent) => void
}

const TERMINAL_RUN = new Set(['succeeded', 'failed', 'canceled'])
const TERMINAL_BATCH = new Set(['succeeded', 'partial_succeeded', 'failed', 'canceled'])

export const isTerminalRun = (run: Pick<Run, 'status_code'>) => TERMINAL_RUN.has(run.status_code)
export const isTerminalBatch = (batch: Pick<Batch, 'status_code'>) =>
  TERMINAL_BATCH.has(batch.status_code)

export const costMicroOf = (cost: string | null | undefined): number => decimalMicro(cost) ?? 0

/** Waits, unless the signal says stop first (then rejects with its reason). */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : {})
}

function headersOf(ctx: Pick<FollowContext, 'orgId'>) {
  return { 'X-Organization-Id': ctx.orgId }
}

const LEVELS = new Set(['debug', 'info', 'warning', 'error'])
const levelOf = (code: string) =>
  (LEVELS.has(code) ? code : code === 'warn' ? 'warning' : 'info') as
    'debug' | 'info' | 'warning' | 'error'

/**
 * A run's log lines, fetched as they come: each fetch asks only for lines at or after the newest
 * time seen (`q=created_at>=…`, oldest first) and drops the ids already told, so a line is told
 * once however often the run is polled.
 */
export class LogTail {
  private readonly seen = new Set<string>()
  private newest: string | null = null

  constructor(
    private readonly ctx: FollowContext,
    private readonly runId: string,
    private readonly prefix = '',
  ) {}

  async pull(): Promise<void> {
    const query: { sort_by: string; limit: number; q?: string } = {
      sort_by: 'created_at:asc',
      limit: 500,
    }
    if (this.newest !== null) query.q = `created_at>=${JSON.stringify(this.newest)}`
    const pages = this.ctx.client.pages('/v1/runs/{run_id}/logs', {
      params: { path: { run_id: this.runId }, query },
      headers: headersOf(this.ctx),
      signal: this.ctx.signal,
    })
    for await (const page of pages) for (const line of page.items) this.tell(line)
  }

  private tell(line: RunLog): void {
    if (this.seen.has(line.id)) return
    this.seen.add(line.id)
    if (this.newest === null || Date.parse(line.created_at) > Date.parse(this.newest)) {
      this.newest = line.created_at
    }
    this.ctx.emit({
      type: 'log',
      level: levelOf(line.level_code),
      message: `${this.prefix}${line.message}`,
    })
  }
}

/**
 * Calls `poll` until it answers a value, waiting `waitBefore(polls made)` before each call (0
 * for none). A failed poll is tried again, up to `maxFailedRounds` in a row; an aborted signal
 * ends the wait at once (rejecting).
 */
async function pollUntil<T>(
  ctx: FollowContext,
  what: string,
  poll: () => Promise<T | null>,
  waitBefore: (polls: number) => number,
): Promise<T> {
  let failed = 0
  for (let polls = 0; ; polls++) {
    const wait = waitBefore(polls)
    if (wait > 0) await sleep(wait, ctx.signal)
    try {
      const done = await poll()
      failed = 0
      if (done !== null) return done
    } catch (error) {
      if (ctx.signal?.aborted) throw error
      if (isServiceError(error) && error.status === 404) {
        throw new RemoteNodeError(
          'SERVICE_UNREACHABLE',
          `The service no longer knows ${what} (404); it may have been deleted. Run the node again.`,
          { cause: error },
        )
      }
      failed++
      if (failed >= ctx.poll.maxFailedRounds) {
        throw new RemoteNodeError(
          'SERVICE_UNREACHABLE',
          `The service could not be reached while following ${what}, which goes on there. Nothing was charged twice: Resume picks it up where it stopped.`,
          { cause: error },
        )
      }
    }
  }
}

/** Plain backoff from the policy's first wait, polling at once first. */
const backoff = (ctx: FollowContext) => (polls: number) =>
  polls === 0 ? 0 : Math.min(ctx.poll.maxMs, ctx.poll.initialMs * ctx.poll.factor ** (polls - 1))

export async function getRun(
  ctx: Pick<FollowContext, 'client' | 'orgId'>,
  runId: string,
  signal?: AbortSignal,
): Promise<Run> {
  return ctx.client.get('/v1/runs/{run_id}', {
    params: { path: { run_id: runId } },
    headers: headersOf(ctx),
    signal,
  })
}

export async function getBatch(
  ctx: Pick<FollowContext, 'client' | 'orgId'>,
  batchId: string,
  signal?: AbortSignal,
): Promise<Batch> {
  return ctx.client.get('/v1/batches/{batch_id}', {
    params: { path: { batch_id: batchId } },
    headers: headersOf(ctx),
    signal,
  })
}

export interface FollowRunOptions {
  /** How long the run is expected to take (see RunDurations); polls are timed by it. */
  expectedMs?: number | undefined
  /**
   * When the dispatch request was sent (`performance.now()`), for a run just dispatched: the
   * first poll waits, as nothing can have happened yet, and the run's time counts from there
   * (the service's clock starts it about then, not when its answer got back).
   */
  dispatchedAt?: number | undefined
}

/**
 * Follows a run to a terminal status, telling its progress as it changes and its log lines every
 * LOG_EVERY_MS, then all the rest at the end.
 */
export async function followRun(
  ctx: FollowContext,
  runId: string,
  options: FollowRunOptions = {},
): Promise<Run> {
  const logs = new LogTail(ctx, runId)
  let told = ''
  // The first lines come LOG_EVERY_MS in, or with the end: a short run is read twice, not more.
  let logsAt = performance.now()
  const justDispatched = options.dispatchedAt !== undefined
  const started = options.dispatchedAt ?? performance.now()
  let latePolls = 0
  const waitBefore = (polls: number): number => {
    if (polls === 0 && !justDispatched) return 0
    const elapsedMs = performance.now() - started
    const wait = nextPollWait(ctx.poll, {
      expectedMs: options.expectedMs,
      elapsedMs,
      // Counted from the first wait: a follow that polled at once has one poll more.
      polls: justDispatched ? polls : polls - 1,
      latePolls,
    })
    if (options.expectedMs !== undefined && elapsedMs >= options.expectedMs) latePolls++
    return wait
  }
  return pollUntil(
    ctx,
    `the run ${runId}`,
    async () => {
      const run = await getRun(ctx, runId, ctx.signal)
      const state = `${run.status_code}:${run.progress}`
      const terminal = isTerminalRun(run)
      const now = performance.now()
      const changed = state !== told
      if (changed) {
        told = state
        ctx.emit({ type: 'progress', fraction: run.progress, message: run.status_code })
      }
      // After the terminal status is seen, so the closing lines (written with it) are in.
      if (terminal || now - logsAt >= LOG_EVERY_MS) {
        logsAt = now
        await logs.pull()
      }
      return terminal ? run : null
    },
    waitBefore,
  )
}

/**
 * Follows a batch to a terminal status: progress is the share of items finished; an item's log
 * lines are told once, when it finishes, prefixed with its place in the list.
 */
export async function followBatch(ctx: FollowContext, batchId: string): Promise<Batch> {
  const finished = new Set<number>()
  // One tail per item, kept across polls, so a pull that broke off part-way resumes without repeats.
  const tails = new Map<number, LogTail>()
  let told = -1
  let announced = false
  return pollUntil(
    ctx,
    `the batch ${batchId}`,
    async () => {
      const batch = await getBatch(ctx, batchId, ctx.signal)
      if (!announced) {
        announced = true
        announceBatch(ctx, batch)
      }
      const done = batch.items.filter((item) => TERMINAL_RUN.has(item.status_code))
      if (done.length !== told) {
        told = done.length
        ctx.emit({
          type: 'progress',
          fraction: batch.item_count === 0 ? 1 : done.length / batch.item_count,
          message: `${done.length} of ${batch.item_count} items finished`,
        })
      }
      for (const item of done) {
        if (finished.has(item.index)) continue
        const tail =
          tails.get(item.index) ?? new LogTail(ctx, item.run_id, `[item ${item.index + 1}] `)
        tails.set(item.index, tail)
        await tail.pull()
        finished.add(item.index)
      }
      return isTerminalBatch(batch) ? batch : null
    },
    backoff(ctx),
  )
}

/** Tells the run of every item of a batch, in item order. */
export function announceBatch(ctx: Pick<FollowContext, 'emit'>, batch: Batch): void {
  for (const item of [...batch.items].sort((a, b) => a.index - b.index)) {
    ctx.emit({ type: 'remote-run', runId: item.run_id, batchId: batch.id })
  }
}

/** The runs the service made for a batch's items, in no particular order. */
export async function listBatchRuns(
  ctx: Pick<FollowContext, 'client' | 'orgId'>,
  batchId: string,
  signal?: AbortSignal,
): Promise<Run[]> {
  const runs: Run[] = []
  for await (const run of ctx.client.list('/v1/runs', {
    params: { query: { q: `batch_id=${batchId}`, limit: 500 } },
    headers: headersOf(ctx),
    signal,
  })) {
    runs.push(run)
  }
  return runs
}

/** Every run of a batch, in item order. */
export async function batchRuns(
  ctx: Pick<FollowContext, 'client' | 'orgId'>,
  batch: Batch,
  signal?: AbortSignal,
): Promise<Run[]> {
  const byId = new Map((await listBatchRuns(ctx, batch.id, signal)).map((run) => [run.id, run]))
  const sorted = [...batch.items].sort((a, b) => a.index - b.index)
  return Promise.all(
    sorted.map(async (item) => byId.get(item.run_id) ?? getRun(ctx, item.run_id, signal)),
  )
}

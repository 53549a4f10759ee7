import type { Run } from '../../../src-shared/api'

/** How many recent durations of one target the expectation is the median of. */
const REMEMBERED = 16
/** Growth of the wait between polls of a run that is late. */
const LATE_GROWTH = 1.5

/**
 * How long runs of a target (a model slug or workflow id) take at the service, from the last
 * ones seen to finish: `completed_at − created_at` on the service's own clock, so neither the
 * network nor this machine's clock skews it. Queueing at the service is in it on purpose: it is
 * part of how long the next run will take too.
 */
export class RunDurations {
  private readonly recent = new Map<string, number[]>()

  /** `history` seeds a target seen for the first time (the mirror's runs of that model). */
  constructor(private readonly history?: (target: string) => readonly number[]) {}

  /** Notes a finished run; runs without both times say nothing. */
  note(target: string, run: Pick<Run, 'created_at' | 'completed_at'>): void {
    if (run.completed_at === null) return
    const ms = Date.parse(run.completed_at) - Date.parse(run.created_at)
    if (!Number.isFinite(ms) || ms < 0) return
    const list = this.listOf(target)
    list.push(ms)
    if (list.length > REMEMBERED) list.shift()
  }

  /** The median of the recent durations, or undefined before any is known. */
  expected(target: string): number | undefined {
    const list = this.listOf(target)
    if (list.length === 0) return undefined
    const sorted = [...list].sort((a, b) => a - b)
    return sorted[Math.floor(sorted.length / 2)]
  }

  private listOf(target: string): number[] {
    let list = this.recent.get(target)
    if (!list) {
      list = (this.history?.(target) ?? []).filter((ms) => ms >= 0).slice(-REMEMBERED)
      this.recent.set(target, list)
    }
    return list
  }
}

export interface PollTiming {
  /** The first wait when nothing is known of the target's durations. */
  initialMs: number
  /** Each wait is the last one times this… */
  factor: number
  /** …up to this. */
  maxMs: number
  /** Once a run is due, polls come this share of its expected time apart (growing by factor)… */
  dueShare: number
  /** …and never closer than this. */
  minMs: number
  /** While a run is expected to go on, it is still read this often (progress, log lines). */
  progressMs: number
}

/**
 * The wait before the next poll of a run. With no expected duration: backoff from `initialMs`.
 * With one: the first poll lands when the run is due (reading progress at least every
 * `progressMs` meanwhile), then polls come close together, `dueShare` of the expected time
 * apart, backing off for a run that keeps being late (a long queue, a stuck run) so that it is
 * not polled hard for long. Polling finds a run finished at most about one such interval late:
 * a few percent of its time, where a blind backoff could double it.
 */
export function nextPollWait(
  timing: PollTiming,
  state: { expectedMs: number | undefined; elapsedMs: number; polls: number; latePolls: number },
): number {
  const { expectedMs, elapsedMs, polls, latePolls } = state
  if (expectedMs === undefined) {
    return Math.min(timing.maxMs, timing.initialMs * timing.factor ** polls)
  }
  const close = Math.max(timing.minMs, expectedMs * timing.dueShare)
  // Half an interval after the median: most runs are found done at the first look, and the
  // others wait less than an interval more.
  const left = expectedMs + close / 2 - elapsedMs
  if (left > timing.minMs) return Math.min(left, timing.progressMs)
  return Math.min(timing.maxMs, close * LATE_GROWTH ** latePolls)
}

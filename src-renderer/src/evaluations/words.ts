import type { EvaluationStatusCode } from '../../../src-shared/api'
import { codeWords } from '../components/codeWords'
import type {
  EvaluationRow,
  FeedbackFilter,
  PendingFeedback,
  Rating,
  Verdict,
} from '../../../src-shared/domain/evaluations'

export const STATUS_WORDS: Record<EvaluationStatusCode, string> = {
  pending: 'Pending',
  running: 'Judging',
  completed: 'Completed',
  failed: 'Failed',
}

/** An evaluation's status in words, a status this version does not know included. */
export const statusWords = (status: string) => codeWords(STATUS_WORDS, status)

export const VERDICT_WORDS: Record<Verdict, string> = { passed: 'Passed', failed: 'Failed' }

export const FEEDBACK_WORDS: Record<FeedbackFilter, string> = {
  given: 'Rated',
  none: 'Not rated',
  up: 'Thumbs up',
  down: 'Thumbs down',
}

export const RATING_WORDS: Record<Rating, string> = { up: 'Thumbs up', down: 'Thumbs down' }

/** 0.734 → "73": scores read as percentages, whole. */
export function scorePercent(score: number | null): string {
  return score === null ? '–' : String(Math.round(score * 100))
}

/** The verdict chip's words: a verdict, else where the evaluation stands. */
export function verdictWords(row: Pick<EvaluationRow, 'verdict' | 'status'>): string {
  if (row.verdict !== null) return VERDICT_WORDS[row.verdict]
  // An evaluation that could not be made has no verdict: "Failed" would read as one.
  if (row.status === 'failed') return 'Error'
  return row.status === null ? 'Unknown' : statusWords(row.status)
}

export function verdictClass(row: Pick<EvaluationRow, 'verdict' | 'status'>): string {
  if (row.verdict !== null) return row.verdict
  return row.status === 'failed' ? 'error' : 'waiting'
}

const DAY_MS = 24 * 60 * 60 * 1000

/** "14:05" today, "3 Mar" this year, "3 Mar 2025" before. */
export function createdWords(iso: string, now = Date.now()): string {
  const date = new Date(iso)
  const sameDay = now - date.getTime() < DAY_MS && new Date(now).getDate() === date.getDate()
  if (sameDay) return date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
  const sameYear = new Date(now).getFullYear() === date.getFullYear()
  return date.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(sameYear ? {} : { year: 'numeric' }),
  })
}

export function fullTime(iso: string | null): string {
  return iso === null ? '' : new Date(iso).toLocaleString()
}

/** The rating a row or page shows: the one waiting in the outbox wins over the service's. */
export function shownRating(rating: Rating | null, pending: PendingFeedback | null): Rating | null {
  return pending?.state === 'pending' ? pending.rating : rating
}

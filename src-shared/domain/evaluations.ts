import { z } from 'zod'
import type { EvaluationStatusCode } from '../api'
import { EVALUATION_STATUSES, SEARCH_TEXT_MAX } from './search'

/**
 * The Evaluations section, as both ends of the IPC boundary see it: what the list, the page,
 * feedback and a submission may ask (zod schemas, so the renderer can check a form with the same
 * rules) and what comes back. Runtime-free apart from zod.
 *
 * Everything is read from the mirror (instant, offline); feedback goes through the outbox, so a
 * rating given offline is shown as pending until a replay after a sync sends it.
 */

export type Verdict = 'passed' | 'failed'
export type Rating = 'up' | 'down'

/** `given`: any rating; `none`: no rating yet; `up`/`down`: that rating. */
export const FEEDBACK_FILTERS = ['given', 'none', 'up', 'down'] as const
export type FeedbackFilter = (typeof FEEDBACK_FILTERS)[number]

export const EVALUATION_LIST_LIMIT_DEFAULT = 60
export const EVALUATION_LIST_LIMIT_MAX = 200

const score = z.number().min(0, 'must be 0 or more').max(1, 'must be 1 or less')

export const evaluationListSchema = z
  .strictObject({
    /** Words as typed, searched offline in prompts, notes, judges and issues. Empty: a list. */
    text: z.string().max(SEARCH_TEXT_MAX).default(''),
    verdict: z.enum(['passed', 'failed']).optional(),
    status: z.enum(EVALUATION_STATUSES).optional(),
    feedback: z.enum(FEEDBACK_FILTERS).optional(),
    /** The 0–1 score, bounds included. */
    scoreMin: score.optional(),
    scoreMax: score.optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(EVALUATION_LIST_LIMIT_MAX)
      .default(EVALUATION_LIST_LIMIT_DEFAULT),
    /** The `next` of the previous page of the same list. */
    cursor: z.string().min(1).max(4096).nullish(),
  })
  .refine((q) => q.scoreMin === undefined || q.scoreMax === undefined || q.scoreMin <= q.scoreMax, {
    message: 'must not be below the lowest score',
    path: ['scoreMax'],
  })

export type EvaluationListInput = z.input<typeof evaluationListSchema>
export type EvaluationListQuery = z.output<typeof evaluationListSchema>

/** A rating not yet accepted by the service: waiting in the outbox, or refused by it. */
export interface PendingFeedback {
  /** The outbox entry, for people who look it up with `atelier outbox`. */
  seq: number
  /** Null clears the rating. */
  rating: Rating | null
  reason: string | null
  state: 'pending' | 'rejected'
  /** Why the service refused it, or why the last attempt failed. */
  error: string | null
}

/** One row of the list: what fits on a line. */
export interface EvaluationRow {
  id: string
  /** ISO 8601, UTC. */
  createdAt: string
  /** What to call it: its prompt, its task, or its image. */
  title: string
  status: EvaluationStatusCode | null
  verdict: Verdict | null
  /** The judges' 0–1 score. */
  score: number | null
  /** The rating the service holds. */
  rating: Rating | null
  /** A rating waiting in the outbox (or refused), shown over `rating`. */
  pending: PendingFeedback | null
  attempt: number | null
  /** A newer attempt replaced this one. */
  superseded: boolean
  runId: string | null
  jobClass: 'standard' | 'quick' | null
}

export interface EvaluationListPage {
  /** `ranked` when words were given, `list` (newest first) otherwise. */
  mode: 'ranked' | 'list'
  items: EvaluationRow[]
  /** Pass back as `cursor` for the next page; null on the last one. */
  next: string | null
}

/**
 * The picture judged: an asset or a run's output shows from the media store (`media.preview`
 * with `sha256`, fetched from `url` when this machine lacks it); a bare URL cannot be verified,
 * so it is only named.
 */
export interface EvaluationImage {
  from: 'asset' | 'run' | 'url' | 'none'
  sha256: string | null
  /** Where the bytes can be fetched (it may have expired); null when unknown. */
  url: string | null
  assetId: string | null
  /** The asset's name, or the URL's file name. */
  label: string | null
}

export interface EvaluationIssueView {
  code: string | null
  severity: 'low' | 'medium' | 'high' | null
  description: string | null
  /** Where in the image, e.g. {x, y, width, height} in pixels. */
  region: Record<string, unknown> | null
}

export interface EvaluationJudgeView {
  id: string | null
  name: string | null
  description: string | null
  category: string | null
  passed: boolean | null
  /** 0–1. */
  confidence: number | null
  weight: number | null
  reasoning: string | null
  evidence: string[]
  issues: EvaluationIssueView[]
}

/** One evaluation of the chain of re-evaluations, oldest first. */
export interface EvaluationAttempt {
  id: string
  attempt: number | null
  createdAt: string | null
  status: EvaluationStatusCode | null
  verdict: Verdict | null
  score: number | null
  superseded: boolean
  /** The one the page shows. */
  current: boolean
  /** False for a parent named by the record that the mirror does not hold. */
  known: boolean
}

export interface EvaluationDetail {
  id: string
  row: EvaluationRow
  completedAt: string | null
  failureCode: string | null
  prompt: string | null
  taskType: string | null
  taskDescription: string | null
  instructions: string | null
  cost: string | null
  durationMs: number | null
  modelId: string | null
  image: EvaluationImage
  judges: EvaluationJudgeView[]
  topIssues: string[]
  topStrengths: string[]
  gateFailures: { gate: string | null; message: string | null }[]
  /** What the service suggests doing with the image. */
  action: { code: string | null; name: string | null; description: string | null } | null
  attempts: EvaluationAttempt[]
  /** The rating the service holds, with its reason. */
  feedback: { rating: Rating | null; reason: string | null }
  pending: PendingFeedback | null
  /** Only the newest attempt of a finished evaluation can be evaluated again. */
  canReevaluate: boolean
}

const evaluationId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._~-]+$/, 'is not an evaluation id')

export const evaluationIdSchema = z.strictObject({ id: evaluationId })

export const evaluationFeedbackSchema = z
  .strictObject({
    id: evaluationId,
    /** Null clears the rating. */
    rating: z.enum(['up', 'down']).nullable(),
    reason: z.string().trim().max(2000, 'must be at most 2000 characters').nullish(),
  })
  .refine((f) => f.rating !== null || !f.reason, {
    message: 'a reason needs a rating: the service drops it when the rating is cleared',
    path: ['reason'],
  })

export type EvaluationFeedbackInput = z.input<typeof evaluationFeedbackSchema>

export const JOB_CLASSES = ['standard', 'quick'] as const

const optionalText = (max: number) => z.string().trim().max(max).optional()

export const evaluationSubmitSchema = z.strictObject({
  /** An image asset of the organization, or an image file on this computer (an absolute path). */
  image: z.union([
    z.strictObject({ assetId: evaluationId }),
    z.strictObject({
      path: z
        .string()
        .trim()
        .min(1, 'is required')
        .max(4096)
        .refine((p) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\'), {
          message: 'must be a full path, such as /home/me/Pictures/poster.png',
        }),
    }),
  ]),
  jobClass: z.enum(JOB_CLASSES).default('standard'),
  prompt: optionalText(4000),
  taskType: optionalText(200),
  taskDescription: optionalText(2000),
  instructions: optionalText(4000),
  /** Re-evaluates this evaluation: the new one is its next attempt and supersedes it. */
  parentId: evaluationId.optional(),
})

export type EvaluationSubmitInput = z.input<typeof evaluationSubmitSchema>
export type EvaluationSubmit = z.output<typeof evaluationSubmitSchema>

/** What a submission answers: the new evaluation, pending, and how its image got there. */
export interface SubmittedEvaluation {
  evaluation: EvaluationDetail
  /** For a local file: uploaded now, or found among the assets by its content. */
  upload: { assetId: string; how: 'uploaded' | 'found' | 'duplicate' } | null
}

export const EVALUATION_ERROR_CODES = [
  'EVALUATION_NOT_FOUND',
  'EVALUATION_INVALID_CURSOR',
  'OFFLINE',
  'NOT_AN_IMAGE',
  'FILE_NOT_READABLE',
  'UPLOAD_FAILED',
] as const
export type EvaluationErrorCode = (typeof EVALUATION_ERROR_CODES)[number]

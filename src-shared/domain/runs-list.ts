import { z } from 'zod'
import type { RunStatusCode, RunTargetTypeCode } from '../api'
import { RUN_STATUSES } from './search'

/**
 * The Runs section's list, as both ends of the IPC boundary see it: what may be asked
 * (`runListQuerySchema`) and what comes back (`RunListPage`). It reads the mirror only, so it
 * answers the same offline. Runtime-free apart from zod.
 *
 * Newest first, always: words narrow the list down rather than rank it, so a person scrolling
 * a search sees the same order as the whole list and infinite loading stays a keyset walk.
 */

export const RUN_LIST_LIMIT_DEFAULT = 100
export const RUN_LIST_LIMIT_MAX = 500
/** The count stops here: past it the list says "more than 10,000", which costs no more. */
export const RUN_LIST_COUNT_CAP = 10_000
export const RUN_LIST_TEXT_MAX = 500

const MODEL = /^[^/\s]+\/[^/\s]+$/
/** Decimal credits as the service writes them: 0.02, 1, .5 */
const CREDITS = /^(?:\d+(?:\.\d*)?|\.\d+)$/

const credits = z
  .string()
  .trim()
  .regex(CREDITS, { error: 'must be an amount of credits such as 0.05' })
  .max(30)

export const runListQuerySchema = z
  .strictObject({
    /** Words of the prompt or the other text inputs; every word must match, the last as a prefix. */
    text: z.string().max(RUN_LIST_TEXT_MAX).default(''),
    /** Any of these statuses; empty or left out: every status. */
    statuses: z.array(z.enum(RUN_STATUSES)).max(RUN_STATUSES.length).default([]),
    /** `provider/model`, e.g. atelier/text-to-image. */
    model: z
      .string()
      .trim()
      .regex(MODEL, { error: 'must be provider/model, e.g. atelier/text-to-image' })
      .max(200)
      .optional(),
    /** A flow's id: the runs of that flow. */
    flowId: z.string().trim().min(1).max(200).optional(),
    /** Created at or after, epoch milliseconds. */
    fromMs: z.number().int().min(0).optional(),
    /** Created before, epoch milliseconds. */
    toMs: z.number().int().min(0).optional(),
    /** Cost at least this many credits (runs with no cost yet are left out). */
    minCost: credits.optional(),
    /** Cost at most this many credits. */
    maxCost: credits.optional(),
    limit: z.number().int().min(1).max(RUN_LIST_LIMIT_MAX).default(RUN_LIST_LIMIT_DEFAULT),
    /** The `next` of the previous page of the same list. */
    cursor: z.string().min(1).max(4096).nullish(),
  })
  .superRefine((query, context) => {
    if (query.fromMs !== undefined && query.toMs !== undefined && query.fromMs >= query.toMs) {
      context.addIssue({ code: 'custom', path: ['toMs'], message: 'must be after fromMs' })
    }
    if (
      query.minCost !== undefined &&
      query.maxCost !== undefined &&
      Number(query.minCost) > Number(query.maxCost)
    ) {
      context.addIssue({ code: 'custom', path: ['maxCost'], message: 'must not be below minCost' })
    }
  })

/** What a caller sends (the IPC argument). */
export type RunListQueryInput = z.input<typeof runListQuerySchema>
/** The same, checked, with its defaults. */
export type RunListQuery = z.output<typeof runListQuerySchema>

export const RUN_LIST_ERROR_CODES = ['RUNS_INVALID_QUERY', 'RUNS_INVALID_CURSOR'] as const
export type RunListErrorCode = (typeof RUN_LIST_ERROR_CODES)[number]

/** One row of the list: what a person scans for, never the whole record. */
export interface RunListRow {
  id: string
  status: RunStatusCode
  target: RunTargetTypeCode
  /** What ran, in words: the model's, flow's or workflow's name, else its slug or id. */
  name: string
  /** `provider/model` of a model run. */
  model: string | null
  flowId: string | null
  createdMs: number
  /** Created to completed, at the service; null until it ends. */
  durationMs: number | null
  /** Credits as the service wrote them; null until known. */
  cost: string | null
  /** The prompt, or the first other text input, cut to a line. */
  text: string | null
  /** Whether it produced output (images, video…). */
  hasOutputs: boolean
  /** Why it failed, in the service's words; null unless failed. */
  failure: string | null
}

export interface RunListTotal {
  /** Runs that match, up to RUN_LIST_COUNT_CAP. */
  count: number
  /** There are more than `count`. */
  more: boolean
}

export interface RunListPage {
  items: RunListRow[]
  /** Pass back as `cursor` for the next page; null on the last one. */
  next: string | null
  /** On the first page only (null on the others): counting again as you scroll would cost. */
  total: RunListTotal | null
}

/** The choices of the filter bar: what the mirror's runs were made with. */
export interface RunFilterOptions {
  models: { slug: string; name: string }[]
  flows: { id: string; name: string }[]
}

import { z } from 'zod'
import type { EvaluationStatusCode, MediaType, RunStatusCode } from '../api'
import {
  EVALUATION_STATUSES,
  FILTER_KINDS,
  MEDIA_TYPES,
  RUN_STATUSES,
  SEARCH_KINDS,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_TEXT_MAX,
  type SearchFilter,
  type SearchKind,
} from './search-filters'

/**
 * Offline search over the mirror, as both ends of the IPC boundary and the `atelier search`
 * command see it: what may be asked (`searchQuerySchema`) and what comes back (`SearchResult`).
 * Runtime-free apart from zod, so the renderer can validate a form with the same rules.
 *
 * With words, results are ranked; without, they are a filtered list, newest first. Either way
 * they are the records people know (a run, an evaluation, an asset), never index rows: a hit in
 * a run's log or in a judge's reasoning returns that run or that evaluation, once, saying where
 * it matched.
 */

export {
  EVALUATION_STATUSES,
  FILTER_KINDS,
  MEDIA_TYPES,
  RUN_STATUSES,
  SEARCH_KINDS,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_TEXT_MAX,
} from './search-filters'
export type { SearchFilter, SearchKind } from './search-filters'

const STATUSES: Record<SearchKind, readonly string[]> = {
  runs: RUN_STATUSES,
  evaluations: EVALUATION_STATUSES,
  assets: [],
}

/** One line per kind naming its filters, for messages that refuse a filter. */
export function filtersByKind(): string {
  return SEARCH_KINDS.map(
    (kind) =>
      `${kind}: ${(Object.keys(FILTER_KINDS) as SearchFilter[])
        .filter((filter) => FILTER_KINDS[filter].includes(kind))
        .join(', ')}`,
  ).join('; ')
}

const DATE = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * A day (`2026-03-01`, UTC) or a time with its zone (`2026-03-01T09:30:00Z`). A time without a
 * zone is refused rather than read in whatever zone the process runs in.
 */
const dateBound = z
  .string()
  .trim()
  .refine(
    (value) => (DATE.test(value) || DATE_TIME.test(value)) && !Number.isNaN(Date.parse(value)),
    {
      error:
        'must be a day such as 2026-03-01 or a time with its zone such as 2026-03-01T09:30:00Z',
    },
  )

/** `to` as a day takes in that whole day: "up to March 1st" includes March 1st. */
function boundMs(value: string, end: boolean): number {
  const ms = Date.parse(value)
  return end && DATE.test(value) ? ms + DAY_MS : ms
}

const shape = z.strictObject({
  /** Words as typed; every word must match, the last one also as a prefix. Empty: a list. */
  text: z.string().max(SEARCH_TEXT_MAX).default(''),
  /** Left out: every kind the filters apply to. */
  kind: z.enum(SEARCH_KINDS).optional(),
  /** A run status for runs, an evaluation status for evaluations. */
  status: z.string().trim().min(1).max(40).optional(),
  /** `provider/model`, e.g. atelier/text-to-image. */
  model: z
    .string()
    .trim()
    .regex(/^[^/\s]+\/[^/\s]+$/, { error: 'must be provider/model, e.g. atelier/text-to-image' })
    .max(200)
    .optional(),
  /** Created at or after. */
  from: dateBound.optional(),
  /** Created before (a day: up to the end of that day). */
  to: dateBound.optional(),
  verdict: z.enum(['passed', 'failed']).optional(),
  feedback: z.enum(['positive', 'negative', 'none']).optional(),
  /** An asset folder's id, or its path such as `/Clients/Nordlys`; `/` is the root. */
  folder: z.string().trim().min(1).max(1024).optional(),
  mediaType: z.enum(MEDIA_TYPES).optional(),
  limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).default(SEARCH_LIMIT_DEFAULT),
  /** The `next` of the previous page of the same search. */
  cursor: z.string().min(1).max(4096).nullish(),
})

export const searchQuerySchema = shape
  .superRefine((query, context) => {
    const given = (Object.keys(FILTER_KINDS) as SearchFilter[]).filter(
      (filter) => query[filter] !== undefined,
    )
    for (const filter of given) {
      if (query.kind !== undefined && !FILTER_KINDS[filter].includes(query.kind)) {
        context.addIssue({
          code: 'custom',
          path: [filter],
          message: `does not apply to ${query.kind}; the filters of each kind are ${filtersByKind()}`,
        })
      }
    }
    const kinds = kindsOf(query.kind, given)
    if (query.kind === undefined && kinds.length === 0) {
      context.addIssue({
        code: 'custom',
        path: ['kind'],
        message: `no kind takes all of ${given.join(', ')}; the filters of each kind are ${filtersByKind()}`,
      })
    }
    const status = query.status
    if (
      status !== undefined &&
      kinds.length > 0 &&
      !kinds.some((k) => STATUSES[k].includes(status))
    ) {
      context.addIssue({
        code: 'custom',
        path: ['status'],
        message: `"${status}" is not a status of ${kinds.join(' or ')}; ${kinds
          .filter((k) => STATUSES[k].length > 0)
          .map((k) => `${k}: ${STATUSES[k].join(', ')}`)
          .join('; ')}`,
      })
    }
    if (
      query.from !== undefined &&
      query.to !== undefined &&
      boundMs(query.from, false) >= boundMs(query.to, true)
    ) {
      context.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' })
    }
  })
  .transform((query) => {
    const given = (Object.keys(FILTER_KINDS) as SearchFilter[]).filter(
      (filter) => query[filter] !== undefined,
    )
    const status = query.status
    const kinds = kindsOf(query.kind, given).filter(
      (kind) => status === undefined || STATUSES[kind].includes(status),
    )
    return {
      text: query.text.trim(),
      kinds,
      ...(status === undefined ? {} : { status }),
      ...(query.model === undefined ? {} : { model: query.model }),
      ...(query.from === undefined ? {} : { fromMs: boundMs(query.from, false) }),
      ...(query.to === undefined ? {} : { toMs: boundMs(query.to, true) }),
      ...(query.verdict === undefined ? {} : { verdict: query.verdict }),
      ...(query.feedback === undefined ? {} : { feedback: query.feedback }),
      ...(query.folder === undefined ? {} : { folder: query.folder }),
      ...(query.mediaType === undefined ? {} : { mediaType: query.mediaType }),
      limit: query.limit,
      cursor: query.cursor ?? null,
    }
  })

function kindsOf(kind: SearchKind | undefined, filters: readonly SearchFilter[]): SearchKind[] {
  const candidates = kind === undefined ? [...SEARCH_KINDS] : [kind]
  return candidates.filter((k) => filters.every((filter) => FILTER_KINDS[filter].includes(k)))
}

/** What a caller sends (the IPC argument, the command's flags). */
export type SearchQueryInput = z.input<typeof searchQuerySchema>
/** The same, checked: time bounds in epoch milliseconds, the kinds to search resolved. */
export type SearchQuery = z.output<typeof searchQuerySchema>

export const SEARCH_ERROR_CODES = ['SEARCH_INVALID_QUERY', 'SEARCH_INVALID_CURSOR'] as const
export type SearchErrorCode = (typeof SEARCH_ERROR_CODES)[number]

/** Where a ranked result matched, in the words of the screen that shows it. */
export type RunMatch = 'prompt' | 'input' | 'log' | 'model'
export type EvaluationMatch = 'prompt' | 'notes' | 'judge' | 'judge reasoning' | 'issue'
export type AssetMatch = 'name' | 'folder'
export type SearchMatch = RunMatch | EvaluationMatch | AssetMatch

/** An excerpt of the matched text; `highlights` are [start, end) offsets of the matched words. */
export interface SearchSnippet {
  text: string
  highlights: [number, number][]
}

interface ResultBase<Match extends SearchMatch> {
  id: string
  orgId: string
  /** ISO 8601, UTC. */
  createdAt: string
  /** What to call it in a list: a prompt, a file name. */
  title: string
  /** Ranked results only; null in a list. */
  matchedIn: Match | null
  snippet: SearchSnippet | null
  /** Higher is better; null in a list. Comparable within one search only. */
  score: number | null
}

export interface RunResult extends ResultBase<RunMatch> {
  kind: 'run'
  status: RunStatusCode
  model: string | null
  cost: string | null
}

export interface EvaluationResult extends ResultBase<EvaluationMatch> {
  kind: 'evaluation'
  status: EvaluationStatusCode | null
  verdict: 'passed' | 'failed' | null
  feedback: 'positive' | 'negative' | 'none'
  /** The 0-1 score of the judges. */
  passRate: number | null
  runId: string | null
}

export interface AssetResult extends ResultBase<AssetMatch> {
  kind: 'asset'
  mediaType: MediaType
  /** Null at the root. */
  folderPath: string | null
  sizeBytes: number
}

export type SearchResultItem = RunResult | EvaluationResult | AssetResult

export interface SearchResult {
  /** `ranked` when words were given, `list` (newest first) otherwise. */
  mode: 'ranked' | 'list'
  items: SearchResultItem[]
  /** Pass back as `cursor` for the next page; null on the last one. */
  next: string | null
  /**
   * Ranked only: some words matched more records than are ranked (the newest are), so older
   * matches may be missing. More words, or a filter, narrow it down.
   */
  bounded: boolean
}

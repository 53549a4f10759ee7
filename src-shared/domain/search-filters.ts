import type { EvaluationStatusCode, MediaType, RunStatusCode } from '../api'

/**
 * What a search can ask for, as plain constants: the kinds, statuses and media types, which
 * filter goes with which kind, and the limits. No zod here, so that the `atelier search`
 * command can write its help and its options without loading the schema (`./search` re-exports
 * all of it).
 */

export const SEARCH_KINDS = ['runs', 'evaluations', 'assets'] as const
export type SearchKind = (typeof SEARCH_KINDS)[number]

export const RUN_STATUSES = [
  'queued',
  'starting',
  'running',
  'succeeded',
  'failed',
  'canceled',
] as const satisfies readonly RunStatusCode[]
export const EVALUATION_STATUSES = [
  'pending',
  'running',
  'completed',
  'failed',
] as const satisfies readonly EvaluationStatusCode[]
export const MEDIA_TYPES = [
  'image',
  'video',
  'audio',
  'other',
] as const satisfies readonly MediaType[]

// A status or media type added to the contract must be added here too: this fails to compile.
type Missing<All, Listed> = [Exclude<All, Listed>] extends [never] ? true : never
true satisfies Missing<RunStatusCode, (typeof RUN_STATUSES)[number]>
true satisfies Missing<EvaluationStatusCode, (typeof EVALUATION_STATUSES)[number]>
true satisfies Missing<MediaType, (typeof MEDIA_TYPES)[number]>

export type SearchFilter =
  'status' | 'model' | 'from' | 'to' | 'verdict' | 'feedback' | 'folder' | 'mediaType'

/** Which kinds each filter applies to; a filter given for another kind is refused. */
export const FILTER_KINDS: Record<SearchFilter, readonly SearchKind[]> = {
  status: ['runs', 'evaluations'],
  model: ['runs', 'evaluations'],
  from: SEARCH_KINDS,
  to: SEARCH_KINDS,
  verdict: ['evaluations'],
  feedback: ['evaluations'],
  folder: ['assets'],
  mediaType: ['assets'],
}

export const SEARCH_LIMIT_DEFAULT = 20
export const SEARCH_LIMIT_MAX = 100
export const SEARCH_TEXT_MAX = 500

import { ftsQuery } from '../db'
import { searchQuerySchema, type SearchQuery } from '../../src-shared/domain/search'
import { SearchError } from './errors'

/** See `ftsQuery`: a shorter last word is matched whole, not as a prefix. */
export const MIN_PREFIX = 3

export interface ParsedSearch {
  query: SearchQuery
  /** The FTS5 queries of the words, with and without the last word as a prefix; null: a list. */
  match: Match | null
}

export interface Match {
  exact: string
  /** Null when the last word is too short to be a prefix. */
  prefix: string | null
}

const FIELD_NAMES: Record<string, string> = { mediaType: 'media type' }

/** Checks what a caller sent; every problem is named with its field, in one message. */
export function parseSearch(input: unknown): ParsedSearch {
  const parsed = searchQuerySchema.safeParse(input ?? {})
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((issue) => {
      const field = issue.path.map(String).join('.')
      return field === '' ? issue.message : `${FIELD_NAMES[field] ?? field} ${issue.message}`
    })
    throw new SearchError(
      'SEARCH_INVALID_QUERY',
      `The search is not valid: ${problems.join('; ')}.`,
    )
  }
  return checkedSearch(parsed.data)
}

/** A query already checked against the schema (the IPC dispatcher does that): its words. */
export function checkedSearch(query: SearchQuery): ParsedSearch {
  if (query.text === '') return { query, match: null }
  const prefix = ftsQuery(query.text, { minPrefix: MIN_PREFIX })
  const exact = ftsQuery(query.text, { minPrefix: Number.POSITIVE_INFINITY })
  if (prefix === null || exact === null) {
    throw new SearchError(
      'SEARCH_INVALID_QUERY',
      `The search words "${query.text.slice(0, 80)}" have no letter or digit to look for; type a word, or leave the words out to list records.`,
    )
  }
  return { query, match: { exact, prefix: prefix === exact ? null : prefix } }
}

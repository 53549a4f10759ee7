import { createHash } from 'node:crypto'
import type { SearchQuery } from '../../src-shared/domain/search'
import { SearchError } from './errors'
import type { ListPosition } from './list'

/**
 * Cursors are opaque to callers: base64url JSON naming the search they belong to (a digest of
 * its words, kinds and filters, so a cursor reused with other filters is refused rather than
 * giving a wrong page) and where the next page starts.
 *
 * A ranked page starts at an offset into the ranking, computed again for each page with the
 * same `now` (kept in the cursor) so the recency boost, and so the order, does not move between
 * pages. While the mirror is unchanged, pages never repeat or skip a record; after a sync, the
 * ranking may differ, and a search started again sees the new records.
 */

export type CursorState =
  { mode: 'ranked'; offset: number; nowMs: number } | ({ mode: 'list' } & ListPosition)

interface Encoded {
  v: 1
  q: string
  r?: [offset: number, nowMs: number]
  l?: [createdMs: number, kindRank: number, seq: number]
}

function digest(query: SearchQuery): string {
  const { limit: _limit, cursor: _cursor, ...rest } = query
  return createHash('sha256').update(JSON.stringify(rest)).digest('base64url').slice(0, 16)
}

export function encodeCursor(query: SearchQuery, state: CursorState): string {
  const encoded: Encoded =
    state.mode === 'ranked'
      ? { v: 1, q: digest(query), r: [state.offset, state.nowMs] }
      : { v: 1, q: digest(query), l: [state.createdMs, state.kindRank, state.seq] }
  return Buffer.from(JSON.stringify(encoded)).toString('base64url')
}

const integers = (values: unknown, length: number): values is number[] =>
  Array.isArray(values) &&
  values.length === length &&
  values.every((value) => Number.isSafeInteger(value) && (value as number) >= 0)

export function decodeCursor(query: SearchQuery, cursor: string): CursorState {
  const invalid = (why: string) =>
    new SearchError(
      'SEARCH_INVALID_CURSOR',
      `The cursor ${why}; pass the \`next\` of the previous page of the same search, or leave it out to start from the first page.`,
    )
  let decoded: Partial<Encoded> | null = null
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Encoded>
  } catch {
    // Reported below.
  }
  if (decoded === null || typeof decoded !== 'object' || decoded.v !== 1) {
    throw invalid('is not one this search gave')
  }
  if (decoded.q !== digest(query))
    throw invalid('belongs to another search (other words, kind or filters)')
  if (decoded.r !== undefined && integers(decoded.r, 2)) {
    return { mode: 'ranked', offset: decoded.r[0], nowMs: decoded.r[1] }
  }
  if (decoded.l !== undefined && integers(decoded.l, 3)) {
    return { mode: 'list', createdMs: decoded.l[0], kindRank: decoded.l[1], seq: decoded.l[2] }
  }
  throw invalid('is not one this search gave')
}

import { createHash } from 'node:crypto'
import type { RunListQuery } from '../../../src-shared/domain/runs-list'
import { RunListError } from './errors'

/** Where a page ended: the last row's creation time and seq (the tie-breaker). */
export interface Position {
  createdMs: number
  seq: number
}

/**
 * The filters a cursor belongs to, in a few characters: a cursor of another list would walk
 * the wrong rows from the right place, so it is refused instead. Limit and cursor are not
 * part of it, so a page may be of any size.
 */
function fingerprint(query: RunListQuery): string {
  const { limit: _limit, cursor: _cursor, ...filters } = query
  const statuses = [...filters.statuses].sort()
  return createHash('sha256')
    .update(JSON.stringify({ ...filters, text: filters.text.trim(), statuses }))
    .digest('base64url')
    .slice(0, 12)
}

export function encodeCursor(query: RunListQuery, position: Position): string {
  return Buffer.from(
    JSON.stringify([position.createdMs, position.seq, fingerprint(query)]),
  ).toString('base64url')
}

export function decodeCursor(query: RunListQuery, cursor: string): Position {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    parsed = null
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    !Number.isSafeInteger(parsed[0]) ||
    !Number.isSafeInteger(parsed[1]) ||
    typeof parsed[2] !== 'string'
  ) {
    throw new RunListError(
      'RUNS_INVALID_CURSOR',
      'The cursor is not one this list gave. Pass the `next` of the previous page, or leave it out to start from the first page.',
    )
  }
  if (parsed[2] !== fingerprint(query)) {
    throw new RunListError(
      'RUNS_INVALID_CURSOR',
      'The cursor belongs to a list with other filters or words. Start again from the first page (leave the cursor out) after changing them.',
    )
  }
  return { createdMs: parsed[0] as number, seq: parsed[1] as number }
}

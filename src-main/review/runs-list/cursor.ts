import { createHash } from 'node:crypto'
import type { RunListQuery } from '../../../src-shared/domain/runs-list'
import { decodeCursor as decodeKeysetCursor, encodeCursor as encodeKeysetCursor } from '../../db'
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

/**
 * The mirror's keyset cursor (creation time and seq) with the filters' fingerprint after a dot,
 * which base64url never holds, so one split takes the two apart again.
 */
export function encodeCursor(query: RunListQuery, position: Position): string {
  return `${encodeKeysetCursor(position.createdMs, position.seq)}.${fingerprint(query)}`
}

export function decodeCursor(query: RunListQuery, cursor: string): Position {
  const [keyset, filters, ...rest] = cursor.split('.')
  const position =
    keyset !== undefined && filters !== undefined && rest.length === 0 ? positionOf(keyset) : null
  if (position === null) {
    throw new RunListError(
      'RUNS_INVALID_CURSOR',
      'The cursor is not one this list gave. Pass the `next` of the previous page, or leave it out to start from the first page.',
    )
  }
  if (filters !== fingerprint(query)) {
    throw new RunListError(
      'RUNS_INVALID_CURSOR',
      'The cursor belongs to a list with other filters or words. Start again from the first page (leave the cursor out) after changing them.',
    )
  }
  return position
}

function positionOf(keyset: string): Position | null {
  try {
    const [createdMs, seq] = decodeKeysetCursor(keyset, 'number')
    // Creation times are whole milliseconds; anything else was not made here.
    return Number.isSafeInteger(createdMs) ? { createdMs, seq } : null
  } catch {
    return null
  }
}

import { createHash } from 'node:crypto'
import { badList } from './errors'

/** A sort value as SQLite gives it: text, a number (booleans are 1/0) or NULL. */
export type SortValue = string | number | null

/**
 * A position between two rows of the ordered list: before everything, after everything, or just
 * after / just before the row whose (sort value, id) is given. Positions are values, not row
 * references, so they survive the row being changed or deleted.
 */
export type Position =
  { at: 'start' } | { at: 'end' } | { at: 'after' | 'before'; value: SortValue; id: string }

export type Direction = 'forward' | 'backward'

export interface Cursor {
  /** The sort the cursor was made for, `field:dir`. */
  sort: string
  /** The hash of the query (scope, q and sort) the cursor was made for. */
  query: string
  position: Position
  /** Which way it reads when `from_prev` is not set. */
  direction: Direction
}

/** What is encoded: short keys, a version for later changes. */
interface Wire {
  v: 1
  s: string
  h: string
  p: 's' | 'e' | 'a' | 'b'
  k?: [SortValue, string]
  d: 'f' | 'b'
}

const MAX_CURSOR_LENGTH = 16_384
const BASE64URL = /^[A-Za-z0-9_-]+$/

/** A short hash of what a cursor depends on, so it cannot be used with another query. */
export function queryHash(parts: unknown): string {
  const json = JSON.stringify(parts, (_key, value: unknown) =>
    typeof value === 'bigint' ? `${value}n` : value,
  )
  return createHash('sha256').update(json).digest('base64url').slice(0, 22)
}

const POSITION_CODES = { start: 's', end: 'e', after: 'a', before: 'b' } as const

export function encodeCursor(cursor: Cursor): string {
  const { position } = cursor
  const wire: Wire = {
    v: 1,
    s: cursor.sort,
    h: cursor.query,
    p: POSITION_CODES[position.at],
    d: cursor.direction === 'forward' ? 'f' : 'b',
  }
  if (position.at === 'after' || position.at === 'before') wire.k = [position.value, position.id]
  return Buffer.from(JSON.stringify(wire), 'utf8').toString('base64url')
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const isSortValue = (value: unknown): value is SortValue =>
  value === null ||
  typeof value === 'string' ||
  (typeof value === 'number' && Number.isFinite(value))

export const invalidCursor = () =>
  badList(
    'pq is not a valid cursor; pass back one of the first, next or previous values of an earlier page unchanged.',
  )

/** Decodes a `pq` cursor; anything that is not one of ours is a 400. */
export function decodeCursor(text: string): Cursor {
  const invalid = invalidCursor
  if (text.length > MAX_CURSOR_LENGTH || !BASE64URL.test(text)) throw invalid()
  let wire: unknown
  try {
    wire = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    throw invalid()
  }
  if (
    !isRecord(wire) ||
    wire.v !== 1 ||
    typeof wire.s !== 'string' ||
    typeof wire.h !== 'string' ||
    (wire.d !== 'f' && wire.d !== 'b')
  ) {
    throw invalid()
  }
  const direction: Direction = wire.d === 'f' ? 'forward' : 'backward'
  let position: Position
  if (wire.p === 's' || wire.p === 'e') {
    if (wire.k !== undefined) throw invalid()
    position = { at: wire.p === 's' ? 'start' : 'end' }
  } else if (wire.p === 'a' || wire.p === 'b') {
    const key = wire.k
    if (!Array.isArray(key) || key.length !== 2) throw invalid()
    const [value, id] = key as unknown[]
    if (!isSortValue(value) || typeof id !== 'string') throw invalid()
    position = { at: wire.p === 'a' ? 'after' : 'before', value, id }
  } else {
    throw invalid()
  }
  return { sort: wire.s, query: wire.h, position, direction }
}

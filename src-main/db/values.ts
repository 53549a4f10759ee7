/**
 * Conversions from the service's JSON to the mirror's columns. Times become epoch milliseconds
 * so that `Z`, `+00:00` and any number of fraction digits all sort and compare correctly;
 * decimal strings become integer micro-units so that costs sort and sum without float error.
 */

/** Epoch milliseconds of an ISO 8601 time; a time that does not parse is a broken record. */
export function timeMs(value: string, field: string): number {
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) throw new TypeError(`${field} is not a date-time: ${JSON.stringify(value)}`)
  return ms
}

export function timeMsOrNull(value: string | null | undefined, field: string): number | null {
  return value === null || value === undefined ? null : timeMs(value, field)
}

const DECIMAL = /^([+-]?)0*(\d*)(?:\.(\d*))?$/

/**
 * A decimal string (`0.0125`, `-3.`, `.5`) in millionths, rounded half away from zero past six
 * places; null when the value is null or not a decimal, so the text column still keeps it.
 */
export function decimalMicro(value: string | null | undefined): number | null {
  if (value === null || value === undefined) return null
  const match = DECIMAL.exec(value)
  if (!match) return null
  const [, sign, whole = '', fraction = ''] = match
  if (whole === '' && fraction === '' && !/\d/.test(value)) return null
  const padded = (fraction + '0000000').slice(0, 7)
  let micro = Number(whole || '0') * 1_000_000 + Number(padded.slice(0, 6))
  if (Number(padded[6]) >= 5) micro += 1
  if (!Number.isSafeInteger(micro)) return null
  return sign === '-' && micro !== 0 ? -micro : micro
}

/** SQLite has no boolean: 1, 0, or null for "not known". */
export function flag(value: boolean | null | undefined): number | null {
  return value === null || value === undefined ? null : value ? 1 : 0
}

/** Binds a list of ids as one JSON value, read back with json_each: one statement for any count. */
export function idList(ids: readonly string[]): string {
  return JSON.stringify(ids)
}

/** The JSON an id-list parameter expects, deduplicated and without empty strings. */
export function uniqueIds(ids: Iterable<string | null | undefined>): string[] {
  const seen = new Set<string>()
  for (const id of ids) if (id) seen.add(id)
  return [...seen]
}

/** Page size of keyset lists: a default that fills a screen, capped where a page stays cheap. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return 50
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be 1 or more`)
  return Math.min(limit, 500)
}

/**
 * Keyset cursors are opaque to callers: the sort key and seq (the local rowid, which breaks
 * ties) of the last row of a page, as base64url JSON. A cursor from another list decodes to a
 * clear error rather than a wrong page.
 */
export function encodeCursor(key: number | string, seq: number | string): string {
  return Buffer.from(JSON.stringify([key, seq])).toString('base64url')
}

/** What one part of a cursor must be: any number, a safe integer, or a string. */
type CursorPart = 'number' | 'integer' | 'string'
type CursorValue<P extends CursorPart> = P extends 'string' ? string : number

const fits = (value: unknown, part: CursorPart): boolean =>
  part === 'integer' ? Number.isSafeInteger(value) : typeof value === part

/** A cursor's two parts, each checked to be of its kind; a TypeError for anything else. */
export function decodeCursorParts<A extends CursorPart, B extends CursorPart>(
  cursor: string,
  first: A,
  second: B,
): [CursorValue<A>, CursorValue<B>] {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    parsed = null
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !fits(parsed[0], first) ||
    !fits(parsed[1], second)
  ) {
    throw new TypeError(`"${cursor}" is not a cursor of this list.`)
  }
  return parsed as [CursorValue<A>, CursorValue<B>]
}

export function decodeCursor<K extends 'number' | 'string'>(
  cursor: string,
  keyType: K,
): [K extends 'number' ? number : string, number] {
  return decodeCursorParts(cursor, keyType, 'integer') as [
    K extends 'number' ? number : string,
    number,
  ]
}

/** Bounds of a time filter: an ISO string, or epoch milliseconds. */
export type TimeBound = string | number

export function boundMs(value: TimeBound, field: string): number {
  return typeof value === 'number' ? value : timeMs(value, field)
}

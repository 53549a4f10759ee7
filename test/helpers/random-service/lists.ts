// The list envelope as the contract describes it: `q` filters, `sort_by` orders (ties by id),
// and opaque cursors walk a collection that ends. The random service's collections are small,
// and its pages smaller than `limit` may ask, so every client walks several pages.

type Json = Record<string, unknown>

interface Clause {
  field: string
  op: string
  values: (string | null)[]
}

const CLAUSE = /^([a-z_][a-z0-9_]*)(>=|<=|!=|=|>|<|~)(.*)$/

function parseValue(raw: string): (string | null)[] {
  if (raw === 'null') return [null]
  if (raw.startsWith('"')) return [JSON.parse(raw) as string]
  return raw.split('|')
}

/** The contract's `q` grammar, as far as a client of it writes it. */
export function parseQuery(q: string | null): Clause[] {
  if (q === null || q.trim() === '') return []
  return q.split(' and ').map((text) => {
    const found = CLAUSE.exec(text.trim())
    if (!found) throw new Error(`q clause not understood: ${text}`)
    return { field: found[1] ?? '', op: found[2] ?? '', values: parseValue(found[3] ?? '') }
  })
}

const text = (value: unknown): string =>
  typeof value === 'string' ? value : JSON.stringify(value ?? null)

/** Date-times compare as instants, numbers as numbers, the rest as text. */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null || a === undefined) return 1
  if (b === null || b === undefined) return -1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  const [ta, tb] = [Date.parse(text(a)), Date.parse(text(b))]
  if (typeof a === 'string' && /^\d{4}-\d\d-\d\dT/.test(a) && !Number.isNaN(ta + tb)) return ta - tb
  return text(a) < text(b) ? -1 : 1
}

function matches(record: Json, clause: Clause): boolean {
  const value = record[clause.field]
  const [first = null] = clause.values
  switch (clause.op) {
    case '=':
      return clause.values.some((v) => (v === null ? value === null : compare(value, v) === 0))
    case '!=':
      return first === null ? value !== null && value !== undefined : compare(value, first) !== 0
    case '~':
      return text(value ?? '')
        .toLowerCase()
        .includes(text(first).toLowerCase())
    default: {
      if (value === null || value === undefined) return false
      const order = compare(value, first)
      return clause.op === '>'
        ? order > 0
        : clause.op === '>='
          ? order >= 0
          : clause.op === '<'
            ? order < 0
            : order <= 0
    }
  }
}

export interface PageRequest {
  q: string | null
  sortBy: string | null
  limit: number
  cursor: string | null
  /** The most this service puts on a page, whatever `limit` says. */
  pageSize: number
}

export interface ListPage {
  items: Json[]
  first: string
  next: string | null
  previous: string | null
  /** How many match `q`, for X-Total-Count. */
  total: number
}

const cursorOf = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64url')

function offsetOf(cursor: string | null): number {
  if (cursor === null) return 0
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const found = /^offset:(\d+)$/.exec(text)
  if (!found) throw new Error(`not a cursor of this service: ${cursor}`)
  return Number(found[1])
}

export function pageOf(records: readonly Json[], request: PageRequest): ListPage {
  const clauses = parseQuery(request.q)
  const [field = 'created_at', direction = 'desc'] = (request.sortBy ?? 'created_at:desc').split(
    ':',
  )
  const sign = direction === 'asc' ? 1 : -1
  const found = records
    .filter((record) => clauses.every((clause) => matches(record, clause)))
    .sort((a, b) => sign * (compare(a[field], b[field]) || compare(a.id, b.id)))
  const offset = offsetOf(request.cursor)
  const size = Math.max(1, Math.min(request.limit, request.pageSize))
  const end = offset + size
  return {
    items: found.slice(offset, end),
    first: cursorOf(0),
    next: end < found.length ? cursorOf(end) : null,
    previous: offset > 0 ? cursorOf(Math.max(0, offset - size)) : null,
    total: found.length,
  }
}

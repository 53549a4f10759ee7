import { badList, quote } from './errors'
import type { Clause, Operator } from './query'

/** A piece of SQL and the values bound to its `?`s, in order. */
export interface Sql {
  sql: string
  args: unknown[]
}

/** Columns of `records` that hold a field of the record themselves (and are indexed). */
const COLUMNS: ReadonlySet<string> = new Set(['id', 'org_id', 'created_at', 'updated_at'])

/** Of those, the ones that are never NULL. */
const NOT_NULL_COLUMNS: ReadonlySet<string> = new Set(['id', 'created_at', 'updated_at'])

export const FIELD_NAME = /^[a-z_][a-z0-9_]*$/

/** The name of the Unicode-aware `lower()` the engine registers on each connection it lists on. */
export const CASEFOLD_FUNCTION = 'atelier_list_casefold'

export function allowedFields(fields: ReadonlySet<string>): string {
  return [...fields].sort().join(', ')
}

/**
 * The SQL expression of a field: the real column for id, org_id, created_at and updated_at,
 * `json_extract` (which returns typed values: numbers, 1/0 for booleans, text) for the rest. The
 * name is checked against the regex before it is put into the SQL text.
 */
export function fieldExpression(field: string): string {
  if (!FIELD_NAME.test(field)) throw new Error(`Not a field name: ${JSON.stringify(field)}`)
  return COLUMNS.has(field) ? field : `json_extract(doc, '$.${field}')`
}

export const isColumn = (field: string) => COLUMNS.has(field)
export const isNotNullColumn = (field: string) => NOT_NULL_COLUMNS.has(field)

/** Checks that `field` may be used (in `what`: q, sort_by or fields). */
export function checkField(field: string, fields: ReadonlySet<string>, what: string): void {
  if (!FIELD_NAME.test(field) || !fields.has(field)) {
    throw badList(
      `${what}: unknown field ${quote(field)}; fields you can use: ${allowedFields(fields)}.`,
    )
  }
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/

/**
 * A date-time given in `q`, as the fixed-width UTC form the records use
 * (`2026-01-01T00:00:00.000+00:00`), so text comparison is comparison of instants; `undefined`
 * when the text is not a date-time. A date-time without offset is taken as UTC. Refuses invalid
 * dates and sub-millisecond precision (the records only have milliseconds).
 */
export function normaliseDateTime(text: string, clause: string): string | undefined {
  const match = DATE_TIME.exec(text)
  if (!match) return undefined
  const [, y, mo, d, h, mi, s = '00', fraction = '', , sign, oh = '00', om = '00'] = match
  const invalid = (why: string) =>
    badList(
      `q clause ${quote(clause)}: ${quote(text)} is not a valid date-time (${why}); write e.g. 2026-01-01T00:00:00+00:00 (percent-encode + as %2B).`,
    )
  if (/[1-9]/.test(fraction.slice(3))) throw invalid('record times have millisecond precision')
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  if (month < 1 || month > 12 || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw invalid('no such day')
  }
  const hours = Number(h)
  const minutes = Number(mi)
  const seconds = Number(s)
  if (hours > 23 || minutes > 59 || seconds > 59) throw invalid('no such time of day')
  const offsetHours = Number(oh)
  const offsetMinutes = Number(om)
  if (offsetHours > 23 || offsetMinutes > 59) throw invalid('no such offset')
  const offset = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  const millis = Number(fraction.slice(0, 3).padEnd(3, '0'))
  const instant = date.getTime() + ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis - offset
  const utc = new Date(instant)
  const utcYear = utc.getUTCFullYear()
  if (utcYear < 0 || utcYear > 9999) throw invalid('out of range')
  return utc.toISOString().replace('Z', '+00:00')
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/** The number a value also stands for: itself when numeric, 1/0 for true/false. */
function numericValue(text: string): number | undefined {
  if (text === 'true') return 1
  if (text === 'false') return 0
  if (!NUMBER.test(text)) return undefined
  const number = Number(text)
  return Number.isFinite(number) ? number : undefined
}

const SQL_OPERATOR: Record<Exclude<Operator, '~'>, string> = {
  '=': '=',
  // Null-safe: `status!=failed` keeps records without a status.
  '!=': 'IS NOT',
  '>': '>',
  '>=': '>=',
  '<': '<',
  '<=': '<=',
}

/**
 * A comparison of `expression` with one non-null value, by type: when the stored value is a number
 * (or a boolean, which json_extract gives as 1/0) and the value is numeric (or true/false), they
 * compare as numbers; otherwise as text, date-times normalised to the records' fixed-width form.
 */
function comparison(
  field: string,
  expression: string,
  op: Exclude<Operator, '~'>,
  value: string,
  clause: string,
): Sql {
  const text = normaliseDateTime(value, clause) ?? value
  const sqlOp = SQL_OPERATOR[op]
  const number = isColumn(field) ? undefined : numericValue(value)
  if (number === undefined) return { sql: `${expression} ${sqlOp} ?`, args: [text] }
  return {
    sql: `CASE WHEN typeof(${expression}) IN ('integer', 'real') THEN ${expression} ${sqlOp} ? ELSE ${expression} ${sqlOp} ? END`,
    args: [number, text],
  }
}

function compileClause(clause: Clause, fields: ReadonlySet<string>): Sql {
  const { field, op, values, source } = clause
  if (!FIELD_NAME.test(field) || !fields.has(field)) {
    throw badList(
      `q clause ${quote(source)}: unknown field ${quote(field)}; fields you can use: ${allowedFields(fields)}.`,
    )
  }
  const expression = fieldExpression(field)
  if (op === '~') {
    const needle = values[0]
    if (typeof needle !== 'string') throw new Error('unreachable: the parser refuses ~null')
    return {
      sql: `instr(${CASEFOLD_FUNCTION}(${expression}), ?) > 0`,
      args: [needle.toLowerCase()],
    }
  }
  const parts = values.map((value): Sql => {
    if (value === null) {
      return { sql: `${expression} ${op === '=' ? 'IS NULL' : 'IS NOT NULL'}`, args: [] }
    }
    return comparison(field, expression, op, value, source)
  })
  if (parts.length === 1 && parts[0]) return parts[0]
  return {
    sql: `(${parts.map((part) => part.sql).join(' OR ')})`,
    args: parts.flatMap((part) => part.args),
  }
}

/** The SQL conditions of the clauses of `q` (to be joined with AND). */
export function compileClauses(clauses: readonly Clause[], fields: ReadonlySet<string>): Sql[] {
  return clauses.map((clause) => compileClause(clause, fields))
}

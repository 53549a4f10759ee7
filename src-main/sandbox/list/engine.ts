import type Database from 'better-sqlite3'
import {
  CASEFOLD_FUNCTION,
  FIELD_NAME,
  checkField,
  compileClauses,
  fieldExpression,
  isNotNullColumn,
  type Sql,
} from './compile'
import {
  decodeCursor,
  encodeCursor,
  invalidCursor,
  queryHash,
  type Direction,
  type Position,
  type SortValue,
} from './cursor'
import { ListError, badList, quote } from './errors'
import { parseQuery } from './query'
import { requestedTotal } from './total'
import { checkValues, type ListFields } from './values'

export interface ListParams {
  q?: string | null
  limit?: number | null
  sort_by?: string | null
  fields?: string | null
  pq?: string | null
  from_prev?: boolean | null
}

export interface ListScope {
  collection: string
  orgId: string
  /** Also list the global records (org_id NULL): catalogs, public models. */
  includeGlobal?: boolean
  /** Only the records of this parent; omitted or 'any' = all parents. */
  parentId?: string
  /** A handler-specific condition, e.g. `json_extract(doc,'$.status_code') = ?`. */
  extraWhere?: { sql: string; args: unknown[] }
}

export interface ListOptions {
  /** `field:asc|desc`; default `created_at:desc`. */
  defaultSort?: string
  /** Default 50. */
  defaultLimit?: number
  /**
   * The record's scalar top-level field names usable in q, sort_by and fields; with their types
   * (as the contract gives them), the values of q are checked against them too.
   */
  fields: ListFields
}

export interface Page<T> {
  items: T[]
  first: string | null
  next: string | null
  previous: string | null
}

export const DEFAULT_SORT = 'created_at:desc'
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 500
const STATEMENT_CACHE_SIZE = 256

interface SortSpec {
  field: string
  dir: 'asc' | 'desc'
  /** `field:dir` */
  text: string
}

interface Row {
  id: string
  doc: string
  sort_value: SortValue
}

interface Connection {
  statements: Map<string, Database.Statement>
  read: <R>(fn: () => R) => R
}

const connections = new WeakMap<Database.Database, Connection>()

/** Per-connection state: the statement cache, a read transaction and the casefold function. */
function connection(db: Database.Database): Connection {
  let state = connections.get(db)
  if (!state) {
    db.function(CASEFOLD_FUNCTION, { deterministic: true }, (value: unknown) => {
      if (typeof value === 'string') return value.toLowerCase()
      if (typeof value === 'number' || typeof value === 'bigint') return String(value)
      return Buffer.isBuffer(value) ? value.toString('utf8').toLowerCase() : null
    })
    const transaction = db.transaction((fn: () => unknown) => fn())
    state = {
      statements: new Map(),
      read: <R>(fn: () => R) => transaction(fn) as R,
    }
    connections.set(db, state)
  }
  return state
}

/** `db.prepare` through a small least-recently-used cache keyed by SQL text. */
function prepare(db: Database.Database, sql: string): Database.Statement {
  const { statements } = connection(db)
  let statement = statements.get(sql)
  if (statement) {
    statements.delete(sql)
  } else {
    statement = db.prepare(sql)
    if (statements.size >= STATEMENT_CACHE_SIZE) {
      const oldest = statements.keys().next()
      if (!oldest.done) statements.delete(oldest.value)
    }
  }
  statements.set(sql, statement)
  return statement
}

function checkLimit(limit: number | null | undefined, fallback: number): number {
  const value = limit ?? fallback
  if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT) {
    const message = `limit must be an integer from 1 to ${MAX_LIMIT}; got ${String(value)}.`
    throw new ListError(422, 'VALIDATION_FAILED', message, [
      { field: 'limit', code: 'out_of_range', message },
    ])
  }
  return value
}

function parseSort(text: string, fields: ReadonlySet<string> | null): SortSpec {
  const colon = text.indexOf(':')
  const field = colon < 0 ? text : text.slice(0, colon)
  const dir = colon < 0 ? '' : text.slice(colon + 1)
  if (fields === null) {
    // The handler's own default: trusted, but still never put into SQL unchecked.
    if (!FIELD_NAME.test(field) || (dir !== 'asc' && dir !== 'desc')) {
      throw new Error(`listRecords: bad defaultSort ${JSON.stringify(text)}`)
    }
    return { field, dir, text }
  }
  if (dir !== 'asc' && dir !== 'desc') {
    throw badList(
      `sort_by ${quote(text)} is not \`field:asc\` or \`field:desc\` (e.g. created_at:desc).`,
    )
  }
  checkField(field, fields, 'sort_by')
  return { field, dir, text }
}

function parseProjection(
  text: string | null | undefined,
  fields: ReadonlySet<string>,
): Set<string> | null {
  if (!text) return null
  const keep = new Set<string>(['id'])
  for (const part of text.split(',')) {
    const field = part.trim()
    if (field === '') {
      throw badList(
        `fields ${quote(text)} has an empty name; write comma-separated field names, e.g. id,name.`,
      )
    }
    checkField(field, fields, 'fields')
    keep.add(field)
  }
  return keep
}

function project(doc: Record<string, unknown>, keep: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(doc)) if (keep.has(key)) out[key] = value
  return out
}

type Comparison = '>' | '>=' | '<' | '<='

/**
 * `(sort key, id) op (value, id)` in the list's total order, as an indexable row-value comparison
 * for the NOT NULL columns. Nullable keys compare as `(key IS NOT NULL, ifnull(key, 0), id)`:
 * NULL sorts before every value (as in SQLite's ORDER BY) and NULLs among themselves by id.
 */
function keyComparison(sort: SortSpec, op: Comparison, value: SortValue, id: string): Sql {
  if (sort.field === 'id') return { sql: `id ${op} ?`, args: [id] }
  const expression = fieldExpression(sort.field)
  if (isNotNullColumn(sort.field)) {
    if (value === null) throw invalidCursor()
    return { sql: `(${expression}, id) ${op} (?, ?)`, args: [value, id] }
  }
  return {
    sql: `(${expression} IS NOT NULL, ifnull(${expression}, 0), id) ${op} (?, ?, ?)`,
    args: [value === null ? 0 : 1, value ?? 0, id],
  }
}

/** The rows after a position in the requested order: all (true), none (false) or a condition. */
function rowsAfter(position: Position, sort: SortSpec): Sql | boolean {
  if (position.at === 'start') return true
  if (position.at === 'end') return false
  const asc = sort.dir === 'asc'
  const op: Comparison = position.at === 'after' ? (asc ? '>' : '<') : asc ? '>=' : '<='
  return keyComparison(sort, op, position.value, position.id)
}

/** The rows before a position in the requested order. */
function rowsBefore(position: Position, sort: SortSpec): Sql | boolean {
  if (position.at === 'start') return false
  if (position.at === 'end') return true
  const asc = sort.dir === 'asc'
  const op: Comparison = position.at === 'after' ? (asc ? '<=' : '>=') : asc ? '<' : '>'
  return keyComparison(sort, op, position.value, position.id)
}

/**
 * The WHERE of each branch of the query: one for the organization's records and, with
 * `includeGlobal`, one for the global ones. Two branches are queried separately and merged
 * (UNION ALL) rather than with `org_id = ? OR org_id IS NULL`, so each one walks its index in
 * order and stops after a page instead of sorting the whole collection.
 */
function branches(scope: ListScope, filters: readonly Sql[]): Sql[] {
  const orgConditions: Sql[] = [{ sql: 'org_id = ?', args: [scope.orgId] }]
  if (scope.includeGlobal) orgConditions.push({ sql: 'org_id IS NULL', args: [] })
  return orgConditions.map((org) => {
    const parts: Sql[] = [
      { sql: 'collection = ?', args: [scope.collection] },
      org,
      { sql: 'deleted_at IS NULL', args: [] },
    ]
    if (scope.parentId !== undefined && scope.parentId !== 'any') {
      parts.push({ sql: 'parent_id = ?', args: [scope.parentId] })
    }
    if (scope.extraWhere) {
      parts.push({ sql: `(${scope.extraWhere.sql})`, args: scope.extraWhere.args })
    }
    parts.push(...filters)
    return and(parts)
  })
}

function and(parts: readonly Sql[]): Sql {
  return {
    sql: parts.map((part) => part.sql).join(' AND '),
    args: parts.flatMap((part) => part.args),
  }
}

function withRange(where: Sql, range: Sql | true): Sql {
  return range === true ? where : and([where, range])
}

function selectRows(
  db: Database.Database,
  where: readonly Sql[],
  sort: SortSpec,
  scan: 'ASC' | 'DESC',
  range: Sql | true,
  limit: number,
): Row[] {
  const expression = fieldExpression(sort.field)
  const order = sort.field === 'id' ? `id ${scan}` : `${expression} ${scan}, id ${scan}`
  const branchSql = where.map((branch) => {
    const condition = withRange(branch, range)
    return {
      sql: `SELECT id, doc, ${expression} AS sort_value FROM records WHERE ${condition.sql} ORDER BY ${order} LIMIT ?`,
      args: [...condition.args, limit],
    }
  })
  const [single] = branchSql
  if (single && branchSql.length === 1) {
    return prepare(db, single.sql).all(...single.args) as Row[]
  }
  const sql =
    `SELECT id, doc, sort_value FROM (` +
    branchSql.map((branch) => `SELECT * FROM (${branch.sql})`).join(' UNION ALL ') +
    `) ORDER BY sort_value ${scan}, id ${scan} LIMIT ?`
  return prepare(db, sql).all(...branchSql.flatMap((branch) => branch.args), limit) as Row[]
}

function anyRows(db: Database.Database, where: readonly Sql[], range: Sql | boolean): boolean {
  if (range === false) return false
  const conditions = where.map((branch) => withRange(branch, range))
  const sql =
    conditions
      .map((condition) => `SELECT 1 FROM records WHERE ${condition.sql}`)
      .join(' UNION ALL ') + ' LIMIT 1'
  return prepare(db, sql).get(...conditions.flatMap((condition) => condition.args)) !== undefined
}

/** How many rows the branches hold: the list's own WHERE, without any cursor position. */
function countRows(db: Database.Database, where: readonly Sql[]): number {
  let total = 0
  for (const branch of where) {
    const row = prepare(db, `SELECT count(*) AS n FROM records WHERE ${branch.sql}`).get(
      ...branch.args,
    ) as { n: number }
    total += row.n
  }
  return total
}

/**
 * Lists one collection's records: filtered by `q`, sorted by `sort_by` (ties broken by id),
 * projected by `fields`, one keyset page at a time. See index.ts for the cursor semantics.
 */
export function listRecords<T>(
  db: Database.Database,
  scope: ListScope,
  params: ListParams,
  options: ListOptions,
): Page<T> {
  const limit = checkLimit(params.limit, options.defaultLimit ?? DEFAULT_LIMIT)
  const sort = params.sort_by
    ? parseSort(params.sort_by, options.fields)
    : parseSort(options.defaultSort ?? DEFAULT_SORT, null)
  const clauses = checkValues(params.q ? parseQuery(params.q) : [], options.fields)
  const filters = compileClauses(clauses, options.fields)
  const projection = parseProjection(params.fields, options.fields)
  const query = queryHash([
    scope.collection,
    scope.orgId,
    scope.includeGlobal ?? false,
    scope.parentId ?? 'any',
    scope.extraWhere?.sql ?? null,
    scope.extraWhere?.args ?? [],
    clauses.map((clause) => [clause.field, clause.op, clause.values]),
    sort.text,
  ])

  let position: Position = { at: 'start' }
  let direction: Direction = params.from_prev ? 'backward' : 'forward'
  if (params.pq) {
    const cursor = decodeCursor(params.pq)
    if (cursor.sort !== sort.text) {
      throw badList(
        `this cursor belongs to another query: it was made for sort_by=${cursor.sort}, not ${sort.text}; pass it back with the same q and sort_by, or start again without pq.`,
      )
    }
    if (cursor.query !== query) {
      throw badList(
        'this cursor belongs to another query (another q or list); pass it back with the same q and sort_by, or start again without pq.',
      )
    }
    position = cursor.position
    if (!params.from_prev) direction = cursor.direction
  } else if (direction === 'backward') {
    position = { at: 'end' }
  }

  const where = branches(scope, filters)
  const { read } = connection(db)
  const answerTotal = requestedTotal()
  const { rows, hasBefore, hasAfter, before, after, total } = read(() => {
    const range = direction === 'forward' ? rowsAfter(position, sort) : rowsBefore(position, sort)
    const requested = sort.dir === 'asc' ? 'ASC' : 'DESC'
    const reversed = sort.dir === 'asc' ? 'DESC' : 'ASC'
    const scan = direction === 'forward' ? requested : reversed
    let rows = range === false ? [] : selectRows(db, where, sort, scan, range, limit + 1)
    const more = rows.length > limit
    if (more) rows = rows.slice(0, limit)
    if (direction === 'backward') rows.reverse()
    const firstRow = rows[0]
    const lastRow = rows.at(-1)
    const before: Position = firstRow
      ? { at: 'before', value: firstRow.sort_value, id: firstRow.id }
      : position
    const after: Position = lastRow
      ? { at: 'after', value: lastRow.sort_value, id: lastRow.id }
      : position
    return {
      rows,
      hasBefore:
        direction === 'backward'
          ? more
          : position.at !== 'start' && anyRows(db, where, rowsBefore(before, sort)),
      hasAfter:
        direction === 'forward'
          ? more
          : position.at !== 'end' && anyRows(db, where, rowsAfter(after, sort)),
      before,
      after,
      // In the page's read transaction, so the count and the page see the same rows.
      total: answerTotal ? countRows(db, where) : 0,
    }
  })
  answerTotal?.(total)

  const cursor = (at: Position, dir: Direction) =>
    encodeCursor({ sort: sort.text, query, position: at, direction: dir })
  return {
    items: rows.map((row) => {
      const doc = JSON.parse(row.doc) as Record<string, unknown>
      return (projection ? project(doc, projection) : doc) as T
    }),
    // Always a cursor: the client can jump back to the start whatever page it is on.
    first: cursor({ at: 'start' }, 'forward'),
    next: hasAfter ? cursor(after, 'forward') : null,
    previous: hasBefore ? cursor(before, 'backward') : null,
  }
}

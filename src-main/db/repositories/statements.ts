import type Database from 'better-sqlite3'
import { boundMs, decodeCursor, encodeCursor, pageLimit, type TimeBound } from '../values'

/** A page of a keyset list: `next` goes back as `after` for the following page, null at the end. */
export interface Page<T> {
  items: T[]
  next: string | null
}

/**
 * Statements whose text depends on which filters a list call uses. A catch-all
 * `(? IS NULL OR col = ?)` would let SQLite pick one plan for every combination, usually the wrong
 * one; instead each combination gets its own text, prepared the first time it is used and kept
 * for the life of the repository. The texts come from a fixed set of fragments, never from
 * values: every value is bound.
 */
export class StatementCache {
  private readonly statements = new Map<string, Database.Statement>()

  constructor(private readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let statement = this.statements.get(sql)
    if (!statement) {
      statement = this.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    return statement
  }
}

/** WHERE fragments and their values, built together so they cannot drift apart. */
export class Conditions {
  readonly clauses: string[] = []
  readonly values: unknown[] = []

  add(clause: string, ...values: unknown[]): this {
    this.clauses.push(clause)
    this.values.push(...values)
    return this
  }

  get sql(): string {
    return this.clauses.join(' AND ')
  }
}

/** Rows of `[sortKey, seq, json]`, one more than the page, into a page and its cursor. */
export function toPage<T>(rows: unknown[][], limit: number): Page<T> {
  const more = rows.length > limit
  const kept = more ? rows.slice(0, limit) : rows
  const last = kept.at(-1)
  return {
    items: kept.map((row) => JSON.parse(row[2] as string) as T),
    next: more && last ? encodeCursor(last[0] as number | string, last[1] as number) : null,
  }
}

/** What every newest-first list of an organization's records takes besides its own filters. */
export interface NewestFirstQuery {
  orgId: string
  /** Created at or after. */
  from?: TimeBound
  /** Created before. */
  to?: TimeBound
  limit?: number
  /** The `next` of the previous page. */
  after?: string | null
}

/**
 * One page of an organization's records in `table`, newest first, keyset-paged on (created,
 * seq). `filter` adds the list's own conditions; they come after the organization's and before
 * the window's, so each combination keeps one statement text.
 */
export function newestFirstPage<T>(
  lists: StatementCache,
  table: string,
  query: NewestFirstQuery,
  filter: (where: Conditions) => void,
): Page<T> {
  const limit = pageLimit(query.limit)
  const where = new Conditions().add('org_id = ?', query.orgId)
  filter(where)
  if (query.from !== undefined) where.add('created_ms >= ?', boundMs(query.from, 'from'))
  if (query.to !== undefined) where.add('created_ms < ?', boundMs(query.to, 'to'))
  if (query.after) where.add('(created_ms, seq) < (?, ?)', ...decodeCursor(query.after, 'number'))
  const rows = lists
    .get(
      `SELECT created_ms, seq, json FROM ${table} WHERE ${where.sql}
         ORDER BY created_ms DESC, seq DESC LIMIT ?`,
    )
    .raw()
    .all(...where.values, limit + 1) as unknown[][]
  return toPage<T>(rows, limit)
}

import type Database from 'better-sqlite3'
import { encodeCursor } from '../values'

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

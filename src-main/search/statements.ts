import type Database from 'better-sqlite3'

/**
 * Statements prepared the first time their text is used and kept: the text depends on which
 * filters a search uses, and comes from fixed fragments only; every value is bound.
 */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>()

  constructor(private readonly db: Database.Database) {}

  /** Rows as arrays, in column order. */
  rows(sql: string, ...values: unknown[]): unknown[][] {
    return this.get(sql)
      .raw(true)
      .all(...values) as unknown[][]
  }

  /** The first column of the first row, or undefined. */
  value(sql: string, ...values: unknown[]): unknown {
    return this.get(sql)
      .pluck(true)
      .get(...values)
  }

  private get(sql: string): Database.Statement {
    let statement = this.cache.get(sql)
    if (!statement) {
      statement = this.db.prepare(sql)
      this.cache.set(sql, statement)
    }
    return statement
  }
}

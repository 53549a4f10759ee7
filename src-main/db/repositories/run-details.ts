import type Database from 'better-sqlite3'
import type { NodeRun, RunCallbackDelivery, RunLog } from '../../../src-shared/api'
import { decimalMicro, decodeCursor, pageLimit, timeMs, timeMsOrNull } from '../values'
import { RowWriter, type WriteResult } from './rows'
import { toPage, type Page } from './statements'

/**
 * What the service lists under one run: node runs, logs, callback deliveries. None of them
 * carries an org_id, so each row takes its run's; the run must therefore be written first (the
 * sync engine reads these per run, after the run itself), and a child arriving for a run the
 * mirror does not hold is refused rather than stored without an organization.
 */
class RunOrgs {
  private readonly orgOf: Database.Statement

  constructor(private readonly db: Database.Database) {
    this.orgOf = db.prepare('SELECT org_id FROM runs WHERE id = ?').pluck()
  }

  /** The organization of each run the records name, or an error naming the missing run. */
  resolve(runIds: Iterable<string>, what: string): Map<string, string> {
    const orgs = new Map<string, string>()
    for (const runId of runIds) {
      if (orgs.has(runId)) continue
      const org = this.orgOf.get(runId) as string | undefined
      if (org === undefined) {
        throw new Error(`Run ${runId} is not in the mirror; write the run before its ${what}.`)
      }
      orgs.set(runId, org)
    }
    return orgs
  }

  /**
   * A page of one kind of child, written in one transaction, answering how many rows were
   * written: each row is the record's id, its run's organization, its run's id, then `rest`.
   * `afterWrite` follows each row that was not stale (a delivery's attempts).
   */
  pageWriter<T extends { id: string; run_id: string }>(
    rows: RowWriter,
    what: string,
    rest: (record: T) => unknown[],
    afterWrite?: (record: T, result: Exclude<WriteResult, 'stale'>) => void,
  ): Database.Transaction<(records: readonly T[]) => number> {
    return this.db.transaction((records: readonly T[]) => {
      const org = this.resolve(
        records.map((r) => r.run_id),
        what,
      )
      let written = 0
      for (const record of records) {
        const result = rows.write([
          record.id,
          org.get(record.run_id),
          record.run_id,
          ...rest(record),
        ])
        if (result === 'stale') continue
        written++
        afterWrite?.(record, result)
      }
      return written
    })
  }
}

export class NodeRunsRepository {
  private readonly rows: RowWriter
  private readonly ofRun: Database.Statement
  private readonly writePage: Database.Transaction<(records: readonly NodeRun[]) => number>

  constructor(db: Database.Database) {
    const orgs = new RunOrgs(db)
    this.rows = new RowWriter(db, {
      table: 'node_runs',
      key: ['id'],
      columns: [
        'org_id',
        'run_id',
        'flow_node_id',
        'wfengine_node_id',
        'status_code',
        'cost',
        'cost_micro',
        'created_ms',
        'updated_ms',
        'started_ms',
        'completed_ms',
        'json',
      ],
    })
    this.ofRun = db
      .prepare('SELECT json FROM node_runs WHERE run_id = ? ORDER BY created_ms, seq')
      .pluck()
    this.writePage = orgs.pageWriter<NodeRun>(this.rows, 'node runs', (r) => [
      r.flow_node_id,
      r.wfengine_node_id,
      r.status_code,
      r.cost,
      decimalMicro(r.cost),
      timeMs(r.created_at, 'node_run.created_at'),
      timeMs(r.updated_at, 'node_run.updated_at'),
      timeMsOrNull(r.started_at, 'node_run.started_at'),
      timeMsOrNull(r.completed_at, 'node_run.completed_at'),
      JSON.stringify(r),
    ])
  }

  upsertPage(records: readonly NodeRun[]): number {
    return this.writePage.immediate(records)
  }

  listForRun(runId: string): NodeRun[] {
    return (this.ofRun.all(runId) as string[]).map((json) => JSON.parse(json) as NodeRun)
  }
}

export interface RunLogListQuery {
  runId: string
  limit?: number
  after?: string | null
}

/** Log lines never change once written, so a line seen again is left as it is. */
export class RunLogsRepository {
  private readonly rows: RowWriter
  private readonly firstPage: Database.Statement
  private readonly nextPage: Database.Statement
  private readonly writePage: Database.Transaction<(records: readonly RunLog[]) => number>

  constructor(db: Database.Database) {
    const orgs = new RunOrgs(db)
    this.rows = new RowWriter(db, {
      table: 'run_logs',
      key: ['id'],
      columns: ['org_id', 'run_id', 'node_run_id', 'level_code', 'message', 'created_ms', 'json'],
      fts: ['message'],
      immutable: true,
    })
    const select = 'SELECT created_ms, seq, json FROM run_logs WHERE run_id = ?'
    const order = 'ORDER BY created_ms, seq LIMIT ?'
    this.firstPage = db.prepare(`${select} ${order}`).raw()
    this.nextPage = db.prepare(`${select} AND (created_ms, seq) > (?, ?) ${order}`).raw()
    this.writePage = orgs.pageWriter<RunLog>(this.rows, 'logs', (r) => [
      r.node_run_id,
      r.level_code,
      r.message,
      timeMs(r.created_at, 'run_log.created_at'),
      JSON.stringify(r),
    ])
  }

  upsertPage(records: readonly RunLog[]): number {
    return this.writePage.immediate(records)
  }

  /** Oldest first, as a log reads. */
  listForRun(query: RunLogListQuery): Page<RunLog> {
    const limit = pageLimit(query.limit)
    const rows = query.after
      ? this.nextPage.all(query.runId, ...decodeCursor(query.after, 'number'), limit + 1)
      : this.firstPage.all(query.runId, limit + 1)
    return toPage<RunLog>(rows as unknown[][], limit)
  }
}

/**
 * Callback deliveries of runs. The json keeps each delivery whole, attempts included; the
 * attempt rows, replaced with their delivery, are there for queries over status and timing.
 */
export class CallbackDeliveriesRepository {
  private readonly rows: RowWriter
  private readonly deleteAttempts: Database.Statement
  private readonly insertAttempt: Database.Statement
  private readonly ofRun: Database.Statement
  private readonly writePage: Database.Transaction<
    (records: readonly RunCallbackDelivery[]) => number
  >

  constructor(db: Database.Database) {
    const orgs = new RunOrgs(db)
    this.rows = new RowWriter(db, {
      table: 'run_callback_deliveries',
      key: ['id'],
      columns: [
        'org_id',
        'run_id',
        'status_code',
        'failure_reason_code',
        'is_automatic',
        'attempt_count',
        'created_ms',
        'updated_ms',
        'completed_ms',
        'next_attempt_ms',
        'json',
      ],
    })
    this.deleteAttempts = db.prepare('DELETE FROM delivery_attempts WHERE delivery_id = ?')
    this.insertAttempt = db.prepare(`
      INSERT INTO delivery_attempts (delivery_id, position, id, attempt_number, status_code,
        response_time_ms, error_message, created_ms)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    this.ofRun = db
      .prepare('SELECT json FROM run_callback_deliveries WHERE run_id = ? ORDER BY created_ms, seq')
      .pluck()
    this.writePage = orgs.pageWriter<RunCallbackDelivery>(
      this.rows,
      'callback deliveries',
      (d) => [
        d.status_code,
        d.failure_reason_code,
        d.is_automatic ? 1 : 0,
        d.attempt_count,
        timeMs(d.created_at, 'delivery.created_at'),
        timeMs(d.updated_at, 'delivery.updated_at'),
        timeMsOrNull(d.completed_at, 'delivery.completed_at'),
        timeMsOrNull(d.next_attempt_at, 'delivery.next_attempt_at'),
        JSON.stringify(d),
      ],
      (d, result) => {
        if (result === 'updated') this.deleteAttempts.run(d.id)
        d.attempts.forEach((a, position) => {
          this.insertAttempt.run(
            d.id,
            position,
            a.id,
            a.attempt_number,
            a.status_code,
            a.response_time_ms,
            a.error_message,
            timeMs(a.created_at, 'attempt.created_at'),
          )
        })
      },
    )
  }

  upsertPage(records: readonly RunCallbackDelivery[]): number {
    return this.writePage.immediate(records)
  }

  listForRun(runId: string): RunCallbackDelivery[] {
    return (this.ofRun.all(runId) as string[]).map(
      (json) => JSON.parse(json) as RunCallbackDelivery,
    )
  }
}

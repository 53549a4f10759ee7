import type Database from 'better-sqlite3'
import type { RunStatusCode } from '../../../src-shared/api'
import { idList } from '../values'

/** Statuses a run still leaves: its details may still grow. */
const UNFINISHED_STATUSES = ['queued', 'starting', 'running'] as const satisfies RunStatusCode[]
const UNFINISHED = JSON.stringify(UNFINISHED_STATUSES)

export interface RunDetailsFetched {
  runId: string
  /** The run's updated_at (epoch ms) when its details were fetched. */
  runUpdatedMs: number
  fetchedMs: number
}

/**
 * Which runs had their node runs, logs and callback deliveries fetched, at which version of the
 * run. Details are listed per run, one request each, so the sync fetches them again only for a
 * run that changed since, or that has not finished (a running run's logs grow).
 */
export class RunDetailsFetchedRepository {
  private readonly one: Database.Statement
  private readonly upsert: Database.Statement
  private readonly runUpdated: Database.Statement
  private readonly dueStatement: Database.Statement

  constructor(
    db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {
    this.one = db
      .prepare('SELECT run_updated_ms, fetched_ms FROM run_details_fetched WHERE run_id = ?')
      .raw()
    this.upsert = db.prepare(`
      INSERT INTO run_details_fetched (run_id, run_updated_ms, fetched_ms) VALUES (?, ?, ?)
      ON CONFLICT (run_id) DO UPDATE SET
        run_updated_ms = excluded.run_updated_ms, fetched_ms = excluded.fetched_ms`)
    this.runUpdated = db.prepare('SELECT updated_ms FROM runs WHERE id = ?').pluck()
    const unfinished = `(SELECT value FROM json_each('${UNFINISHED}'))`
    // Each branch uses an index and keeps only its newest `limit`, so nothing walks the
    // organization's runs (a plan that did took 150 ms at 100,000 runs, on the thread that
    // answers the window): the runs named, looked up one by one by id (CROSS JOIN keeps SQLite
    // from choosing another index), and the unfinished runs of each status, newest created first
    // by the status index (a history can hold thousands of runs left running).
    const unfinishedOf = (status: RunStatusCode) => `
           SELECT * FROM (
             SELECT r.id, r.updated_ms, r.seq FROM runs r
              WHERE r.org_id = @org AND r.status_code = '${status}'
              ORDER BY r.created_ms DESC LIMIT @limit)`
    this.dueStatement = db
      .prepare(
        `SELECT id FROM (
           SELECT * FROM (
             SELECT r.id, r.updated_ms, r.seq FROM json_each(@named) AS named
               CROSS JOIN runs r ON r.id = named.value
               LEFT JOIN run_details_fetched f ON f.run_id = r.id
              WHERE r.org_id = @org
                AND (f.run_id IS NULL OR f.run_updated_ms <> r.updated_ms
                     OR r.status_code IN ${unfinished})
              ORDER BY r.updated_ms DESC, r.seq DESC LIMIT @limit)
           UNION ${UNFINISHED_STATUSES.map(unfinishedOf).join('\n           UNION ')}
         ) ORDER BY updated_ms DESC, seq DESC LIMIT @limit`,
      )
      .pluck()
  }

  get(runId: string): RunDetailsFetched | null {
    const row = this.one.get(runId) as [number, number] | undefined
    return row === undefined ? null : { runId, runUpdatedMs: row[0], fetchedMs: row[1] }
  }

  /**
   * Records that the run's details were fetched while the run stood at `runUpdatedMs` (read
   * before fetching them: a run that changed meanwhile then counts as changed). False when the
   * run is not in the mirror (deleted meanwhile): there is nothing to mark.
   */
  mark(runId: string, runUpdatedMs: number): boolean {
    if (this.runUpdated.get(runId) === undefined) return false
    this.upsert.run(runId, runUpdatedMs, this.clock())
    return true
  }

  /** The run's updated_at (epoch ms) as the mirror holds it; null when the run is not there. */
  runUpdatedMs(runId: string): number | null {
    return (this.runUpdated.get(runId) as number | undefined) ?? null
  }

  /**
   * The runs whose details a sync should fetch, newest first, at most `limit`: those of
   * `changed` whose details were never fetched or were fetched at another version of the run,
   * and every unfinished run of the organization.
   */
  due(orgId: string, changed: readonly string[], limit: number): string[] {
    return this.dueStatement.all({ named: idList(changed), org: orgId, limit }) as string[]
  }
}

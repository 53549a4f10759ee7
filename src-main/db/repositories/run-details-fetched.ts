import type Database from 'better-sqlite3'
import type { RunStatusCode } from '../../../src-shared/api'
import { idList } from '../values'

/** Statuses a run still leaves: its details may still grow. */
const UNFINISHED = JSON.stringify(['queued', 'starting', 'running'] satisfies RunStatusCode[])

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
    // Two branches so that each uses its index: the runs named (by id), and the unfinished runs
    // (by status). A full scan of the runs for the second would cost every sync its length.
    this.dueStatement = db
      .prepare(
        `SELECT id FROM (
           SELECT r.id, r.updated_ms, r.seq FROM runs r
             LEFT JOIN run_details_fetched f ON f.run_id = r.id
            WHERE r.id IN (SELECT value FROM json_each(?)) AND r.org_id = ?
              AND (f.run_id IS NULL OR f.run_updated_ms <> r.updated_ms
                   OR r.status_code IN ${unfinished})
           UNION
           SELECT r.id, r.updated_ms, r.seq FROM runs r
            WHERE r.org_id = ? AND r.status_code IN ${unfinished}
         ) ORDER BY updated_ms DESC, seq DESC LIMIT ?`,
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
    return this.dueStatement.all(idList(changed), orgId, orgId, limit) as string[]
  }
}

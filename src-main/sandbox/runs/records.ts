import type Database from 'better-sqlite3'
import type { NodeRun, RunLog } from '../../../src-shared/api'
import type { SandboxDb } from '../db'
import type { StoredRun } from './types'

/**
 * The engine's reads and writes of runs, run logs and node runs, as prepared statements on the
 * one `records` table. Runs keep their target (the model) as parent_id, logs and node runs their
 * run, so stats and the per-run lists walk the parent index.
 */
export class RunRecords {
  private readonly statements: {
    get: Database.Statement
    insert: Database.Statement
    update: Database.Statement
    nodeRuns: Database.Statement
    unfinished: Database.Statement
  }

  constructor(readonly db: SandboxDb) {
    this.statements = {
      get: db.prepare(
        `SELECT doc FROM records WHERE collection = ? AND id = ? AND org_id = ? AND deleted_at IS NULL`,
      ),
      insert: db.prepare(
        `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      update: db.prepare(
        `UPDATE records SET doc = ?, updated_at = ? WHERE collection = ? AND id = ? AND org_id = ?`,
      ),
      nodeRuns: db.prepare(
        `SELECT doc FROM records WHERE collection = 'node_runs' AND parent_id = ? AND org_id = ?
           AND deleted_at IS NULL ORDER BY created_at, id`,
      ),
      unfinished: db.prepare(
        `SELECT org_id, doc FROM records WHERE collection = 'runs' AND deleted_at IS NULL
           AND json_extract(doc, '$.status_code') IN ('queued', 'starting', 'running')`,
      ),
    }
  }

  run(orgId: string, id: string): StoredRun | undefined {
    const row = this.statements.get.get('runs', id, orgId) as { doc: string } | undefined
    return row ? (JSON.parse(row.doc) as StoredRun) : undefined
  }

  insertRun(orgId: string, parentId: string, run: StoredRun): void {
    this.insert('runs', orgId, parentId, run, run.updated_at)
  }

  saveRun(orgId: string, run: StoredRun): void {
    this.statements.update.run(JSON.stringify(run), run.updated_at, 'runs', run.id, orgId)
  }

  insertLog(orgId: string, log: RunLog): void {
    // RunLog has no updated_at: a log line never changes, so the column takes its creation time.
    this.insert('run_logs', orgId, log.run_id, log, log.created_at)
  }

  insertNodeRun(orgId: string, nodeRun: NodeRun): void {
    this.insert('node_runs', orgId, nodeRun.run_id, nodeRun, nodeRun.updated_at)
  }

  private insert(
    collection: string,
    orgId: string,
    parentId: string,
    record: { id: string; created_at: string },
    updatedAt: string,
  ): void {
    this.statements.insert.run(
      collection,
      record.id,
      orgId,
      parentId,
      record.created_at,
      updatedAt,
      JSON.stringify(record),
    )
  }

  saveNodeRun(orgId: string, nodeRun: NodeRun): void {
    this.statements.update.run(
      JSON.stringify(nodeRun),
      nodeRun.updated_at,
      'node_runs',
      nodeRun.id,
      orgId,
    )
  }

  nodeRunsOf(orgId: string, runId: string): NodeRun[] {
    const rows = this.statements.nodeRuns.all(runId, orgId) as { doc: string }[]
    return rows.map((row) => JSON.parse(row.doc) as NodeRun)
  }

  /** Every run of every organization that has not reached a terminal status. */
  unfinished(): { orgId: string; run: StoredRun }[] {
    const rows = this.statements.unfinished.all() as { org_id: string; doc: string }[]
    return rows.map((row) => ({ orgId: row.org_id, run: JSON.parse(row.doc) as StoredRun }))
  }
}

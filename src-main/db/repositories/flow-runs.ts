import { createHash } from 'node:crypto'
import type Database from 'better-sqlite3'
import type {
  FlowRunRecord,
  FlowRunState,
  FlowRunTotals,
  NodeRunError,
  NodeRunRecord,
  NodeRunState,
} from '../../../src-shared/domain/flow-run'
import { withoutFlush } from '../connection'

export interface NewFlowRun {
  id: string
  profile: string
  orgId: string
  flowId: string
  flowVersion: number | null
  inputs: Record<string, unknown>
  totals: FlowRunTotals
  /** The flow document as it runs (kept once per content, for provenance records). */
  document?: Record<string, unknown>
}

/** What a node run sent: its inputs (seeds included) and its seeds by input name. */
export interface SentInputs {
  inputs: Record<string, unknown>
  seeds: Record<string, number>
}

/** What the cache hands out: the outputs of a succeeded node run, and where they were made. */
export interface CachedOutputs {
  flowRunId: string
  nodeId: string
  attempt: number
  outputs: Record<string, unknown>
  costMicro: number
}

interface FlowRunRow {
  id: string
  profile: string
  org_id: string
  flow_id: string
  flow_version: number | null
  inputs_json: string
  state: FlowRunState
  started_ms: number
  ended_ms: number | null
  totals_json: string
  error_code: string | null
  error_message: string | null
}

interface NodeRunRow {
  flow_run_id: string
  node_id: string
  attempt: number
  cache_key: string | null
  state: NodeRunState
  outputs_json: string | null
  cost_micro: number
  remote_run_id: string | null
  batch_id: string | null
  cached_from: string | null
  error_code: string | null
  error_message: string | null
  queued_ms: number | null
  started_ms: number | null
  ended_ms: number | null
}

const NODE_COLUMNS = `flow_run_id, node_id, attempt, cache_key, state, outputs_json, cost_micro,
  remote_run_id, batch_id, cached_from, error_code, error_message, queued_ms, started_ms, ended_ms`

/**
 * Flow runs and their node runs, in the ledger: what the scheduler did on this machine, kept for
 * review offline, for resuming a flow run after a crash (its succeeded node runs are not run
 * again) and as the cache (a succeeded node run's outputs, found by cache key, within the same
 * profile and organization). A node run is written when it starts and again when it ends, so a
 * crash leaves it `running` and the resumed flow run runs it again (remote runners re-attach).
 */
export class FlowRunsRepository {
  private readonly insertRun: Database.Statement
  private readonly restartRun: Database.Statement
  private readonly endRun: Database.Statement
  private readonly runById: Database.Statement
  private readonly recentRuns: Database.Statement
  private readonly runsOfFlow: Database.Statement
  private readonly writeNode: Database.Statement
  private readonly nodeOf: Database.Statement
  private readonly nodesOf: Database.Statement
  private readonly byKey: Database.Statement
  private readonly keepDocument: Database.Statement
  private readonly linkDocument: Database.Statement
  private readonly documentOf: Database.Statement
  private readonly writeSent: Database.Statement
  private readonly sentOf: Database.Statement
  private readonly seedsOfRun: Database.Statement
  private readonly byRemoteRun: Database.Statement
  private readonly byOutput: Database.Statement

  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {
    this.insertRun = db.prepare(`
      INSERT INTO flow_runs (id, profile, org_id, flow_id, flow_version, inputs_json, state,
        started_ms, totals_json)
      VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)`)
    this.restartRun = db.prepare(`
      UPDATE flow_runs SET state = 'running', ended_ms = NULL, error_code = NULL,
        error_message = NULL
      WHERE id = ?`)
    this.endRun = db.prepare(`
      UPDATE flow_runs SET state = ?, ended_ms = ?, totals_json = ?, error_code = ?,
        error_message = ?
      WHERE id = ?`)
    this.runById = db.prepare(`SELECT * FROM flow_runs WHERE id = ?`)
    this.recentRuns = db.prepare(`
      SELECT * FROM flow_runs WHERE profile = ? AND org_id = ? ORDER BY started_ms DESC LIMIT ?`)
    this.runsOfFlow = db.prepare(`
      SELECT * FROM flow_runs WHERE flow_id = ? AND profile = ? AND org_id = ?
      ORDER BY started_ms DESC LIMIT ?`)
    this.writeNode = db.prepare(`
      INSERT INTO node_runs (${NODE_COLUMNS})
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (flow_run_id, node_id, attempt) DO UPDATE SET
        cache_key = excluded.cache_key, state = excluded.state,
        outputs_json = excluded.outputs_json, cost_micro = excluded.cost_micro,
        remote_run_id = excluded.remote_run_id, batch_id = excluded.batch_id,
        cached_from = excluded.cached_from, error_code = excluded.error_code,
        error_message = excluded.error_message,
        queued_ms = coalesce(node_runs.queued_ms, excluded.queued_ms),
        started_ms = coalesce(excluded.started_ms, node_runs.started_ms),
        ended_ms = excluded.ended_ms`)
    this.nodeOf = db.prepare(`
      SELECT ${NODE_COLUMNS} FROM node_runs WHERE flow_run_id = ? AND node_id = ? AND attempt = ?`)
    this.nodesOf = db.prepare(`
      SELECT ${NODE_COLUMNS} FROM node_runs WHERE flow_run_id = ?
      ORDER BY coalesce(queued_ms, started_ms, ended_ms), node_id, attempt`)
    this.byKey = db.prepare(`
      SELECT n.flow_run_id, n.node_id, n.attempt, n.outputs_json, n.cost_micro
      FROM node_runs n JOIN flow_runs f ON f.id = n.flow_run_id
      WHERE n.cache_key = ? AND n.state = 'succeeded' AND f.profile = ? AND f.org_id = ?
      ORDER BY n.ended_ms DESC LIMIT 1`)
    this.keepDocument = db.prepare(
      `INSERT INTO flow_documents (sha256, flow_json) VALUES (?, ?) ON CONFLICT DO NOTHING`,
    )
    this.linkDocument = db.prepare(`UPDATE flow_runs SET document_sha256 = ? WHERE id = ?`)
    this.documentOf = db.prepare(`
      SELECT d.flow_json FROM flow_runs f JOIN flow_documents d ON d.sha256 = f.document_sha256
      WHERE f.id = ?`)
    this.writeSent = db.prepare(`
      UPDATE node_runs SET inputs_json = ?, seeds_json = ?
      WHERE flow_run_id = ? AND node_id = ? AND attempt = ?`)
    this.sentOf = db.prepare(`
      SELECT inputs_json, seeds_json FROM node_runs
      WHERE flow_run_id = ? AND node_id = ? AND attempt = ?`)
    // The last attempt of each node that recorded seeds.
    this.seedsOfRun = db.prepare(`
      SELECT node_id, seeds_json FROM node_runs n
      WHERE flow_run_id = ? AND seeds_json IS NOT NULL AND attempt = (
        SELECT max(attempt) FROM node_runs m
        WHERE m.flow_run_id = n.flow_run_id AND m.node_id = n.node_id AND m.seeds_json IS NOT NULL)
      ORDER BY node_id`)
    this.byRemoteRun = db.prepare(`
      SELECT ${NODE_COLUMNS} FROM node_runs
      WHERE remote_run_id = ? AND state = 'succeeded' ORDER BY ended_ms DESC LIMIT 1`)
    // A scan, filtered by text first: asked once per "where did this asset come from".
    this.byOutput = db.prepare(`
      SELECT ${NODE_COLUMNS} FROM node_runs
      WHERE state = 'succeeded' AND outputs_json LIKE ? ORDER BY ended_ms DESC LIMIT 16`)
  }

  /** Starts a flow run, or (the same id again: a resume) marks it running once more. */
  start(run: NewFlowRun): { resumed: boolean } {
    if (this.get(run.id)) {
      this.restartRun.run(run.id)
      this.keepDocumentOf(run)
      return { resumed: true }
    }
    this.insertRun.run(
      run.id,
      run.profile,
      run.orgId,
      run.flowId,
      run.flowVersion,
      JSON.stringify(run.inputs),
      this.clock(),
      JSON.stringify(run.totals),
    )
    this.keepDocumentOf(run)
    return { resumed: false }
  }

  private keepDocumentOf(run: NewFlowRun): void {
    if (!run.document) return
    const json = JSON.stringify(run.document)
    const sha256 = createHash('sha256').update(json).digest('hex')
    this.keepDocument.run(sha256, json)
    this.linkDocument.run(sha256, run.id)
  }

  /** The flow document the flow run ran; null for flow runs made before it was kept. */
  document(id: string): Record<string, unknown> | null {
    const row = this.documentOf.get(id) as { flow_json: string } | undefined
    return row ? (JSON.parse(row.flow_json) as Record<string, unknown>) : null
  }

  finish(
    id: string,
    state: Exclude<FlowRunState, 'running'>,
    totals: FlowRunTotals,
    error: NodeRunError | null = null,
  ): void {
    this.endRun.run(
      state,
      this.clock(),
      JSON.stringify(totals),
      error?.code ?? null,
      error?.message ?? null,
      id,
    )
  }

  get(id: string): FlowRunRecord | null {
    const row = this.runById.get(id) as FlowRunRow | undefined
    return row ? toFlowRun(row) : null
  }

  /** The newest flow runs of a profile and organization. */
  recent(scope: { profile: string; orgId: string }, limit = 50): FlowRunRecord[] {
    return (this.recentRuns.all(scope.profile, scope.orgId, limit) as FlowRunRow[]).map(toFlowRun)
  }

  /** The newest flow runs of one flow in a profile and organization. */
  ofFlow(scope: { profile: string; orgId: string }, flowId: string, limit = 50): FlowRunRecord[] {
    return (this.runsOfFlow.all(flowId, scope.profile, scope.orgId, limit) as FlowRunRow[]).map(
      toFlowRun,
    )
  }

  /**
   * Writes the node run as it stands now (one row per flow run, node and attempt). Not flushed
   * to disk on its own (see withoutFlush): a record a power cut takes back makes the node run
   * again on resume, where its intent (flushed) gives back the paid work without a dispatch.
   */
  saveNode(record: NodeRunRecord): void {
    withoutFlush(this.db, () => {
      this.write(record)
    })
  }

  private write(record: NodeRunRecord): void {
    this.writeNode.run(
      record.flowRunId,
      record.nodeId,
      record.attempt,
      record.cacheKey,
      record.state,
      record.outputs === null ? null : JSON.stringify(record.outputs),
      record.costMicro,
      record.remoteRunId,
      record.batchId,
      record.cachedFrom,
      record.error?.code ?? null,
      record.error?.message ?? null,
      record.queuedMs,
      record.startedMs,
      record.endedMs,
    )
  }

  /**
   * Records what a node run sent (or, served from the cache, what it stands for). Its row must
   * exist (`saveNode` first). Not flushed on its own, like `saveNode`.
   */
  saveSent(flowRunId: string, nodeId: string, attempt: number, sent: SentInputs): void {
    withoutFlush(this.db, () => {
      this.writeSent.run(
        JSON.stringify(sent.inputs),
        JSON.stringify(sent.seeds),
        flowRunId,
        nodeId,
        attempt,
      )
    })
  }

  /** What a node run sent; null when it sent nothing or ran before this was recorded. */
  sent(flowRunId: string, nodeId: string, attempt: number): SentInputs | null {
    const row = this.sentOf.get(flowRunId, nodeId, attempt) as
      { inputs_json: string | null; seeds_json: string | null } | undefined
    if (!row || row.inputs_json === null) return null
    return {
      inputs: JSON.parse(row.inputs_json) as Record<string, unknown>,
      seeds: JSON.parse(row.seeds_json ?? '{}') as Record<string, number>,
    }
  }

  /** Every seed a flow run used, by node id then input name (a node's last attempt). */
  seeds(flowRunId: string): Record<string, Record<string, number>> {
    const rows = this.seedsOfRun.all(flowRunId) as { node_id: string; seeds_json: string }[]
    const seeds: Record<string, Record<string, number>> = {}
    for (const row of rows) {
      const byInput = JSON.parse(row.seeds_json) as Record<string, number>
      if (Object.keys(byInput).length > 0) seeds[row.node_id] = byInput
    }
    return seeds
  }

  /** The node run that made this service run, when one on this machine did. */
  byRemoteRunId(runId: string): NodeRunRecord | null {
    const row = this.byRemoteRun.get(runId) as NodeRunRow | undefined
    return row ? toNodeRun(row) : null
  }

  /**
   * Succeeded node runs whose outputs mention this sha256 (newest first, a few): the caller
   * checks which output it is.
   */
  mentioning(sha256: string): NodeRunRecord[] {
    if (!/^[0-9a-f]{64}$/.test(sha256)) return []
    return (this.byOutput.all(`%${sha256}%`) as NodeRunRow[]).map(toNodeRun)
  }

  node(flowRunId: string, nodeId: string, attempt: number): NodeRunRecord | null {
    const row = this.nodeOf.get(flowRunId, nodeId, attempt) as NodeRunRow | undefined
    return row ? toNodeRun(row) : null
  }

  /** Every node run of a flow run, in the order they were queued. */
  nodes(flowRunId: string): NodeRunRecord[] {
    return (this.nodesOf.all(flowRunId) as NodeRunRow[]).map(toNodeRun)
  }

  /** The newest succeeded node run with this cache key in the profile and organization. */
  cached(scope: { profile: string; orgId: string }, cacheKey: string): CachedOutputs | null {
    const row = this.byKey.get(cacheKey, scope.profile, scope.orgId) as
      | Pick<NodeRunRow, 'flow_run_id' | 'node_id' | 'attempt' | 'outputs_json' | 'cost_micro'>
      | undefined
    if (!row || row.outputs_json === null) return null
    return {
      flowRunId: row.flow_run_id,
      nodeId: row.node_id,
      attempt: row.attempt,
      outputs: JSON.parse(row.outputs_json) as Record<string, unknown>,
      costMicro: row.cost_micro,
    }
  }
}

function toFlowRun(row: FlowRunRow): FlowRunRecord {
  return {
    id: row.id,
    profile: row.profile,
    orgId: row.org_id,
    flowId: row.flow_id,
    flowVersion: row.flow_version,
    inputs: JSON.parse(row.inputs_json) as Record<string, unknown>,
    state: row.state,
    startedMs: row.started_ms,
    endedMs: row.ended_ms,
    totals: JSON.parse(row.totals_json) as FlowRunTotals,
    error:
      row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
  }
}

function toNodeRun(row: NodeRunRow): NodeRunRecord {
  return {
    flowRunId: row.flow_run_id,
    nodeId: row.node_id,
    attempt: row.attempt,
    cacheKey: row.cache_key,
    state: row.state,
    outputs:
      row.outputs_json === null ? null : (JSON.parse(row.outputs_json) as Record<string, unknown>),
    costMicro: row.cost_micro,
    remoteRunId: row.remote_run_id,
    batchId: row.batch_id,
    cachedFrom: row.cached_from,
    error:
      row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
    queuedMs: row.queued_ms,
    startedMs: row.started_ms,
    endedMs: row.ended_ms,
  }
}

import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { RunTargetTypeCode } from '../../../src-shared/api'
import { withoutFlush } from '../connection'

/**
 * prepared: committed, not sent yet. sending: the request may have left; after a crash in this
 * state the outcome is unknown and the run must be looked up (by idempotency key) before
 * anything is sent again. dispatched: the service answered with its run. The rest are final;
 * abandoned means it was never sent and never will be.
 */
export type IntentState =
  'prepared' | 'sending' | 'dispatched' | 'succeeded' | 'failed' | 'canceled' | 'abandoned'

export type FinalIntentState = 'succeeded' | 'failed' | 'canceled' | 'abandoned'

export interface NewIntent {
  id?: string
  profile: string
  orgId: string
  flowRunId?: string | null
  nodeId?: string | null
  targetTypeCode: RunTargetTypeCode
  targetRef: string
  inputsHash: string
  /** Defaults to a fresh UUID. */
  idempotencyKey?: string
  /** The dispatch body, stored so a resend after a crash is byte-for-byte the same request. */
  request: unknown
}

export interface Intent {
  id: string
  profile: string
  orgId: string
  flowRunId: string | null
  nodeId: string | null
  targetTypeCode: RunTargetTypeCode
  targetRef: string
  inputsHash: string
  idempotencyKey: string
  request: unknown
  remoteRunId: string | null
  state: IntentState
  attempts: number
  createdMs: number
  updatedMs: number
  lastError: string | null
}

interface Row {
  id: string
  profile: string
  org_id: string
  flow_run_id: string | null
  node_id: string | null
  target_type_code: RunTargetTypeCode
  target_ref: string
  inputs_hash: string
  idempotency_key: string
  request_json: string
  remote_run_id: string | null
  state: IntentState
  attempts: number
  created_ms: number
  updated_ms: number
  last_error: string | null
}

const COLUMNS = `id, profile, org_id, flow_run_id, node_id, target_type_code, target_ref,
  inputs_hash, idempotency_key, request_json, remote_run_id, state, attempts, created_ms,
  updated_ms, last_error`

const OPEN = `('prepared', 'sending', 'dispatched')`

/**
 * Run intents: the ledger side of "paid work is never done twice". Every transition is a
 * conditional UPDATE from the states it may come from, so a stale caller cannot move a finished
 * intent back; each returns whether it happened.
 */
export class IntentsRepository {
  private readonly insert: Database.Statement
  private readonly byId: Database.Statement
  private readonly byKey: Database.Statement
  private readonly ofNode: Database.Statement
  private readonly done: Database.Statement
  private readonly openOf: Database.Statement
  private readonly batchesOf: Database.Statement
  private readonly sending: Database.Statement
  private readonly dispatched: Database.Statement
  private readonly finished: Database.Statement
  private readonly errored: Database.Statement

  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {
    this.insert = db.prepare(`
      INSERT INTO intents (id, profile, org_id, flow_run_id, node_id, target_type_code, target_ref,
        inputs_hash, idempotency_key, request_json, state, created_ms, updated_ms)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'prepared', ?, ?)
      RETURNING ${COLUMNS}`)
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM intents WHERE id = ?`)
    this.byKey = db.prepare(`SELECT ${COLUMNS} FROM intents WHERE idempotency_key = ?`)
    this.ofNode = db.prepare(`
      SELECT ${COLUMNS} FROM intents WHERE flow_run_id = ? AND node_id = ?
      ORDER BY created_ms DESC, id DESC`)
    this.done = db.prepare(`
      SELECT ${COLUMNS} FROM intents
      WHERE target_ref = ? AND inputs_hash = ? AND state = 'succeeded' AND profile = ? AND org_id = ?
      ORDER BY updated_ms DESC LIMIT 1`)
    this.batchesOf = db.prepare(`
      SELECT ${COLUMNS} FROM intents
      WHERE profile = ? AND org_id = ? AND target_ref = ? AND state IN ('succeeded', 'failed')
        AND remote_run_id IS NOT NULL AND json_type(request_json, '$.items') = 'array'
      ORDER BY created_ms DESC, id DESC LIMIT ?`)
    this.openOf = db.prepare(`
      SELECT ${COLUMNS} FROM intents WHERE profile = ? AND org_id = ? AND state IN ${OPEN}
      ORDER BY created_ms, id`)
    this.sending = db.prepare(`
      UPDATE intents SET state = 'sending', attempts = attempts + 1, updated_ms = ?
      WHERE id = ? AND state IN ('prepared', 'sending')`)
    this.dispatched = db.prepare(`
      UPDATE intents SET state = 'dispatched', remote_run_id = ?, updated_ms = ?, last_error = NULL
      WHERE id = ? AND state IN ${OPEN}`)
    this.finished = db.prepare(`
      UPDATE intents SET state = ?, remote_run_id = coalesce(?, remote_run_id), last_error = ?,
        updated_ms = ?
      WHERE id = ? AND state IN ${OPEN}`)
    this.errored = db.prepare(`UPDATE intents SET last_error = ?, updated_ms = ? WHERE id = ?`)
  }

  /** Commits the intent; this must happen before the request is sent. */
  record(intent: NewIntent): Intent {
    const now = this.clock()
    const row = this.insert.get(
      intent.id ?? randomUUID(),
      intent.profile,
      intent.orgId,
      intent.flowRunId ?? null,
      intent.nodeId ?? null,
      intent.targetTypeCode,
      intent.targetRef,
      intent.inputsHash,
      intent.idempotencyKey ?? randomUUID(),
      JSON.stringify(intent.request),
      now,
      now,
    ) as Row
    return toIntent(row)
  }

  get(id: string): Intent | null {
    const row = this.byId.get(id) as Row | undefined
    return row ? toIntent(row) : null
  }

  withIdempotencyKey(key: string): Intent | null {
    const row = this.byKey.get(key) as Row | undefined
    return row ? toIntent(row) : null
  }

  /** A node's intents in a flow run, newest first. */
  forNode(flowRunId: string, nodeId: string): Intent[] {
    return (this.ofNode.all(flowRunId, nodeId) as Row[]).map(toIntent)
  }

  /** The newest succeeded run of this target with these inputs: work already paid for. */
  succeeded(scope: { profile: string; orgId: string }, targetRef: string, inputsHash: string) {
    const row = this.done.get(targetRef, inputsHash, scope.profile, scope.orgId) as Row | undefined
    return row ? toIntent(row) : null
  }

  /**
   * The latest batches sent for a target that ended (succeeded, or failed with some items
   * done), newest first: their succeeded items are paid work a new fan-out can take back.
   */
  endedBatches(scope: { profile: string; orgId: string }, targetRef: string, limit = 5): Intent[] {
    return (this.batchesOf.all(scope.profile, scope.orgId, targetRef, limit) as Row[]).map(toIntent)
  }

  /** Intents not final yet, oldest first: what to re-attach to (or look up) after a restart. */
  open(scope: { profile: string; orgId: string }): Intent[] {
    return (this.openOf.all(scope.profile, scope.orgId) as Row[]).map(toIntent)
  }

  /** About to send (or resend with the same key): from now on the outcome may be unknown. */
  markSending(id: string): boolean {
    return this.sending.run(this.clock(), id).changes > 0
  }

  /*
   * The writes below are not flushed to disk on their own (see withoutFlush): lost to a power
   * cut, an intent is left `sending` or `dispatched`, and the next resume looks its run up by
   * key or re-attaches to it, so nothing is paid twice. Only `record` and `markSending` must
   * reach the disk before the request leaves.
   */

  markDispatched(id: string, remoteRunId: string): boolean {
    return withoutFlush(
      this.db,
      () => this.dispatched.run(remoteRunId, this.clock(), id).changes > 0,
    )
  }

  finish(
    id: string,
    state: FinalIntentState,
    details: { remoteRunId?: string; error?: string } = {},
  ): boolean {
    const { remoteRunId = null, error = null } = details
    return withoutFlush(
      this.db,
      () => this.finished.run(state, remoteRunId, error, this.clock(), id).changes > 0,
    )
  }

  /** Notes why the last attempt went wrong, without changing the state. */
  noteError(id: string, error: string): boolean {
    return withoutFlush(this.db, () => this.errored.run(error, this.clock(), id).changes > 0)
  }
}

function toIntent(row: Row): Intent {
  return {
    id: row.id,
    profile: row.profile,
    orgId: row.org_id,
    flowRunId: row.flow_run_id,
    nodeId: row.node_id,
    targetTypeCode: row.target_type_code,
    targetRef: row.target_ref,
    inputsHash: row.inputs_hash,
    idempotencyKey: row.idempotency_key,
    request: JSON.parse(row.request_json) as unknown,
    remoteRunId: row.remote_run_id,
    state: row.state,
    attempts: row.attempts,
    createdMs: row.created_ms,
    updatedMs: row.updated_ms,
    lastError: row.last_error,
  }
}

import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { pageLimit } from '../values'
import { Conditions, StatementCache, type Page } from './statements'

/**
 * pending: not yet accepted by the service. sent: accepted. rejected: the service refused it
 * for good (a 4xx that retrying cannot fix); kept, with the reason, for the user to see.
 */
export type OutboxState = 'pending' | 'rejected' | 'sent'

export interface OutboxScope {
  profile: string
  orgId: string
}

export interface OutboxWrite extends OutboxScope {
  /** What the write is, e.g. `evaluation.feedback`; the replayer switches on it. */
  kind: string
  payload: unknown
  subjectId?: string | null
  /** Defaults to a fresh UUID; sent as Idempotency-Key on every replay. */
  idempotencyKey?: string
  /** The local id (`local:<uuid>`) a create gives its record until the service gives one. */
  placeholderId?: string | null
}

/** What the service answered for a sent write, kept for the writes that come after it. */
export interface OutboxResult {
  /** The id the service gave the record a create made. */
  id?: string | null
  /** The record's updated_at after the write, as the service wrote it. */
  updatedAt?: string | null
}

export interface OutboxEntry<P = unknown> extends OutboxScope {
  seq: number
  kind: string
  subjectId: string | null
  payload: P
  idempotencyKey: string
  state: OutboxState
  attempts: number
  lastError: string | null
  /** The service's error code (or the client's, e.g. NETWORK_ERROR) of the last failure. */
  lastErrorCode: string | null
  createdMs: number
  updatedMs: number
  sentMs: number | null
  placeholderId: string | null
  resultId: string | null
  resultUpdatedAt: string | null
}

export interface OutboxListQuery {
  profile?: string
  orgId?: string
  state?: OutboxState
  limit?: number
  after?: string | null
}

interface Row {
  seq: number
  profile: string
  org_id: string
  kind: string
  subject_id: string | null
  payload: string
  idempotency_key: string
  state: OutboxState
  attempts: number
  last_error: string | null
  last_error_code: string | null
  created_ms: number
  updated_ms: number
  sent_ms: number | null
  placeholder_id: string | null
  result_id: string | null
  result_updated_at: string | null
}

const COLUMNS = `seq, profile, org_id, kind, subject_id, payload, idempotency_key, state, attempts,
  last_error, last_error_code, created_ms, updated_ms, sent_ms, placeholder_id, result_id,
  result_updated_at`

/**
 * The durable queue of writes made offline, replayed oldest first. Entries change state only
 * from pending, so a late answer to a replay cannot undo a rejection or a send already recorded.
 */
export class OutboxRepository {
  private readonly insert: Database.Statement
  private readonly bySeq: Database.Statement
  private readonly pending: Database.Statement
  private readonly sent: Database.Statement
  private readonly rejected: Database.Statement
  private readonly failed: Database.Statement
  private readonly again: Database.Statement
  private readonly ofSubject: Database.Statement
  private readonly purge: Database.Statement
  private readonly drop: Database.Statement
  private readonly byPlaceholder: Database.Statement
  private readonly resubject: Database.Statement
  private readonly pendingCount: Database.Statement
  private readonly scopes: Database.Statement
  private readonly lists: StatementCache
  private readonly settle: Database.Transaction<(seq: number, result: OutboxResult) => boolean>

  constructor(
    db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {
    this.lists = new StatementCache(db)
    this.insert = db.prepare(`
      INSERT INTO outbox (profile, org_id, kind, subject_id, payload, idempotency_key, created_ms,
        updated_ms, placeholder_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      RETURNING ${COLUMNS}`)
    this.bySeq = db.prepare(`SELECT ${COLUMNS} FROM outbox WHERE seq = ?`)
    this.pending = db.prepare(`
      SELECT ${COLUMNS} FROM outbox
      WHERE state = 'pending' AND profile = ? AND org_id = ? ORDER BY seq LIMIT ?`)
    this.sent = db.prepare(`
      UPDATE outbox SET state = 'sent', attempts = attempts + 1, sent_ms = ?, updated_ms = ?,
        last_error = NULL, last_error_code = NULL, result_id = ?, result_updated_at = ?
      WHERE seq = ? AND state = 'pending'`)
    this.rejected = db.prepare(`
      UPDATE outbox SET state = 'rejected', attempts = attempts + ?, last_error = ?,
        last_error_code = ?, updated_ms = ?
      WHERE seq = ? AND state = 'pending'`)
    this.failed = db.prepare(`
      UPDATE outbox SET attempts = attempts + 1, last_error = ?, last_error_code = ?,
        updated_ms = ?
      WHERE seq = ? AND state = 'pending'`)
    this.again = db.prepare(`
      UPDATE outbox SET state = 'pending', updated_ms = ? WHERE seq = ? AND state = 'rejected'`)
    this.ofSubject = db.prepare(
      `SELECT ${COLUMNS} FROM outbox WHERE subject_id = ? AND state != 'sent' ORDER BY seq`,
    )
    this.purge = db.prepare(`DELETE FROM outbox WHERE state = 'sent' AND sent_ms < ?`)
    this.drop = db.prepare(`DELETE FROM outbox WHERE seq = ? AND state = 'rejected'`)
    this.byPlaceholder = db.prepare(`SELECT ${COLUMNS} FROM outbox WHERE placeholder_id = ?`)
    this.resubject = db.prepare(
      `UPDATE outbox SET subject_id = ? WHERE subject_id = ? AND state != 'sent'`,
    )
    this.pendingCount = db
      .prepare(`SELECT count(*) FROM outbox WHERE state = 'pending' AND profile = ? AND org_id = ?`)
      .pluck()
    this.scopes = db
      .prepare(
        `SELECT DISTINCT profile, org_id FROM outbox WHERE state = 'pending' ORDER BY profile, org_id`,
      )
      .raw()
    this.settle = db.transaction((seq: number, result: OutboxResult): boolean => {
      const now = this.clock()
      const id = result.id ?? null
      if (this.sent.run(now, now, id, result.updatedAt ?? null, seq).changes === 0) return false
      const placeholder = id === null ? null : this.get(seq)?.placeholderId
      // From now on the writes about the created record are shown on the record itself.
      if (id !== null && placeholder) this.resubject.run(id, placeholder)
      return true
    })
  }

  enqueue(write: OutboxWrite): OutboxEntry {
    const now = this.clock()
    const row = this.insert.get(
      write.profile,
      write.orgId,
      write.kind,
      write.subjectId ?? null,
      JSON.stringify(write.payload),
      write.idempotencyKey ?? randomUUID(),
      now,
      now,
      write.placeholderId ?? null,
    ) as Row
    return toEntry(row)
  }

  get(seq: number): OutboxEntry | null {
    const row = this.bySeq.get(seq) as Row | undefined
    return row ? toEntry(row) : null
  }

  /** The oldest pending entries of one profile and organization, in the order they were made. */
  peekPending(scope: OutboxScope, limit = 1): OutboxEntry[] {
    return (this.pending.all(scope.profile, scope.orgId, limit) as Row[]).map(toEntry)
  }

  /**
   * The service accepted it. False when it was not pending (already sent or rejected). The
   * answer is kept with it; when the entry created a record under a placeholder, the unsent
   * entries about that placeholder move to the service's id in the same transaction.
   */
  markSent(seq: number, result: OutboxResult = {}): boolean {
    return this.settle.immediate(seq, result)
  }

  /**
   * The service refused it for good. `sent` false: refused here, without a request (it depends
   * on a write the service refused), so it does not count as an attempt.
   */
  markRejected(
    seq: number,
    error: string,
    options: { code?: string | null; sent?: boolean } = {},
  ): boolean {
    const attempt = options.sent === false ? 0 : 1
    return this.rejected.run(attempt, error, options.code ?? null, this.clock(), seq).changes > 0
  }

  /** An attempt failed in a way worth retrying (offline, 5xx): it stays pending, in its place. */
  noteFailure(seq: number, error: string, code: string | null = null): boolean {
    return this.failed.run(error, code, this.clock(), seq).changes > 0
  }

  /**
   * Forgets a rejected entry, once the user has seen why it was refused. Pending entries are
   * never discarded (they have not been refused, only not yet sent), nor sent ones (history).
   */
  discard(seq: number): boolean {
    return this.drop.run(seq).changes > 0
  }

  /** The entry that created the record a placeholder stands for, whatever its state. */
  withPlaceholder(placeholderId: string): OutboxEntry | null {
    const row = this.byPlaceholder.get(placeholderId) as Row | undefined
    return row ? toEntry(row) : null
  }

  countPending(scope: OutboxScope): number {
    return this.pendingCount.get(scope.profile, scope.orgId) as number
  }

  /** Every profile and organization with writes waiting, so each can be replayed. */
  pendingScopes(): OutboxScope[] {
    return (this.scopes.all() as [string, string][]).map(([profile, orgId]) => ({
      profile,
      orgId,
    }))
  }

  /** The user asked to send a rejected write again (after fixing what was wrong). */
  retry(seq: number): boolean {
    return this.again.run(this.clock(), seq).changes > 0
  }

  /** Unsent writes about one record, to show them as pending where the record is shown. */
  forSubject(subjectId: string): OutboxEntry[] {
    return (this.ofSubject.all(subjectId) as Row[]).map(toEntry)
  }

  /** Forgets sent entries older than `beforeMs`; pending and rejected ones are never purged. */
  purgeSent(beforeMs: number): number {
    return this.purge.run(beforeMs).changes
  }

  /** In seq order, keyset-paged. */
  list(query: OutboxListQuery = {}): Page<OutboxEntry> {
    const limit = pageLimit(query.limit)
    const where = new Conditions()
    if (query.profile !== undefined) where.add('profile = ?', query.profile)
    if (query.orgId !== undefined) where.add('org_id = ?', query.orgId)
    if (query.state !== undefined) where.add('state = ?', query.state)
    if (query.after) where.add('seq > ?', afterSeq(query.after))
    const filter = where.clauses.length > 0 ? `WHERE ${where.sql}` : ''
    const statement = this.lists.get(`SELECT ${COLUMNS} FROM outbox ${filter} ORDER BY seq LIMIT ?`)
    const rows = statement.all(...where.values, limit + 1) as Row[]
    const more = rows.length > limit
    const items = rows.slice(0, limit).map(toEntry)
    const last = items.at(-1)
    return { items, next: more && last ? String(last.seq) : null }
  }
}

function afterSeq(cursor: string): number {
  const seq = Number(cursor)
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw new TypeError(`"${cursor}" is not a cursor of this list.`)
  return seq
}

function toEntry(row: Row): OutboxEntry {
  return {
    seq: row.seq,
    profile: row.profile,
    orgId: row.org_id,
    kind: row.kind,
    subjectId: row.subject_id,
    payload: JSON.parse(row.payload) as unknown,
    idempotencyKey: row.idempotency_key,
    state: row.state,
    attempts: row.attempts,
    lastError: row.last_error,
    lastErrorCode: row.last_error_code,
    createdMs: row.created_ms,
    updatedMs: row.updated_ms,
    sentMs: row.sent_ms,
    placeholderId: row.placeholder_id,
    resultId: row.result_id,
    resultUpdatedAt: row.result_updated_at,
  }
}

import type Database from 'better-sqlite3'
import type { Evaluation, EvaluationStatusCode } from '../../../src-shared/api'
import { decimalMicro, flag, idList, timeMsOrNull } from '../values'
import { RowWriter } from './rows'
import { newestFirstPage, StatementCache, type NewestFirstQuery, type Page } from './statements'

export interface EvaluationListQuery extends NewestFirstQuery {
  status?: EvaluationStatusCode
  /** The overall verdict. */
  passed?: boolean
  runId?: string
}

export interface EvaluationScope {
  /** The organization synced, for records whose own org_id is null. */
  orgId: string
}

/** Free text of an evaluation besides its prompt: what it was asked, what it found, what we said. */
function evaluationNotes(e: Evaluation): string | null {
  const parts: (string | null | undefined)[] = [
    e.task_description,
    e.evaluation_instructions,
    e.feedback_reason,
    e.override_reason,
    ...(e.top_issues ?? []),
    ...(e.top_strengths ?? []),
    ...(e.gate_failures ?? []).map((g) => g.message),
  ]
  const text = parts.filter((p): p is string => typeof p === 'string' && p !== '').join('\n')
  return text === '' ? null : text
}

/**
 * Evaluations with their judges and issues. Every field of an evaluation is nullable in the
 * contract: a record without an id cannot be addressed or deleted later, so it is skipped (the
 * count written says so), and a missing created_at falls back to the next time it has.
 * Judges and issues are rows of their own for filters and search, replaced whenever their
 * evaluation is written; the evaluation's json stays the one truth `get` returns.
 */
export class EvaluationsRepository {
  private readonly rows: RowWriter
  private readonly judges: RowWriter
  private readonly issues: RowWriter
  private readonly deleteJudges: Database.Statement
  private readonly deleteIssues: Database.Statement
  private readonly byId: Database.Statement
  private readonly deleteByIds: Database.Statement
  private readonly countByOrg: Database.Statement
  private readonly lists: StatementCache
  private readonly writePage: Database.Transaction<
    (records: readonly Evaluation[], orgId: string | undefined) => number
  >

  constructor(db: Database.Database) {
    this.rows = new RowWriter(db, {
      table: 'evaluations',
      key: ['id'],
      columns: [
        'org_id',
        'run_id',
        'model_id',
        'status_code',
        'overall_passed',
        'weighted_pass_rate',
        'feedback_is_positive',
        'cost',
        'cost_micro',
        'created_ms',
        'updated_ms',
        'completed_ms',
        'generation_prompt',
        'notes',
        'json',
      ],
      fts: ['generation_prompt', 'notes'],
    })
    // Written only after their evaluation's old ones were deleted, so never a conflict.
    this.judges = new RowWriter(db, {
      table: 'evaluation_judges',
      key: ['evaluation_id', 'position'],
      columns: ['id', 'name', 'category', 'passed', 'confidence', 'weight', 'reasoning'],
      fts: ['name', 'reasoning'],
      immutable: true,
    })
    this.issues = new RowWriter(db, {
      table: 'evaluation_issues',
      key: ['evaluation_id', 'judge_position', 'position'],
      columns: ['id', 'judge_id', 'code', 'severity', 'description'],
      fts: ['code', 'description'],
      immutable: true,
    })
    this.deleteJudges = db.prepare('DELETE FROM evaluation_judges WHERE evaluation_id = ?')
    this.deleteIssues = db.prepare('DELETE FROM evaluation_issues WHERE evaluation_id = ?')
    this.byId = db.prepare('SELECT json FROM evaluations WHERE id = ?').pluck()
    this.deleteByIds = db.prepare(
      'DELETE FROM evaluations WHERE id IN (SELECT value FROM json_each(?))',
    )
    this.countByOrg = db.prepare('SELECT count(*) FROM evaluations WHERE org_id = ?').pluck()
    this.lists = new StatementCache(db)
    this.writePage = db.transaction((records: readonly Evaluation[], orgId: string | undefined) => {
      let written = 0
      for (const e of records) if (e.id && this.write(e, e.id, orgId)) written++
      return written
    })
  }

  /**
   * Writes a page in one transaction; judges and issues of each evaluation written are
   * replaced by the ones in the record. `scope.orgId` stands in for a null org_id. Returns
   * how many evaluations were written.
   */
  upsertPage(records: readonly Evaluation[], scope?: EvaluationScope): number {
    return this.writePage.immediate(records, scope?.orgId)
  }

  private write(e: Evaluation, id: string, scopeOrg: string | undefined): boolean {
    const orgId = e.org_id ?? scopeOrg
    if (!orgId) throw new Error(`Evaluation ${id} has no org_id; pass the organization synced.`)
    const updated = e.updated_at ?? e.completed_at ?? e.submitted_at ?? e.created_at
    const created = e.created_at ?? e.submitted_at ?? updated
    const updatedMs = timeMsOrNull(updated, 'evaluation.updated_at') ?? 0
    const result = this.rows.write([
      id,
      orgId,
      e.run_id,
      e.model_id,
      e.status_code,
      flag(e.overall_passed),
      e.weighted_pass_rate,
      flag(e.feedback_is_positive),
      e.cost,
      decimalMicro(e.cost),
      timeMsOrNull(created, 'evaluation.created_at') ?? updatedMs,
      updatedMs,
      timeMsOrNull(e.completed_at, 'evaluation.completed_at'),
      e.generation_prompt,
      evaluationNotes(e),
      JSON.stringify(e),
    ])
    if (result === 'stale') return false
    // A new evaluation has nothing to replace; skipping the deletes keeps the common case
    // free of statements that make FTS5 flush (see rows.ts).
    if (result === 'updated') {
      this.deleteIssues.run(id)
      this.deleteJudges.run(id)
    }
    ;(e.judges ?? []).forEach((judge, judgePosition) => {
      this.judges.write([
        id,
        judgePosition,
        judge.id,
        judge.name,
        judge.category,
        flag(judge.passed),
        judge.confidence,
        judge.weight,
        judge.reasoning,
      ])
      ;(judge.issues ?? []).forEach((issue, position) => {
        this.issues.write([
          id,
          judgePosition,
          position,
          issue.id,
          issue.judge_id ?? judge.id,
          issue.code,
          issue.severity,
          issue.description,
        ])
      })
    })
    return true
  }

  get(id: string): Evaluation | null {
    const json = this.byId.get(id) as string | undefined
    return json === undefined ? null : (JSON.parse(json) as Evaluation)
  }

  /** Deletes evaluations (tombstones); their judges and issues go by cascade. */
  remove(ids: readonly string[]): number {
    return ids.length === 0 ? 0 : this.deleteByIds.run(idList(ids)).changes
  }

  count(orgId: string): number {
    return this.countByOrg.get(orgId) as number
  }

  /** Newest first, keyset-paged on (created, seq). */
  list(query: EvaluationListQuery): Page<Evaluation> {
    return newestFirstPage<Evaluation>(this.lists, 'evaluations', query, (where) => {
      if (query.status !== undefined) where.add('status_code = ?', query.status)
      if (query.passed !== undefined) where.add('overall_passed = ?', flag(query.passed))
      if (query.runId !== undefined) where.add('run_id = ?', query.runId)
    })
  }
}

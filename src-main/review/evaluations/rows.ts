import type Database from 'better-sqlite3'
import type { EvaluationStatusCode } from '../../../src-shared/api'
import type {
  EvaluationListQuery,
  EvaluationRow,
  PendingFeedback,
} from '../../../src-shared/domain/evaluations'
import { Conditions, type Mirror } from '../../db'
import { EvaluationReviewError } from './errors'

/** The columns a row needs: indexed ones, plus a few fields read out of the record's json. */
const ROW_COLUMNS = `created_ms, seq, id, status_code, overall_passed, weighted_pass_rate,
  feedback_is_positive, generation_prompt, run_id,
  json_extract(json, '$.attempt_number') AS attempt,
  json_extract(json, '$.superseded_at') AS superseded_at,
  json_extract(json, '$.task_description') AS task_description,
  json_extract(json, '$.job_class_code') AS job_class,
  json_extract(json, '$.generated_image_url') AS image_url,
  json_extract(json, '$.links.asset') AS asset_link`

interface RowColumns {
  created_ms: number
  seq: number
  id: string
  status_code: string | null
  overall_passed: number | null
  weighted_pass_rate: number | null
  feedback_is_positive: number | null
  generation_prompt: string | null
  run_id: string | null
  attempt: number | null
  superseded_at: string | null
  task_description: string | null
  job_class: string | null
  image_url: string | null
  asset_link: string | null
}

export type PendingOf = (id: string) => PendingFeedback | null

const ASSET_LINK = /^\/v1\/assets\/([A-Za-z0-9._~-]+)$/

/** The asset an evaluation judges: the contract names it only in `links.asset`. */
export function assetIdOfLink(link: unknown): string | null {
  return typeof link === 'string' ? (ASSET_LINK.exec(link)?.[1] ?? null) : null
}

/** The last part of a URL's path, for a picture known by its address only. */
export function fileNameOfUrl(url: string | null): string | null {
  if (!url) return null
  try {
    const name = decodeURIComponent(new URL(url).pathname.split('/').at(-1) ?? '')
    return name === '' ? null : name
  } catch {
    return null
  }
}

/** A run's output is named by its run: its URL's file name is only a hash. */
export function runOutputName(runId: string): string {
  return `Output of run ${runId.slice(0, 8)}`
}

const flagOf = <T>(value: number | null, yes: T, no: T): T | null =>
  value === null ? null : value === 1 ? yes : no

/**
 * The list's reads of the mirror. Each is one small statement: a page along an index (the
 * mirror indexes evaluations by created time, status and verdict), or rows by id.
 */
export class EvaluationRows {
  private readonly statements = new Map<string, Database.Statement>()
  private readonly byIds: Database.Statement
  private readonly assetName: Database.Statement

  constructor(private readonly mirror: Mirror) {
    this.byIds = mirror.db.prepare(
      `SELECT ${ROW_COLUMNS} FROM evaluations WHERE id IN (SELECT value FROM json_each(?))`,
    )
    this.assetName = mirror.db
      .prepare(`SELECT json_extract(json, '$.name') FROM assets WHERE id = ?`)
      .pluck()
  }

  /**
   * Newest first, keyset-paged on (created, seq). Filters whose statement text differs get a
   * statement each, prepared once: a catch-all `(? IS NULL OR …)` would give every combination
   * the same, usually wrong, plan.
   */
  page(
    orgId: string,
    query: EvaluationListQuery,
    after: [number, number] | null,
    pendingOf: PendingOf,
  ): { items: EvaluationRow[]; next: [number, number] | null } {
    const where = new Conditions().add('org_id = ?', orgId)
    if (query.status !== undefined) where.add('status_code = ?', query.status)
    if (query.verdict !== undefined) {
      where.add('overall_passed = ?', query.verdict === 'passed' ? 1 : 0)
    }
    addFeedback(where, query.feedback)
    if (query.scoreMin !== undefined) where.add('weighted_pass_rate >= ?', query.scoreMin)
    if (query.scoreMax !== undefined) where.add('weighted_pass_rate <= ?', query.scoreMax)
    if (after) where.add('(created_ms, seq) < (?, ?)', ...after)
    const sql = `SELECT ${ROW_COLUMNS} FROM evaluations WHERE ${where.sql}
      ORDER BY created_ms DESC, seq DESC LIMIT ?`
    let statement = this.statements.get(sql)
    if (!statement) {
      statement = this.mirror.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    const rows = statement.all(...where.values, query.limit + 1) as RowColumns[]
    const more = rows.length > query.limit
    const kept = more ? rows.slice(0, query.limit) : rows
    const last = kept.at(-1)
    return {
      items: kept.map((row) => this.present(row, pendingOf)),
      next: more && last ? [last.created_ms, last.seq] : null,
    }
  }

  /** Rows by id, in the order asked, leaving out ids the mirror does not hold. */
  byId(ids: readonly string[], pendingOf: PendingOf): Map<string, EvaluationRow> {
    const found = new Map<string, EvaluationRow>()
    if (ids.length === 0) return found
    for (const row of this.byIds.all(JSON.stringify(ids)) as RowColumns[]) {
      found.set(row.id, this.present(row, pendingOf))
    }
    return found
  }

  private present(row: RowColumns, pendingOf: PendingOf): EvaluationRow {
    const assetId = assetIdOfLink(row.asset_link)
    const assetName = assetId ? (this.assetName.get(assetId) as string | null | undefined) : null
    const title =
      nonEmpty(row.generation_prompt) ??
      nonEmpty(row.task_description) ??
      nonEmpty(assetName) ??
      (row.run_id ? runOutputName(row.run_id) : fileNameOfUrl(row.image_url)) ??
      `Evaluation ${row.id.slice(0, 8)}`
    return {
      id: row.id,
      createdAt: new Date(row.created_ms).toISOString(),
      title,
      status: row.status_code as EvaluationStatusCode | null,
      verdict: flagOf(row.overall_passed, 'passed', 'failed'),
      score: row.weighted_pass_rate,
      rating: flagOf(row.feedback_is_positive, 'up', 'down'),
      pending: pendingOf(row.id),
      attempt: row.attempt,
      superseded: row.superseded_at !== null,
      runId: row.run_id,
      jobClass: row.job_class === 'quick' || row.job_class === 'standard' ? row.job_class : null,
    }
  }
}

function addFeedback(where: Conditions, feedback: EvaluationListQuery['feedback']): void {
  switch (feedback) {
    case 'given':
      where.add('feedback_is_positive IS NOT NULL')
      break
    case 'none':
      where.add('feedback_is_positive IS NULL')
      break
    case 'up':
      where.add('feedback_is_positive = 1')
      break
    case 'down':
      where.add('feedback_is_positive = 0')
      break
    case undefined:
      break
  }
}

function nonEmpty(text: string | null | undefined): string | null {
  const trimmed = text?.replace(/\s+/g, ' ').trim()
  return trimmed ? trimmed : null
}

/** What the list's cursors hold: where a list page ended, or the search's own cursor. */
export type ListCursor =
  { mode: 'list'; after: [number, number] } | { mode: 'ranked'; next: string }

export function encodeListCursor(cursor: ListCursor): string {
  const value = cursor.mode === 'list' ? ['l', ...cursor.after] : ['r', cursor.next]
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

export function decodeListCursor(text: string): ListCursor {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    parsed = null
  }
  if (Array.isArray(parsed)) {
    const [mode, a, b] = parsed as unknown[]
    if (mode === 'l' && Number.isSafeInteger(a) && Number.isSafeInteger(b)) {
      return { mode: 'list', after: [a as number, b as number] }
    }
    if (mode === 'r' && typeof a === 'string' && a !== '') return { mode: 'ranked', next: a }
  }
  throw new EvaluationReviewError(
    'EVALUATION_INVALID_CURSOR',
    'The cursor does not belong to this list; leave it out to start from the first page.',
  )
}

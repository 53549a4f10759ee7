import type Database from 'better-sqlite3'
import type { Evaluation, EvaluationJudge } from '../../../src-shared/api'
import type {
  EvaluationAttempt,
  EvaluationDetail,
  EvaluationImage,
  EvaluationIssueView,
  EvaluationJudgeView,
  EvaluationRow,
} from '../../../src-shared/domain/evaluations'
import type { Mirror } from '../../db'
import { outputMedia } from '../../sync'
import { assetIdOfLink, fileNameOfUrl, runOutputName } from './rows'

/** A chain longer than this is a loop in broken data, not re-evaluations. */
const MAX_CHAIN = 50
/**
 * Newer evaluations looked through for a re-evaluation whose parent is this one, when neither
 * the record's links nor its run say which it is: the mirror has no index on the parent.
 */
const CHILD_SCAN_ROWS = 2_000

const ATTEMPT_COLUMNS = `id, created_ms, status_code, overall_passed, weighted_pass_rate,
  json_extract(json, '$.attempt_number') AS attempt,
  json_extract(json, '$.superseded_at') AS superseded_at,
  json_extract(json, '$.parent_evaluation_id') AS parent_id,
  json_extract(json, '$.links.superseded_by') AS superseded_by`

interface AttemptRow {
  id: string
  created_ms: number
  status_code: string | null
  overall_passed: number | null
  weighted_pass_rate: number | null
  attempt: number | null
  superseded_at: string | null
  parent_id: string | null
  superseded_by: string | null
}

const EVALUATION_LINK = /^\/v1\/evaluations\/([A-Za-z0-9._~-]+)$/

/** Reads what one evaluation's page needs besides its own record: its image and its attempts. */
export class EvaluationPages {
  private readonly attemptById: Database.Statement
  private readonly childByRun: Database.Statement
  private readonly childByScan: Database.Statement

  constructor(
    private readonly mirror: Mirror,
    private readonly orgId: string,
  ) {
    const db = mirror.db
    this.attemptById = db.prepare(`SELECT ${ATTEMPT_COLUMNS} FROM evaluations WHERE id = ?`)
    this.childByRun = db.prepare(
      `SELECT ${ATTEMPT_COLUMNS} FROM evaluations
       WHERE run_id = ? AND json_extract(json, '$.parent_evaluation_id') = ? LIMIT 1`,
    )
    this.childByScan = db.prepare(
      `SELECT ${ATTEMPT_COLUMNS} FROM (
         SELECT id, created_ms, status_code, overall_passed, weighted_pass_rate, json
         FROM evaluations WHERE org_id = ? AND created_ms >= ? ORDER BY created_ms LIMIT ?
       ) WHERE json_extract(json, '$.parent_evaluation_id') = ? LIMIT 1`,
    )
  }

  detail(record: Evaluation, row: EvaluationRow): Omit<EvaluationDetail, 'pending'> {
    const judges = (record.judges ?? []).map(judgeView)
    const attempts = this.attempts(record)
    const newest = attempts.at(-1)
    const finished = record.status_code === 'completed' || record.status_code === 'failed'
    return {
      id: row.id,
      row,
      completedAt: record.completed_at,
      failureCode: record.failure_code,
      prompt: record.generation_prompt,
      taskType: record.task_type,
      taskDescription: record.task_description,
      instructions: record.evaluation_instructions,
      cost: record.cost,
      durationMs: record.eval_duration_ms,
      modelId: record.model_id,
      image: this.image(record),
      judges,
      topIssues: record.top_issues ?? [],
      topStrengths: record.top_strengths ?? [],
      gateFailures: (record.gate_failures ?? []).map((g) => ({
        gate: g.gate_code,
        message: g.message,
      })),
      action: record.action
        ? {
            code: record.action.code,
            name: record.action.display_name,
            description: record.action.description,
          }
        : null,
      attempts,
      feedback: {
        rating:
          record.feedback_is_positive === null ? null : record.feedback_is_positive ? 'up' : 'down',
        reason: record.feedback_reason,
      },
      canReevaluate: finished && record.superseded_at === null && newest?.id === row.id,
    }
  }

  /**
   * The picture judged. An asset or a run's output is known by its sha256, so the media store
   * can show it offline and check what it fetches; a bare URL is only named.
   */
  image(record: Evaluation): EvaluationImage {
    const url = record.generated_image_url
    const assetId = assetIdOfLink(record.links?.asset)
    if (assetId) {
      const asset = this.mirror.assets.get(assetId)
      return {
        from: 'asset',
        sha256: asset?.sha256 ?? null,
        url: asset?.url ?? null,
        assetId,
        label: asset?.name ?? null,
      }
    }
    const run = record.run_id ? this.mirror.runs.get(record.run_id) : null
    if (run) {
      const files = outputMedia(run.output).filter(
        (file) => file.sha256 !== null && file.contentType?.startsWith('image/') === true,
      )
      const samePath = url ? files.find((file) => pathOf(file.url) === pathOf(url)) : undefined
      const file = samePath ?? files[0]
      if (file) {
        return {
          from: 'run',
          sha256: file.sha256,
          url: file.url,
          assetId: null,
          label: runOutputName(run.id),
        }
      }
    }
    if (url) return { from: 'url', sha256: null, url, assetId: null, label: fileNameOfUrl(url) }
    return { from: 'none', sha256: null, url: null, assetId: null, label: null }
  }

  /**
   * The chain of re-evaluations this one belongs to, oldest first: parents by the record's
   * parent id (the mirror's primary key), the newer attempts by `links.superseded_by` when the
   * service names it, else among the same run's evaluations, else among a bounded number of
   * newer ones.
   */
  attempts(record: Evaluation): EvaluationAttempt[] {
    const id = record.id ?? ''
    const self = this.attemptById.get(id) as AttemptRow | undefined
    if (!self) return []
    const chain: EvaluationAttempt[] = [attemptOf(self, true)]
    const seen = new Set([id])
    let parentId = self.parent_id
    while (parentId && !seen.has(parentId) && chain.length < MAX_CHAIN) {
      seen.add(parentId)
      const parent = this.attemptById.get(parentId) as AttemptRow | undefined
      if (!parent) {
        chain.unshift(unknownAttempt(parentId))
        break
      }
      chain.unshift(attemptOf(parent, false))
      parentId = parent.parent_id
    }
    let current: AttemptRow = self
    while (chain.length < MAX_CHAIN) {
      const child = this.childOf(current, record)
      if (!child || seen.has(child.id)) break
      seen.add(child.id)
      chain.push(attemptOf(child, false))
      current = child
    }
    return chain
  }

  /** Re-evaluations keep their parent's run and organization, so those narrow the search. */
  private childOf(row: AttemptRow, record: Evaluation): AttemptRow | undefined {
    if (row.superseded_at === null && row.superseded_by === null) return undefined
    const linked = row.superseded_by ? EVALUATION_LINK.exec(row.superseded_by)?.[1] : undefined
    if (linked) return this.attemptById.get(linked) as AttemptRow | undefined
    if (record.run_id) return this.childByRun.get(record.run_id, row.id) as AttemptRow | undefined
    return this.childByScan.get(
      record.org_id ?? this.orgId,
      row.created_ms,
      CHILD_SCAN_ROWS,
      row.id,
    ) as AttemptRow | undefined
  }
}

function attemptOf(row: AttemptRow, current: boolean): EvaluationAttempt {
  return {
    id: row.id,
    attempt: row.attempt,
    createdAt: new Date(row.created_ms).toISOString(),
    status: row.status_code as EvaluationAttempt['status'],
    verdict: row.overall_passed === null ? null : row.overall_passed === 1 ? 'passed' : 'failed',
    score: row.weighted_pass_rate,
    superseded: row.superseded_at !== null,
    current,
    known: true,
  }
}

function unknownAttempt(id: string): EvaluationAttempt {
  return {
    id,
    attempt: null,
    createdAt: null,
    status: null,
    verdict: null,
    score: null,
    superseded: true,
    current: false,
    known: false,
  }
}

function judgeView(judge: EvaluationJudge): EvaluationJudgeView {
  return {
    id: judge.id,
    name: judge.name,
    description: judge.description,
    category: judge.category,
    passed: judge.passed,
    confidence: judge.confidence,
    weight: judge.weight,
    reasoning: judge.reasoning,
    evidence: judge.evidence ?? [],
    issues: (judge.issues ?? []).map((issue): EvaluationIssueView => ({
      code: issue.code,
      severity: issue.severity,
      description: issue.description,
      region: issue.region,
    })),
  }
}

function pathOf(url: string): string | null {
  try {
    return new URL(url).pathname
  } catch {
    return null
  }
}

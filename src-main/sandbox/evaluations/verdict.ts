import type {
  Evaluation,
  EvaluationAction,
  EvaluationGateFailure,
  EvaluationIssue,
  EvaluationJudge,
} from '../../../src-shared/api'
import type { ImageFacts } from './analyse'
import type { JudgeOutcome, Severity } from './judges'

/** The weighted share of passing judges an image needs (besides passing every gate). */
export const PASS_THRESHOLD = 0.7

const SEVERITY_RANK: Record<Severity, number> = { high: 3, medium: 2, low: 1 }

/** What `primary_action_code` / `action` recommend; the public view of the action record. */
export const ACTIONS = {
  accept: {
    code: 'accept',
    display_name: 'Accept',
    description: 'The image passed; use it as it is.',
  },
  review: {
    code: 'review',
    display_name: 'Review',
    description: 'The image is borderline; have a person look at the issues before using it.',
  },
  regenerate: {
    code: 'regenerate',
    display_name: 'Regenerate',
    description: 'The image failed; generate it again with the issues in mind.',
  },
  resubmit: {
    code: 'resubmit',
    display_name: 'Resubmit',
    description: 'There is no verdict; fix what failure_code names and submit the image again.',
  },
} as const satisfies Record<string, EvaluationAction>

export type VerdictFields = Pick<
  Evaluation,
  | 'judges'
  | 'overall_passed'
  | 'weighted_pass_rate'
  | 'top_issues'
  | 'top_strengths'
  | 'check_summary'
  | 'gate_failures'
  | 'analysis_modules_executed'
  | 'primary_action_code'
  | 'action'
>

export interface VerdictIds {
  evaluationId: string
  newId: () => string
  now: string
}

/** Turns the judges' outcomes into the evaluation's verdict fields and judge records. */
export function buildVerdict(
  outcomes: readonly JudgeOutcome[],
  facts: ImageFacts,
  jobClass: string,
  ids: VerdictIds,
): VerdictFields {
  const issues: { issue: EvaluationIssue; weight: number; order: number }[] = []
  const gateFailures: EvaluationGateFailure[] = []
  const judges: EvaluationJudge[] = outcomes.map((outcome) => {
    const judgeId = ids.newId()
    const judgeIssues: EvaluationIssue[] = []
    const subPoints: Record<string, unknown> = {}
    for (const check of outcome.checks) {
      subPoints[check.name] = {
        passed: check.passed,
        value: check.value,
        expected: check.expected,
        confidence: check.confidence,
      }
      if (check.issue) {
        const issue: EvaluationIssue = {
          id: ids.newId(),
          judge_id: judgeId,
          evaluation_id: ids.evaluationId,
          code: check.issue.code,
          severity: check.issue.severity,
          description: check.issue.description,
          region: check.issue.region ? { ...check.issue.region } : null,
          created_at: ids.now,
        }
        judgeIssues.push(issue)
        issues.push({ issue, weight: outcome.weight, order: issues.length })
      }
      if (check.gate) {
        gateFailures.push({
          gate_code: check.gate,
          message: check.issue?.description ?? `The ${check.name} gate failed.`,
          judge_id: judgeId,
        })
      }
    }
    return {
      id: judgeId,
      evaluation_id: ids.evaluationId,
      name: outcome.name,
      description: outcome.description,
      category: outcome.category,
      passed: outcome.passed,
      confidence: outcome.confidence,
      weight: outcome.weight,
      reasoning: outcome.reasoning,
      evidence: outcome.checks.map((check) => check.evidence),
      sub_point_results: subPoints,
      sub_points_evaluated: outcome.checks.length,
      created_at: ids.now,
      issues: judgeIssues,
    }
  })

  const totalWeight = outcomes.reduce((sum, o) => sum + o.weight, 0)
  const passedWeight = outcomes.reduce((sum, o) => sum + (o.passed ? o.weight : 0), 0)
  const rate = totalWeight > 0 ? Number((passedWeight / totalWeight).toFixed(4)) : 0
  const overallPassed = gateFailures.length === 0 && rate >= PASS_THRESHOLD
  const action =
    gateFailures.length > 0 || rate < 0.5
      ? ACTIONS.regenerate
      : overallPassed
        ? ACTIONS.accept
        : ACTIONS.review

  const rankedIssues = [...issues].sort(
    (a, b) =>
      SEVERITY_RANK[b.issue.severity ?? 'low'] - SEVERITY_RANK[a.issue.severity ?? 'low'] ||
      b.weight - a.weight ||
      a.order - b.order,
  )
  const topIssues = [...new Set(rankedIssues.map(({ issue }) => issue.description ?? ''))]
    .filter(Boolean)
    .slice(0, 5)
  const topStrengths = outcomes
    .filter((o) => o.passed && o.strength !== null && o.weight > 0)
    .map((o, order) => ({ text: o.strength ?? '', score: o.weight * o.confidence, order }))
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, 3)
    .map((s) => s.text)

  const checks = outcomes.flatMap((o) => o.checks)
  const bySeverity = (severity: Severity): number =>
    issues.filter(({ issue }) => issue.severity === severity).length
  return {
    judges,
    overall_passed: overallPassed,
    weighted_pass_rate: rate,
    top_issues: topIssues,
    top_strengths: topStrengths,
    gate_failures: gateFailures,
    analysis_modules_executed: outcomes.length,
    primary_action_code: action.code,
    action: { ...action },
    check_summary: {
      job_class_code: jobClass,
      pass_threshold: PASS_THRESHOLD,
      judges_total: outcomes.length,
      judges_passed: outcomes.filter((o) => o.passed).length,
      checks_total: checks.length,
      checks_passed: checks.filter((c) => c.passed).length,
      gates_failed: gateFailures.length,
      issues: { high: bySeverity('high'), medium: bySeverity('medium'), low: bySeverity('low') },
      image: {
        width: facts.width,
        height: facts.height,
        format: facts.format,
        size_bytes: facts.sizeBytes,
        sha256: facts.sha256,
      },
      measurements: {
        brightness: facts.brightness,
        contrast: facts.contrast,
        entropy_bits: facts.entropy,
        sharpness: facts.sharpness,
        colourfulness: facts.colourfulness,
        saturation: facts.saturation,
        edge_density: facts.edgeDensity,
      },
      palette: facts.palette.map((p) => ({ ...p })),
    },
  }
}

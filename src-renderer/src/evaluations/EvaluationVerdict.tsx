import type { EvaluationDetail, EvaluationJudgeView } from '../../../src-shared/domain/evaluations'
import { ScoreBar, VerdictChip } from './EvaluationList'
import { Feedback } from './Feedback'
import { fullTime, scorePercent, statusWords } from './words'

/** One judge's verdict, confidence and weight, its reasoning, evidence and issues. */
function Judge({ judge }: { judge: EvaluationJudgeView }) {
  const state = judge.passed === null ? 'unknown' : judge.passed ? 'passed' : 'failed'
  return (
    <article className={`judge card ${state}`} aria-label={`Judge ${judge.name ?? ''}`}>
      <header>
        <h3>{judge.name ?? 'Judge'}</h3>
        <span className={`verdict-chip ${state}`}>
          {judge.passed === null ? 'No verdict' : judge.passed ? 'Passed' : 'Failed'}
        </span>
      </header>
      <dl className="judge-facts">
        {judge.category ? (
          <div>
            <dt>Category</dt>
            <dd>{judge.category}</dd>
          </div>
        ) : null}
        <div>
          <dt>Confidence</dt>
          <dd>{judge.confidence === null ? '–' : `${scorePercent(judge.confidence)}%`}</dd>
        </div>
        <div>
          <dt>Weight</dt>
          <dd>{judge.weight ?? '–'}</dd>
        </div>
      </dl>
      {judge.reasoning ? <p className="judge-reasoning">{judge.reasoning}</p> : null}
      {judge.evidence.length > 0 ? (
        <ul className="judge-evidence" aria-label="Evidence">
          {judge.evidence.map((item, index) => (
            <li key={index}>{item}</li>
          ))}
        </ul>
      ) : null}
      {judge.issues.length > 0 ? (
        <ul className="judge-issues" aria-label="Issues">
          {judge.issues.map((issue, index) => (
            <li key={index} className={`severity-${issue.severity ?? 'unknown'}`}>
              <span className="severity">{issue.severity ?? 'issue'}</span>
              <span>
                {issue.description ?? issue.code}
                {issue.code && issue.description ? (
                  <code className="issue-code">{issue.code}</code>
                ) : null}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </article>
  )
}

/** What is known of the evaluation, leaving out what is not. */
function Facts({ evaluation }: { evaluation: EvaluationDetail }) {
  const { row } = evaluation
  const facts: [string, string | null][] = [
    ['Status', row.status === null ? null : statusWords(row.status)],
    ['Failure', evaluation.failureCode],
    ['Job class', row.jobClass],
    ['Created', fullTime(row.createdAt)],
    ['Completed', evaluation.completedAt === null ? null : fullTime(evaluation.completedAt)],
    [
      'Took',
      evaluation.durationMs === null ? null : `${(evaluation.durationMs / 1000).toFixed(1)} s`,
    ],
    ['Cost', evaluation.cost === null ? null : `${evaluation.cost} credits`],
    ['Task', evaluation.taskType],
    ['Image', evaluation.image.label],
  ]
  return (
    <dl className="evaluation-facts">
      {facts
        .filter((fact): fact is [string, string] => fact[1] !== null && fact[1] !== '')
        .map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  )
}

/** The page's right column: the verdict and score, the user's feedback, the judges, the facts. */
export function EvaluationVerdict({ evaluation }: { evaluation: EvaluationDetail }) {
  const { row } = evaluation
  return (
    <div className="evaluation-right">
      <header className="evaluation-head">
        <h2 className="evaluation-heading">{row.title}</h2>
        <div className="verdict-line">
          <span className={`verdict-big ${row.verdict ?? row.status ?? 'unknown'}`}>
            <VerdictChip row={row} />
          </span>
          <span className="score-big" aria-label={`Score ${scorePercent(row.score)}`}>
            <strong>{scorePercent(row.score)}</strong>
            <span className="muted">/ 100</span>
          </span>
          <ScoreBar score={row.score} />
        </div>
        {evaluation.action?.name ? (
          <p className="evaluation-action">
            Suggested: <strong>{evaluation.action.name}</strong>
            {evaluation.action.description ? ` — ${evaluation.action.description}` : ''}
          </p>
        ) : null}
      </header>
      <Feedback evaluation={evaluation} />
      {evaluation.judges.length > 0 ? (
        <section className="judges" aria-label="Judges">
          <h2>Judges</h2>
          <div className="judge-grid">
            {evaluation.judges.map((judge, index) => (
              <Judge key={judge.id ?? index} judge={judge} />
            ))}
          </div>
        </section>
      ) : null}
      <Facts evaluation={evaluation} />
    </div>
  )
}

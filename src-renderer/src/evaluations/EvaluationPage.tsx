import { useEffect, useRef, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type {
  EvaluationDetail,
  EvaluationImage,
  EvaluationJudgeView,
} from '../../../src-shared/domain/evaluations'
import { MediaImage } from '../components/MediaImage'
import { Modal } from '../shell/Modal'
import { matches, typingInField } from '../shell/shortcuts'
import { useAppStore } from '../store'
import { ScoreBar, VerdictChip } from './EvaluationList'
import { Feedback } from './Feedback'
import { fullTime, scorePercent, statusWords } from './words'

/** How often a pending or running evaluation is read again from the service, and how many times. */
const WATCH_MS = 2_000
const WATCH_TIMES = 60

function Picture({ image, alt }: { image: EvaluationImage; alt: string }) {
  const [zoomed, setZoomed] = useState(false)
  if (image.sha256 === null) {
    return (
      <div className="evaluation-picture none" role="img" aria-label={`${alt} (no preview)`}>
        <p>No preview on this computer</p>
        {image.url ? <p className="muted">{image.label ?? image.url}</p> : null}
      </div>
    )
  }
  const source = { sha256: image.sha256, ...(image.url ? { url: image.url } : {}) }
  return (
    <>
      <button
        type="button"
        className="evaluation-picture"
        title="Zoom in"
        onClick={() => {
          setZoomed(true)
        }}
      >
        <MediaImage source={source} alt={alt} size={768} />
      </button>
      {zoomed ? (
        <Modal
          label="The image, large"
          className="picture-zoom"
          onClose={() => {
            setZoomed(false)
          }}
        >
          <button
            type="button"
            className="picture-zoom-close"
            onClick={() => {
              setZoomed(false)
            }}
          >
            Close
          </button>
          <MediaImage source={source} alt={alt} size={1024} />
        </Modal>
      ) : null}
    </>
  )
}

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

function Attempts({ evaluation }: { evaluation: EvaluationDetail }) {
  const open = useAppStore((s) => s.openEvaluation)
  if (evaluation.attempts.length < 2) return null
  return (
    <nav className="attempts" aria-label="Attempts">
      <h2>Attempts</h2>
      <ol>
        {evaluation.attempts.map((attempt, index) => (
          <li key={attempt.id} className={attempt.current ? 'current' : ''}>
            <button
              type="button"
              disabled={attempt.current || !attempt.known}
              aria-current={attempt.current ? 'page' : undefined}
              title={attempt.known ? fullTime(attempt.createdAt) : 'Not on this computer'}
              onClick={() => {
                void open(attempt.id)
              }}
            >
              <span className="attempt-number">Attempt {attempt.attempt ?? index + 1}</span>
              {attempt.known ? (
                <>
                  <VerdictChip row={attempt} />
                  <span className="muted">{scorePercent(attempt.score)}</span>
                </>
              ) : (
                <span className="muted">not synced</span>
              )}
              {attempt.superseded ? <span className="muted">superseded</span> : null}
            </button>
          </li>
        ))}
      </ol>
    </nav>
  )
}

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

/** One evaluation: the picture large, the verdict and score, the judges, the attempts. */
export function EvaluationPage() {
  const { id, evaluation, problem, close, reload, goTo, openRun, openSubmit } = useAppStore(
    useShallow((s) => ({
      id: s.openEvaluationId,
      evaluation: s.evaluation,
      problem: s.evaluationProblem,
      close: s.closeEvaluation,
      reload: s.reloadEvaluation,
      goTo: s.goTo,
      openRun: s.openRun,
      openSubmit: s.setSubmitOpen,
    })),
  )
  const lastOk = useAppStore((s) => s.sync?.lastOkAt ?? null)

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || typingInField(event.target)) return
      if (document.querySelector('[role="dialog"]')) return
      if (matches('evaluations.back', event)) {
        event.preventDefault()
        close()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [close])

  // A sync that ended may have sent a rating waiting in the outbox: read the mirror again.
  const seenSync = useRef(lastOk)
  useEffect(() => {
    if (lastOk === seenSync.current) return
    seenSync.current = lastOk
    void reload(false)
  }, [lastOk, reload])

  // An evaluation being judged is read again from the service until it has its verdict.
  const judging = evaluation?.row.status === 'pending' || evaluation?.row.status === 'running'
  useEffect(() => {
    if (!judging) return
    let times = 0
    const timer = setInterval(() => {
      if (++times > WATCH_TIMES) clearInterval(timer)
      else void reload(true)
    }, WATCH_MS)
    return () => {
      clearInterval(timer)
    }
  }, [judging, id, reload])

  const back = (
    <button type="button" className="small-button back-button" onClick={close}>
      ← Evaluations <kbd>Esc</kbd>
    </button>
  )
  if (!evaluation) {
    return (
      <div className="evaluation-page">
        {back}
        {problem ? (
          <div className="banner error" role="alert">
            {problem.text}
          </div>
        ) : (
          <p className="muted">Opening…</p>
        )}
      </div>
    )
  }
  const { row } = evaluation
  return (
    <div className="evaluation-page">
      <div className="evaluation-page-bar">
        {back}
        <div className="evaluation-page-actions">
          {row.runId ? (
            <button
              type="button"
              className="small-button"
              onClick={() => {
                if (row.runId) openRun(row.runId)
                goTo('runs')
              }}
            >
              Open the run
            </button>
          ) : null}
          {evaluation.canReevaluate ? (
            <button
              type="button"
              className="small-button"
              onClick={() => {
                openSubmit(true)
              }}
            >
              Re-evaluate…
            </button>
          ) : null}
        </div>
      </div>
      {problem ? (
        <div className="banner error" role="alert">
          {problem.text}
        </div>
      ) : null}
      <div className="evaluation-main">
        <div className="evaluation-left">
          <Picture image={evaluation.image} alt={row.title} />
          <Attempts evaluation={evaluation} />
          {evaluation.topIssues.length + evaluation.topStrengths.length > 0 ? (
            <div className="highlights">
              {evaluation.topIssues.length > 0 ? (
                <section className="card issues" aria-label="Top issues">
                  <h2>Top issues</h2>
                  <ul>
                    {evaluation.topIssues.map((issue) => (
                      <li key={issue}>{issue}</li>
                    ))}
                  </ul>
                </section>
              ) : null}
              {evaluation.topStrengths.length > 0 ? (
                <section className="card strengths" aria-label="Strengths">
                  <h2>Strengths</h2>
                  <ul>
                    {evaluation.topStrengths.map((strength) => (
                      <li key={strength}>{strength}</li>
                    ))}
                  </ul>
                </section>
              ) : null}
            </div>
          ) : null}
          {evaluation.gateFailures.length > 0 ? (
            <section className="card issues" aria-label="Gates failed">
              <h2>Gates failed</h2>
              <ul>
                {evaluation.gateFailures.map((gate, index) => (
                  <li key={index}>{gate.message ?? gate.gate}</li>
                ))}
              </ul>
            </section>
          ) : null}
          {evaluation.prompt || evaluation.instructions || evaluation.taskDescription ? (
            <section className="evaluation-texts">
              {evaluation.prompt ? (
                <p>
                  <span className="muted">Prompt</span> {evaluation.prompt}
                </p>
              ) : null}
              {evaluation.taskDescription ? (
                <p>
                  <span className="muted">Task</span> {evaluation.taskDescription}
                </p>
              ) : null}
              {evaluation.instructions ? (
                <p>
                  <span className="muted">Instructions</span> {evaluation.instructions}
                </p>
              ) : null}
            </section>
          ) : null}
        </div>
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
      </div>
    </div>
  )
}

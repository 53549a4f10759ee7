import { useState } from 'react'
import type { EvaluationDetail, EvaluationImage } from '../../../src-shared/domain/evaluations'
import { MediaImage } from '../components/MediaImage'
import { Modal } from '../shell/Modal'
import { useAppStore } from '../store'
import { VerdictChip } from './EvaluationList'
import { fullTime, scorePercent } from './words'

/** The picture judged, or why it cannot be shown; a click shows it large. */
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

/** The other attempts at the same evaluation, when there are any; those synced open. */
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

/** What the judges looked at and said in short: issues and strengths, failed gates, the texts. */
function Highlights({ evaluation }: { evaluation: EvaluationDetail }) {
  return (
    <>
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
    </>
  )
}

/** The page's left column: the picture that was judged, its attempts, the highlights. */
export function EvaluationOverview({ evaluation }: { evaluation: EvaluationDetail }) {
  return (
    <div className="evaluation-left">
      <Picture image={evaluation.image} alt={evaluation.row.title} />
      <Attempts evaluation={evaluation} />
      <Highlights evaluation={evaluation} />
    </div>
  )
}

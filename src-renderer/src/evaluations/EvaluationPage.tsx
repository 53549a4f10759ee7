import { useEffect } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { EvaluationDetail } from '../../../src-shared/domain/evaluations'
import { matches, typingInField } from '../shell/shortcuts'
import { useAppStore } from '../store'
import { EvaluationOverview } from './EvaluationOverview'
import { EvaluationVerdict } from './EvaluationVerdict'
import { useEvaluationUpdates } from './useEvaluationUpdates'

/** Esc goes back to the list, unless a field or a dialog has it. */
function useBackKey(close: () => void) {
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
}

function BackButton({ close }: { close: () => void }) {
  return (
    <button type="button" className="small-button back-button" onClick={close}>
      ← Evaluations <kbd>Esc</kbd>
    </button>
  )
}

/** Where the evaluation leads: its run, and judging it again when the service allows. */
function PageActions({ evaluation }: { evaluation: EvaluationDetail }) {
  const { goTo, openRun, openSubmit } = useAppStore(
    useShallow((s) => ({ goTo: s.goTo, openRun: s.openRun, openSubmit: s.setSubmitOpen })),
  )
  const { runId } = evaluation.row
  return (
    <div className="evaluation-page-actions">
      {runId ? (
        <button
          type="button"
          className="small-button"
          onClick={() => {
            openRun(runId)
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
  )
}

function Problem({ text }: { text: string }) {
  return (
    <div className="banner error" role="alert">
      {text}
    </div>
  )
}

/** One evaluation: the picture large, the verdict and score, the judges, the attempts. */
export function EvaluationPage() {
  const { id, evaluation, problem, close, reload } = useAppStore(
    useShallow((s) => ({
      id: s.openEvaluationId,
      evaluation: s.evaluation,
      problem: s.evaluationProblem,
      close: s.closeEvaluation,
      reload: s.reloadEvaluation,
    })),
  )
  useBackKey(close)
  const judging = evaluation?.row.status === 'pending' || evaluation?.row.status === 'running'
  useEvaluationUpdates(id, judging, reload)

  if (!evaluation) {
    return (
      <div className="evaluation-page">
        <BackButton close={close} />
        {problem ? <Problem text={problem.text} /> : <p className="muted">Opening…</p>}
      </div>
    )
  }
  return (
    <div className="evaluation-page">
      <div className="evaluation-page-bar">
        <BackButton close={close} />
        <PageActions evaluation={evaluation} />
      </div>
      {problem ? <Problem text={problem.text} /> : null}
      <div className="evaluation-main">
        <EvaluationOverview evaluation={evaluation} />
        <EvaluationVerdict evaluation={evaluation} />
      </div>
    </div>
  )
}

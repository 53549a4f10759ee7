import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { EvaluationList } from './EvaluationList'
import { EvaluationPage } from './EvaluationPage'
import { SubmitDialog } from './SubmitDialog'
import './evaluations.css'

/** The Evaluations section: the list, or one evaluation's page, and the submit dialog. */
export function EvaluationsSection() {
  const { openId, submitOpen } = useAppStore(
    useShallow((s) => ({ openId: s.openEvaluationId, submitOpen: s.submitOpen })),
  )
  return (
    <div className="evaluations-section">
      {/* The list stays mounted under a page, so Back finds it scrolled where it was. */}
      <div className="evaluations-list-wrap" hidden={openId !== null}>
        <EvaluationList />
      </div>
      {openId !== null ? <EvaluationPage /> : null}
      {submitOpen ? <SubmitDialog /> : null}
    </div>
  )
}

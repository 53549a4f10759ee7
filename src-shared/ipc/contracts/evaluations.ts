import {
  evaluationFeedbackSchema,
  evaluationIdSchema,
  evaluationListSchema,
  evaluationSubmitSchema,
  type EvaluationDetail,
  type EvaluationListPage,
  type SubmittedEvaluation,
} from '../../domain/evaluations'
import { channel } from '../channel'

/** The evaluations channels of the IPC contract (issue 8), spread into `ipcContract`. */
export const evaluationsContract = {
  /** A page of the mirror's evaluations: filtered, newest first, or ranked by the words given. */
  'evaluations.list': channel<EvaluationListPage>()(evaluationListSchema),
  /** One evaluation from the mirror, with its judges, its attempts and any pending feedback. */
  'evaluations.get': channel<EvaluationDetail>()(evaluationIdSchema),
  /** Reads the evaluation from the service into the mirror, then answers like `get`. */
  'evaluations.refresh': channel<EvaluationDetail>()(evaluationIdSchema),
  /**
   * Thumbs up or down (null clears), through the outbox: sent at once when the service answers,
   * kept pending otherwise and sent by the replay after the next sync.
   */
  'evaluations.feedback': channel<EvaluationDetail>()(evaluationFeedbackSchema),
  /** Submits an asset or a local image file (uploaded first) for evaluation; OFFLINE offline. */
  'evaluations.submit': channel<SubmittedEvaluation>()(evaluationSubmitSchema),
} as const

import type { EvaluationErrorCode } from '../../../src-shared/domain/evaluations'
import { CodedError } from '../../errors/coded'

/** Raised when the review cannot do what was asked; the message says what to do instead. */
export class EvaluationReviewError extends CodedError<EvaluationErrorCode> {
  override readonly name = 'EvaluationReviewError'

  constructor(code: EvaluationErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, undefined, options)
  }
}

export function isEvaluationReviewError(value: unknown): value is EvaluationReviewError {
  return value instanceof EvaluationReviewError
}

export function notInMirror(id: string): EvaluationReviewError {
  return new EvaluationReviewError(
    'EVALUATION_NOT_FOUND',
    `The evaluation ${id} is not on this computer. Sync to bring in new evaluations, or check the link you followed.`,
  )
}

export function offline(what: string): EvaluationReviewError {
  return new EvaluationReviewError(
    'OFFLINE',
    `The service cannot be reached, so ${what}. Try again once Atelier is back online; what was synced stays available meanwhile.`,
  )
}

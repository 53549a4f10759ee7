import type { EvaluationErrorCode } from '../../../src-shared/domain/evaluations'

/** Raised when the review cannot do what was asked; the message says what to do instead. */
export class EvaluationReviewError extends Error {
  override readonly name = 'EvaluationReviewError'

  constructor(
    readonly code: EvaluationErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
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

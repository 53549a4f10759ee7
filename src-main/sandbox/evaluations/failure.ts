import type { Evaluation } from '../../../src-shared/api'

export type FailureCode = NonNullable<Evaluation['failure_code']>

/**
 * Why an evaluation ended without a verdict. The contract has no failure message field, so the
 * message is published in `check_summary.failure_message` and as the one `top_issues` entry.
 */
export class EvaluationFailure extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
  ) {
    super(message)
    this.name = 'EvaluationFailure'
  }
}

/** Thrown out of in-flight work when the sandbox stops, so that nothing is written afterwards. */
export class Halted extends Error {
  constructor() {
    super('The sandbox is stopping.')
    this.name = 'Halted'
  }
}

/** A field-level problem (a flow file's, by path), as the window shows a refused argument's. */
export interface CodedIssue {
  path: string
  message: string
}

/**
 * The one base of the errors a feature throws on purpose: a stable `code` the window branches
 * on and a message that says what to do. The IPC layer hands any of them to the window as they
 * are (`dispatchIpc`), so a feature never needs to know about channels; anything else thrown
 * is reported as INTERNAL, so that internal details never cross the boundary.
 */
export class CodedError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    /** Field-level problems, when the input had several. */
    readonly issues?: CodedIssue[],
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'CodedError'
  }
}

export function isCodedError(error: unknown): error is CodedError {
  return error instanceof CodedError
}

import type { RunListErrorCode } from '../../../src-shared/domain/runs-list'

/** Bad input to the runs list, with a stable code; nothing was read. */
export class RunListError extends Error {
  constructor(
    readonly code: RunListErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'RunListError'
  }
}

export function isRunListError(error: unknown): error is RunListError {
  return error instanceof RunListError
}

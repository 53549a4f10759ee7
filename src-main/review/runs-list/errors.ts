import type { RunListErrorCode } from '../../../src-shared/domain/runs-list'
import { CodedError } from '../../errors/coded'

/** Bad input to the runs list, with a stable code; nothing was read. */
export class RunListError extends CodedError<RunListErrorCode> {
  override readonly name = 'RunListError'
}

export function isRunListError(error: unknown): error is RunListError {
  return error instanceof RunListError
}

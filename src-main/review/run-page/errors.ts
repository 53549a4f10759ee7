import { CodedError } from '../../errors/coded'

export type RunPageErrorCode =
  | 'RUN_NOT_FOUND'
  | 'DELIVERY_NOT_FOUND'
  | 'SECRET_NEEDED'
  | 'SIGNATURE_MALFORMED'
  | 'KEYCHAIN_UNAVAILABLE'
  | 'LOG_CURSOR_INVALID'
  | 'SEED_NOT_AVAILABLE'

/** A problem of the run page itself, with a stable code and a message that says what to do. */
export class RunPageError extends CodedError<RunPageErrorCode> {
  override readonly name = 'RunPageError'
}

export function isRunPageError(error: unknown): error is RunPageError {
  return error instanceof RunPageError
}

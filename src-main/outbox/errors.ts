export type OutboxErrorCode =
  /** The write itself is not valid (a field, an id); nothing was stored. */
  | 'INVALID_WRITE'
  /** A write points at a folder created offline that the outbox does not know. */
  | 'UNKNOWN_PLACEHOLDER'
  /** No outbox entry with that number (for this profile). */
  | 'ENTRY_NOT_FOUND'
  /** Retry and discard are for refused entries only. */
  | 'ENTRY_NOT_REJECTED'

/** Raised when asked for something the outbox will not do; the message says what to do. */
export class OutboxError extends Error {
  override readonly name = 'OutboxError'

  constructor(
    readonly code: OutboxErrorCode,
    message: string,
  ) {
    super(message)
  }

  /** Bad input from the user, as opposed to a state that changes over time. */
  get isInputError(): boolean {
    return this.code === 'INVALID_WRITE' || this.code === 'UNKNOWN_PLACEHOLDER'
  }
}

export function isOutboxError(value: unknown): value is OutboxError {
  return value instanceof OutboxError
}

/**
 * A write refused without (or before) sending it: it depends on a write the service refused,
 * its stored payload is unreadable, or the record changed on the service since it was made.
 * Kept as rejected, like a refusal from the service.
 */
export class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

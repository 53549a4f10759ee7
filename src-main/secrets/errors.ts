/**
 * Every way a profile or key operation can fail. Codes are stable (scripts and the IPC layer
 * branch on them); messages are for people and never carry a key.
 */
export type SecretsErrorCode =
  | 'INVALID_PROFILE_NAME'
  | 'INVALID_BASE_URL'
  | 'INVALID_ORGANIZATION_ID'
  | 'INVALID_API_KEY'
  | 'PROFILE_EXISTS'
  | 'PROFILE_NOT_FOUND'
  | 'NO_PROFILE'
  | 'PROFILES_FILE_DAMAGED'
  | 'KEYCHAIN_UNAVAILABLE'
  | 'KEY_MISSING'
  | 'KEY_REJECTED'
  | 'KEY_FORBIDDEN'
  | 'SERVICE_UNREACHABLE'
  | 'SERVICE_ERROR'

/** Codes that mean the input itself was wrong, so nothing was attempted. */
const INPUT_CODES: ReadonlySet<SecretsErrorCode> = new Set([
  'INVALID_PROFILE_NAME',
  'INVALID_BASE_URL',
  'INVALID_ORGANIZATION_ID',
  'INVALID_API_KEY',
  'PROFILE_EXISTS',
  'PROFILE_NOT_FOUND',
  'NO_PROFILE',
])

export class SecretsError extends Error {
  override readonly name = 'SecretsError'

  constructor(
    readonly code: SecretsErrorCode,
    message: string,
  ) {
    // No `cause`: a binding's or a request's error may hold the key in a field we never print,
    // and a cause travels further (loggers, util.inspect) than the message we checked.
    super(message)
  }

  /** True when the caller gave bad input, as opposed to the work failing. */
  get isInputError(): boolean {
    return INPUT_CODES.has(this.code)
  }
}

export function isSecretsError(value: unknown): value is SecretsError {
  return value instanceof SecretsError
}

// The errors' own modules, not the features' indexes: this file is loaded on the main thread,
// where the profiles' and the client's modules (and zod with them) have nothing to do.
import { isSecretsError, SecretsError, type SecretsErrorCode } from '../secrets/errors'
import { isServiceError, ServiceError } from '../service/errors'
import type { CrossingError } from './protocol'

/** An error as it can cross between threads: its kind, name, message and code, nothing else. */
export function toCrossing(error: unknown): CrossingError {
  if (isSecretsError(error)) {
    return { kind: 'secrets', name: error.name, message: error.message, code: error.code }
  }
  if (isServiceError(error)) {
    return {
      kind: 'service',
      name: error.name,
      message: error.message,
      code: error.code,
      status: error.status,
    }
  }
  if (!(error instanceof Error)) return { kind: 'other', name: 'Error', message: String(error) }
  const code = (error as { code?: unknown }).code
  return {
    kind: 'other',
    name: error.name,
    message: error.message,
    ...(typeof code === 'string' ? { code } : {}),
  }
}

/** The same kind of error on this side, so `isSecretsError` and `isServiceError` still tell. */
export function fromCrossing(error: CrossingError): Error {
  if (error.kind === 'secrets' && error.code !== undefined) {
    return new SecretsError(error.code as SecretsErrorCode, error.message)
  }
  if (error.kind === 'service' && error.code !== undefined) {
    return new ServiceError(error.message, {
      status: error.status ?? 0,
      code: error.code,
      serviceMessage: null,
      errors: null,
      requestId: null,
      method: '',
      path: '',
      attempts: 1,
      outcomeUnknown: false,
    })
  }
  const made = new Error(error.message)
  made.name = error.name
  if (error.code !== undefined) Object.assign(made, { code: error.code })
  return made
}

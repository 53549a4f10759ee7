import { isMediaStoreError } from '../../media-store'
import { isServiceError } from '../../service'

/**
 * Stable codes of the built-in nodes' own failures. The scheduler and the editor switch on the
 * code; the message is for the person and says what to do.
 */
export type BuiltinErrorCode =
  /** The node names a built-in this version of Atelier does not know. */
  | 'BUILTIN_UNKNOWN'
  /** A required input has no value. */
  | 'INPUT_MISSING'
  /** An input has a value of the wrong type, out of its range or not among its choices. */
  | 'INPUT_INVALID'
  /** The node's config holds a value it cannot use. */
  | 'CONFIG_INVALID'
  /** A `{name}` of the template has no input of that name with a value. */
  | 'TEMPLATE_PLACEHOLDER_MISSING'
  /** Pick from list got no line to pick from. */
  | 'LIST_EMPTY'
  /** The crop rectangle reaches outside the image. */
  | 'CROP_OUT_OF_BOUNDS'
  /** The media could not be read: a file gone, a URL that failed, an asset without content. */
  | 'MEDIA_UNREADABLE'
  /** A local file no longer holds the bytes its reference names (it was edited). */
  | 'MEDIA_CHANGED'
  /** The bytes are not an image sharp can decode. */
  | 'NOT_AN_IMAGE'
  /** The node needs the service (evaluate, save to assets, an asset id) and has no client. */
  | 'SERVICE_REQUIRED'
  /** The service could not judge the image (it refunds such evaluations). */
  | 'EVALUATION_FAILED'
  /** The evaluation gave no verdict within the node's time limit. */
  | 'EVALUATION_TIMEOUT'
  /** The quality gate already used every attempt its node allows. */
  | 'GATE_ATTEMPTS_EXHAUSTED'
  /** save to assets was given a folder the organization does not have. */
  | 'FOLDER_NOT_FOUND'
  /** The presigned upload could not be completed. */
  | 'UPLOAD_FAILED'
  /** The flow run was cancelled while the node worked. */
  | 'ABORTED'
  /** Something unexpected went wrong; the message carries what was caught. */
  | 'BUILTIN_FAILED'

export class BuiltinError extends Error {
  override readonly name = 'BuiltinError'

  constructor(
    readonly code: BuiltinErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

export function isBuiltinError(value: unknown): value is BuiltinError {
  return value instanceof BuiltinError
}

export function abortedError(signal?: AbortSignal): BuiltinError {
  return new BuiltinError('ABORTED', 'The node was stopped: its flow run was canceled.', {
    cause: signal?.reason,
  })
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortedError(signal)
}

export const reasonOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error)

/**
 * What a failure becomes once the node gives up: cancellation is ABORTED whatever part noticed
 * it; the service's and the media store's own errors keep their codes (a `ServiceError` also
 * keeps `outcomeUnknown` for the scheduler); anything else is unexpected and says so.
 */
export function settleError(error: unknown, signal: AbortSignal, what: string): Error {
  if (isBuiltinError(error)) return error
  if (signal.aborted) return abortedError(signal)
  if (isServiceError(error)) return error
  if (isMediaStoreError(error)) {
    return error.code === 'ABORTED' ? abortedError(signal) : error
  }
  return new BuiltinError('BUILTIN_FAILED', `${what} failed: ${reasonOf(error)}`, {
    cause: error,
  })
}

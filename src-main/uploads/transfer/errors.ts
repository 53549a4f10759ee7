/**
 * Stable codes of a file's transfer failures. The orchestration switches on the code (restart the
 * file, try it again later, give up on it); the message is for the person and says what to do.
 */
export type TransferErrorCode =
  /** The ledger row has no sha256 or content type yet, or no longer exists: hash it first. */
  | 'FILE_NOT_READY'
  /** The file on disk no longer has the size, mtime or bytes that were hashed: restart it. */
  | 'FILE_CHANGED'
  /** The file is gone from disk. */
  | 'FILE_MISSING'
  /** The file could not be read (permissions, a disk error). */
  | 'FILE_UNREADABLE'
  /** The service answered a 4xx: it will not take this upload as it is. */
  | 'UPLOAD_REFUSED'
  /** The service's upload expired before it was confirmed; trying again starts a new one. */
  | 'UPLOAD_EXPIRED'
  /** The service did not answer usefully (network, 5xx, 429) after every retry. */
  | 'SERVICE_UNREACHABLE'
  /** Storage did not take a part (network, 5xx, 429, stalled) after every retry. */
  | 'STORAGE_UNREACHABLE'
  /** Storage refused a part for good (a 4xx, a URL refused even when fresh, no ETag). */
  | 'STORAGE_REFUSED'
  /** The caller's signal was aborted; the parts storage accepted stay recorded for a resume. */
  | 'ABORTED'
  /** Something unexpected went wrong (a bug, the ledger failing); the message says what. */
  | 'TRANSFER_FAILED'

/** Codes worth another try of the same file later, without restarting it. */
const RETRYABLE = new Set<TransferErrorCode>([
  'UPLOAD_EXPIRED',
  'SERVICE_UNREACHABLE',
  'STORAGE_UNREACHABLE',
  'ABORTED',
])

export interface TransferErrorDetails {
  /** The HTTP status behind the failure, when one was answered. */
  status?: number | undefined
  /** The service's or storage's own error code, when it sent one. */
  serviceCode?: string | undefined
  /** The service's or storage's own message, when it sent one. */
  serviceMessage?: string | undefined
}

export class UploadTransferError extends Error {
  override readonly name = 'UploadTransferError'
  readonly status: number | undefined
  readonly serviceCode: string | undefined
  readonly serviceMessage: string | undefined

  constructor(
    readonly code: TransferErrorCode,
    message: string,
    details: TransferErrorDetails = {},
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.status = details.status
    this.serviceCode = details.serviceCode
    this.serviceMessage = details.serviceMessage
  }

  /** Another try of the same file (same hash, same upload) may succeed. */
  get retryable(): boolean {
    return RETRYABLE.has(this.code)
  }
}

export function isUploadTransferError(value: unknown): value is UploadTransferError {
  return value instanceof UploadTransferError
}

export function abortedError(signal: AbortSignal): UploadTransferError {
  return new UploadTransferError(
    'ABORTED',
    'The upload was stopped. The parts already sent are kept; upload the file again to send the rest.',
    {},
    { cause: signal.reason },
  )
}

/** A short reason from anything thrown, for messages (never a stack). */
export function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
    return `${error.message}${cause}`
  }
  return String(error)
}

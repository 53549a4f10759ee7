import { CodedError } from '../errors/coded'

/**
 * Stable codes for what the media store can fail at. Callers switch on the code, never on the
 * message: URL_EXPIRED means "refetch the record for a fresh URL", DOWNLOAD_FAILED with
 * `retryable` means "try again later", the rest are about the file itself.
 */
export type MediaStoreErrorCode =
  /** The storage refused the presigned URL (401/403/410): it expired or its signature is stale. */
  | 'URL_EXPIRED'
  /** No usable answer: the network failed, the storage answered another error, the body was cut. */
  | 'DOWNLOAD_FAILED'
  /** The bytes did not hash to the sha256 the record promised; nothing was kept. */
  | 'CHECKSUM_MISMATCH'
  /** The body is larger than the limit of this download; nothing was kept. */
  | 'TOO_LARGE'
  /** The caller's signal aborted the work. */
  | 'ABORTED'
  /** No entry with this sha256 is stored (never stored, or evicted). */
  | 'NOT_FOUND'
  /** The stored file is not an image the thumbnailer can decode. */
  | 'NOT_AN_IMAGE'
  /** The image decoded but the thumbnail could not be made. */
  | 'THUMBNAIL_FAILED'
  /** The disk refused a write (full, read-only, rights). */
  | 'WRITE_FAILED'
  /** A malformed argument: a sha256 that is not 64 hex digits, a bad size or URL. */
  | 'INVALID_ARGUMENT'
  /** The index was written by a newer Atelier; this build must not guess at its layout. */
  | 'INDEX_FROM_NEWER_VERSION'
  /** The store was closed. */
  | 'CLOSED'

export interface MediaStoreErrorDetails {
  /** The HTTP status the storage answered, when it answered. */
  status?: number
  /**
   * The URL without its query: presigned queries carry signatures, which must not reach a log.
   */
  url?: string
  sha256?: string
  /** Trying the same thing again later may work (a network failure, a 5xx, a 429). */
  retryable?: boolean
}

export class MediaStoreError extends CodedError<MediaStoreErrorCode> {
  override readonly name = 'MediaStoreError'
  readonly status: number | undefined
  readonly url: string | undefined
  readonly sha256: string | undefined
  readonly retryable: boolean

  constructor(
    code: MediaStoreErrorCode,
    message: string,
    details: MediaStoreErrorDetails = {},
    options?: ErrorOptions,
  ) {
    super(code, message, undefined, options)
    this.status = details.status
    this.url = details.url
    this.sha256 = details.sha256
    this.retryable = details.retryable ?? false
  }

  /** What a log line or the IPC boundary may carry: no cause, no stack. */
  toJSON(): { name: string; code: MediaStoreErrorCode; message: string } & MediaStoreErrorDetails {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.url === undefined ? {} : { url: this.url }),
      ...(this.sha256 === undefined ? {} : { sha256: this.sha256 }),
      retryable: this.retryable,
    }
  }
}

export function isMediaStoreError(value: unknown): value is MediaStoreError {
  return value instanceof MediaStoreError
}

/** Origin and path only: the query of a presigned URL is a credential. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return '(not a URL)'
  }
}

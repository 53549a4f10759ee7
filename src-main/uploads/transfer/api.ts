import type { Asset, AssetUpload } from '../../../src-shared/api'
import { isServiceError, type ServiceClient, type ServiceError } from '../../service'
import { isUploadTransferError, reasonOf, UploadTransferError } from './errors'
import { backoffMs, sleep, type TransferRetryPolicy } from './retry'

/**
 * The three API steps of the upload. The contract takes no Idempotency-Key on them, so the
 * client does not repeat these POSTs itself; each is safe to repeat in its own right, and is
 * repeated here when the answer was lost or the service was briefly unavailable:
 * - a declaration sent twice leaves one stray upload on the service, which only expires;
 * - a refresh only hands out new URLs;
 * - a confirmation sent again answers 200 with the asset the first one created.
 */

export interface UploadDeclaration {
  filename: string
  contentType: string
  sizeBytes: number
  sha256: string
  folderId: string | null
  partSize?: number | undefined
}

export interface ConfirmedPart {
  part_number: number
  etag: string
}

function isTransient(error: ServiceError): boolean {
  if (error.code === 'ABORTED') return false
  if (error.outcomeUnknown) return true
  // More than one attempt means the client already retried this failure itself.
  if (error.attempts > 1) return false
  return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500
}

export function isUnknownUpload(error: unknown): boolean {
  return isServiceError(error) && error.status === 404
}

/** The service's verdict as a transfer failure that says what to do. */
export function serviceFailure(
  error: unknown,
  what: string,
  filename: string,
  uploadId?: string,
): UploadTransferError {
  if (isUploadTransferError(error)) return error
  if (!isServiceError(error)) {
    return new UploadTransferError(
      'TRANSFER_FAILED',
      `Could not ${what} for ${filename} (${reasonOf(error)}). Try again; if it keeps failing, report it.`,
      {},
      { cause: error },
    )
  }
  if (error.code === 'ABORTED') {
    return new UploadTransferError(
      'ABORTED',
      'The upload was stopped. The parts already sent are kept; upload the file again to send the rest.',
      {},
      { cause: error },
    )
  }
  const details = {
    status: error.status,
    serviceCode: error.code,
    serviceMessage: error.serviceMessage ?? undefined,
  }
  if (error.status === 409 && error.code === 'UPLOAD_EXPIRED') {
    return new UploadTransferError(
      'UPLOAD_EXPIRED',
      `The upload of ${filename} (${uploadId ?? 'unknown'}) expired on the service before it was confirmed. Upload the file again: a new upload starts from the first part.`,
      details,
      { cause: error },
    )
  }
  if (error.outcomeUnknown || error.status === 0 || error.status >= 500 || error.status === 429) {
    return new UploadTransferError(
      'SERVICE_UNREACHABLE',
      `Could not ${what} for ${filename}: ${error.message} Try again later; the parts already sent are kept.`,
      details,
      { cause: error },
    )
  }
  const said = error.serviceMessage ?? error.message
  return new UploadTransferError(
    'UPLOAD_REFUSED',
    `The service refused to ${what} for ${filename} (${error.code}): ${said} Fix what it names, then upload the file again.`,
    details,
    { cause: error },
  )
}

export class UploadApi {
  constructor(
    private readonly service: ServiceClient,
    private readonly retry: TransferRetryPolicy,
    private readonly signal: AbortSignal,
  ) {}

  /** A POST that is safe to repeat, repeated while its failure is transient. */
  private async repeatable<T>(send: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send()
      } catch (error) {
        if (!isServiceError(error) || !isTransient(error) || attempt >= this.retry.attempts) {
          throw error
        }
        const wait = error.retryAfterMs ?? backoffMs(attempt, this.retry)
        if (wait > this.retry.maxDelayMs) throw error
        await sleep(wait, this.signal)
      }
    }
  }

  declare(file: UploadDeclaration): Promise<AssetUpload> {
    return this.repeatable(() =>
      this.service.post('/v1/asset-uploads', {
        body: {
          filename: file.filename,
          content_type: file.contentType,
          size_bytes: file.sizeBytes,
          sha256: file.sha256,
          folder_id: file.folderId,
          ...(file.partSize === undefined ? {} : { part_size: file.partSize }),
        },
        signal: this.signal,
      }),
    )
  }

  /** A GET: the client retries it itself. */
  get(uploadId: string): Promise<AssetUpload> {
    return this.service.get('/v1/asset-uploads/{upload_id}', {
      params: { path: { upload_id: uploadId } },
      signal: this.signal,
    })
  }

  refresh(uploadId: string, partNumbers: number[]): Promise<AssetUpload> {
    return this.repeatable(() =>
      this.service.post('/v1/asset-uploads/{upload_id}/parts', {
        params: { path: { upload_id: uploadId } },
        body: { part_numbers: partNumbers },
        signal: this.signal,
      }),
    )
  }

  confirm(uploadId: string, parts: ConfirmedPart[]): Promise<Asset> {
    return this.repeatable(() =>
      this.service.post('/v1/asset-uploads/{upload_id}/confirmations', {
        params: { path: { upload_id: uploadId } },
        body: { parts },
        signal: this.signal,
      }),
    )
  }
}

import { changedError, diskError, partBytes, ShortReadError } from './disk'
import { reasonOf, UploadTransferError } from './errors'
import { backoffMs, retryAfterMs, sleep, type TransferRetryPolicy } from './retry'

/**
 * Step 2 of the upload: one part's raw bytes PUT to its presigned URL, with no API key (the URL
 * carries its own signature, and a key must never reach storage). The body streams from disk
 * (or comes from memory, for a small file read whole when it was hashed) with an explicit
 * Content-Length, which object stores require of a presigned PUT.
 */

/** A URL this close to its expiry is refreshed before use rather than refused mid-part. */
const URL_MARGIN_MS = 30_000
/** Fresh URLs refused with 403 this many times mean something else is wrong (a clock, a proxy). */
const MAX_REFRESHES = 2
const ERROR_BODY_MAX = 4096

export interface PartUrl {
  url: string
  expiresMs: number
}

export interface PartJob {
  path: string
  uploadId: string
  partNumber: number
  offset: number
  size: number
  url: PartUrl
  /** The part's bytes when the file is held in memory; read from `path` otherwise. */
  bytes?: Uint8Array | undefined
}

export interface PartSender {
  fetch: typeof fetch
  retry: TransferRetryPolicy
  signal: AbortSignal
  /** A fresh URL for this part from the service. */
  refresh: (partNumber: number) => Promise<PartUrl>
  /** Told each chunk as it goes out, re-sent parts included. */
  onBytes: (bytes: number) => void
}

type Outcome =
  | { kind: 'accepted'; etag: string }
  | { kind: 'url-refused'; status: number; code?: string | undefined; message?: string | undefined }
  | {
      kind: 'refused'
      status: number
      code?: string | undefined
      message?: string | undefined
    }
  | { kind: 'transient'; reason: string; retryAfterMs?: number | undefined; cause?: unknown }

export function urlExpiresSoon(url: PartUrl): boolean {
  return url.expiresMs - Date.now() < URL_MARGIN_MS
}

async function readSome(response: Response): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    while (total < ERROR_BODY_MAX) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      total += value.length
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, ERROR_BODY_MAX)
}

/** The code and message of a storage error: the sandbox's JSON envelope or S3's XML. */
function storageVerdict(text: string): { code?: string; message?: string } {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown } | null
    return {
      ...(typeof body?.code === 'string' ? { code: body.code } : {}),
      ...(typeof body?.message === 'string' ? { message: body.message } : {}),
    }
  } catch {
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
    return { ...(code ? { code } : {}), ...(message ? { message } : {}) }
  }
}

async function putOnce(job: PartJob, url: string, sender: PartSender): Promise<Outcome> {
  // A stalled connection would otherwise hold a slot forever: every chunk that goes out, and the
  // answer, must come within the stall timeout.
  const attempt = new AbortController()
  const timer = setTimeout(() => {
    attempt.abort(new Error('stalled'))
  }, sender.retry.stallTimeoutMs)
  // Linked by hand and unlinked after: a part's signal outlives many attempts.
  const onAbort = (): void => {
    attempt.abort(sender.signal.reason)
  }
  sender.signal.addEventListener('abort', onAbort, { once: true })
  if (sender.signal.aborted) onAbort()
  const touch = (bytes: number): void => {
    timer.refresh()
    sender.onBytes(bytes)
  }
  let bodyError: unknown = null
  async function* fromDisk(): AsyncGenerator<Uint8Array> {
    try {
      yield* partBytes(job.path, job.offset, job.size, touch)
    } catch (error) {
      bodyError = error
      throw error
    }
  }
  // Bytes in memory go as one body: no stream to set up, and fetch writes them at once.
  const body = job.bytes ?? fromDisk()
  if (job.bytes) touch(job.bytes.length)
  try {
    const response = await sender.fetch(url, {
      method: 'PUT',
      body,
      duplex: 'half',
      // A presigned URL does not redirect. Allowing it would also cost a copy of every byte:
      // fetch keeps a second branch of the body (a tee) to send again to where it points.
      redirect: 'error',
      headers: {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(job.size),
      },
      signal: attempt.signal,
    })
    const etag = response.headers.get('ETag')
    if (response.ok && etag) {
      // Not awaited: the part is accepted, whatever happens to the rest of the answer.
      void response.body?.cancel().catch(() => undefined)
      return { kind: 'accepted', etag }
    }
    const verdict = storageVerdict(await readSome(response))
    if (response.ok) {
      return {
        kind: 'refused',
        status: response.status,
        message: 'storage accepted the part but sent no ETag',
      }
    }
    if (response.status === 403) return { kind: 'url-refused', status: 403, ...verdict }
    if (response.status === 408 || response.status === 429 || response.status >= 500) {
      return {
        kind: 'transient',
        reason: `storage answered HTTP ${response.status}${verdict.code ? ` ${verdict.code}` : ''}`,
        retryAfterMs: retryAfterMs(response.headers),
      }
    }
    return { kind: 'refused', status: response.status, ...verdict }
  } catch (error) {
    if (bodyError instanceof ShortReadError) {
      throw changedError(
        job.path,
        `part ${job.partNumber} could not be read whole: ${bodyError.message}`,
      )
    }
    if (bodyError !== null) throw diskError(job.path, bodyError)
    if (sender.signal.aborted) throw error
    // Not the caller's abort (handled above): the stall timer's.
    const reason = attempt.signal.aborted
      ? `storage went silent for ${sender.retry.stallTimeoutMs} ms`
      : reasonOf(error)
    return { kind: 'transient', reason, cause: error }
  } finally {
    clearTimeout(timer)
    sender.signal.removeEventListener('abort', onAbort)
  }
}

/** Sends one part until storage accepts it; answers its ETag. */
export async function sendPart(job: PartJob, sender: PartSender): Promise<string> {
  let url = urlExpiresSoon(job.url) ? await sender.refresh(job.partNumber) : job.url
  let failures = 0
  let refreshes = 0
  for (;;) {
    const outcome = await putOnce(job, url.url, sender)
    switch (outcome.kind) {
      case 'accepted':
        return outcome.etag
      case 'url-refused':
        if (refreshes >= MAX_REFRESHES) {
          throw new UploadTransferError(
            'STORAGE_REFUSED',
            `Storage refused part ${job.partNumber} of ${job.path} even with a fresh URL (${outcome.code ?? 'HTTP 403'}). Check that the computer's clock is right, then upload the file again.`,
            { status: outcome.status, serviceCode: outcome.code, serviceMessage: outcome.message },
          )
        }
        refreshes++
        url = await sender.refresh(job.partNumber)
        break
      case 'refused':
        if (outcome.code === 'UPLOAD_EXPIRED') {
          throw new UploadTransferError(
            'UPLOAD_EXPIRED',
            `The upload of ${job.path} (${job.uploadId}) expired before all its parts arrived. Upload the file again: a new upload starts from the first part.`,
            { status: outcome.status, serviceCode: outcome.code, serviceMessage: outcome.message },
          )
        }
        throw new UploadTransferError(
          'STORAGE_REFUSED',
          `Storage refused part ${job.partNumber} of ${job.path} (HTTP ${outcome.status}${outcome.code ? ` ${outcome.code}` : ''}): ${outcome.message ?? 'no reason given'}. Upload the file again; if it keeps failing, report it.`,
          { status: outcome.status, serviceCode: outcome.code, serviceMessage: outcome.message },
        )
      case 'transient': {
        failures++
        const asked = outcome.retryAfterMs
        const gaveUp = failures >= sender.retry.attempts
        if (gaveUp || (asked !== undefined && asked > sender.retry.maxDelayMs)) {
          const wait =
            asked === undefined ? '' : ` Storage asked to wait ${Math.ceil(asked / 1000)} s.`
          throw new UploadTransferError(
            'STORAGE_UNREACHABLE',
            `Part ${job.partNumber} of ${job.path} could not be sent to storage (${outcome.reason}; ${failures} attempt(s)).${wait} Try again later; the parts already sent are kept.`,
            {},
            outcome.cause === undefined ? undefined : { cause: outcome.cause },
          )
        }
        await sleep(asked ?? backoffMs(failures, sender.retry), sender.signal)
        break
      }
    }
  }
}

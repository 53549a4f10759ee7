import { Readable } from 'node:stream'
import { MediaStoreError, redactUrl } from './errors'
import { writeHashed } from './files'
import { abortedError } from './shared'

export interface FetchedFile {
  sha256: string
  size: number
  /** The media type the storage declared, parameters dropped; null when it declared none. */
  contentType: string | null
}

const SMALL_BODY = 4096
const ERROR_BODY_MS = 2000

/** `image/png; charset=…` → `image/png`; anything malformed → null. */
export function mediaType(value: string | null | undefined): string | null {
  const essence = value?.split(';')[0]?.trim().toLowerCase()
  return essence && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(essence) ? essence : null
}

/** The first bytes of an error body, bounded in size and time: it only improves a message. */
async function errorBody(response: Response): Promise<string> {
  const body = response.body
  const declared = Number(response.headers.get('content-length') ?? 0)
  if (!body || declared > SMALL_BODY) {
    await body?.cancel().catch(() => undefined)
    return ''
  }
  const reader = body.getReader()
  const parts: Uint8Array[] = []
  let size = 0
  const timer = setTimeout(() => {
    void reader.cancel().catch(() => undefined)
  }, ERROR_BODY_MS)
  try {
    while (size < SMALL_BODY) {
      const next: { done: boolean; value?: Uint8Array } = await reader.read()
      if (next.done || !next.value) break
      parts.push(next.value)
      size += next.value.byteLength
    }
  } catch {
    // Cut off or timed out: what arrived is enough.
  } finally {
    clearTimeout(timer)
    await reader.cancel().catch(() => undefined)
  }
  return Buffer.concat(parts).subarray(0, SMALL_BODY).toString('utf8')
}

/** The storage's own error code (JSON `code`, S3-style `<Code>`), for a clearer message. */
async function storageCode(response: Response): Promise<string | null> {
  const text = await errorBody(response)
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code
    if (typeof code === 'string') return code.slice(0, 64)
  } catch {
    // Not JSON: object stores answer XML.
  }
  return /<Code>([^<]{1,64})<\/Code>/.exec(text)?.[1] ?? null
}

async function statusError(response: Response, url: string): Promise<MediaStoreError> {
  const { status } = response
  const code = await storageCode(response)
  const said = code ? ` (${code})` : ''
  const details = { status, url: redactUrl(url) }
  if (status === 401 || status === 403 || status === 410) {
    return new MediaStoreError(
      'URL_EXPIRED',
      `The storage refused the download URL with ${status}${said}: presigned URLs expire. Fetch the record again for a fresh URL.`,
      details,
    )
  }
  const retryable = status === 408 || status === 429 || status >= 500
  return new MediaStoreError(
    'DOWNLOAD_FAILED',
    status === 404
      ? `The storage has no file at ${details.url} (404${said}).`
      : `The storage answered ${status}${said} for ${details.url}${retryable ? '; try again later' : ''}.`,
    { ...details, retryable },
  )
}

function isFileSystemError(error: unknown): boolean {
  const { syscall, code } = (error ?? {}) as { syscall?: unknown; code?: unknown }
  return typeof syscall === 'string' && typeof code === 'string'
}

/** What went wrong while the body streamed, as a typed error. */
export function streamError(error: unknown, url: string, signal: AbortSignal): MediaStoreError {
  if (error instanceof MediaStoreError) return error
  if (signal.aborted) return abortedError()
  if (isFileSystemError(error)) {
    return new MediaStoreError(
      'WRITE_FAILED',
      `The media store could not write the download to disk (${(error as { code: string }).code}).`,
      { url: redactUrl(url) },
      { cause: error },
    )
  }
  return new MediaStoreError(
    'DOWNLOAD_FAILED',
    `The download from ${redactUrl(url)} broke off before its end; try again.`,
    { url: redactUrl(url), retryable: true },
    { cause: error },
  )
}

/**
 * Streams a URL's body into `file` while hashing it; answers its hash and size. Every failure is
 * a MediaStoreError; the caller owns `file` and removes it on failure.
 */
export async function fetchToFile(
  fetchImpl: typeof fetch,
  url: string,
  file: string,
  limit: number,
  signal: AbortSignal,
): Promise<FetchedFile> {
  let response: Response
  try {
    response = await fetchImpl(url, { signal, redirect: 'follow' })
  } catch (error) {
    if (signal.aborted) throw abortedError()
    throw new MediaStoreError(
      'DOWNLOAD_FAILED',
      `Could not reach ${redactUrl(url)}: the network failed. Try again when it is back.`,
      { url: redactUrl(url), retryable: true },
      { cause: error },
    )
  }
  if (!response.ok) throw await statusError(response, url)

  const tooLarge = (size: number) =>
    new MediaStoreError(
      'TOO_LARGE',
      `The file at ${redactUrl(url)} is larger (${size} bytes or more) than the limit of ${limit} bytes.`,
      { url: redactUrl(url), status: response.status },
    )
  const declaredHeader = response.headers.get('content-length')
  const declared = declaredHeader === null ? null : Number(declaredHeader)
  if (declared !== null && declared > limit) {
    await response.body?.cancel().catch(() => undefined)
    throw tooLarge(declared)
  }

  let written: { sha256: string; size: number }
  try {
    written = await writeHashed(response.body ?? Readable.from([]), file, limit, tooLarge, signal)
  } catch (error) {
    await response.body?.cancel().catch(() => undefined)
    throw streamError(error, url, signal)
  }
  // A decoded (compressed) body has another length than the one declared on the wire.
  const decoded = response.headers.has('content-encoding')
  if (!decoded && declared !== null && Number.isFinite(declared) && written.size !== declared) {
    throw new MediaStoreError(
      'DOWNLOAD_FAILED',
      `The download from ${redactUrl(url)} ended after ${written.size} of ${declared} bytes; try again.`,
      { url: redactUrl(url), retryable: true },
    )
  }
  return { ...written, contentType: mediaType(response.headers.get('content-type')) }
}

import type { SandboxServices } from '../services'

/** How long an image URL may take to answer before the run fails with INPUT_FETCH_FAILED. */
export const FETCH_TIMEOUT_MS = 15_000
/** Larger inputs are refused rather than read into memory. */
export const MAX_IMAGE_BYTES = 64 * 1024 * 1024

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

async function readAll(stream: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    size += bytes.length
    if (size > MAX_IMAGE_BYTES) throw new Error(`it is larger than ${MAX_IMAGE_BYTES} bytes`)
    chunks.push(bytes)
  }
  return Buffer.concat(chunks)
}

function readBlob(services: SandboxServices, sha256: string): Promise<Buffer> {
  if (!services.blobs.has(sha256)) throw new Error('its stored bytes are gone')
  return readAll(services.blobs.open(sha256))
}

/** A presigned URL of this sandbox's own blob store, or null for any other URL. */
function ownBlob(services: SandboxServices, url: URL): string | null {
  const base = services.config.baseUrl
  if (!base || url.origin !== new URL(base).origin) return null
  const match = /^\/_storage\/blobs\/([0-9a-f]{64})$/.exec(url.pathname)
  return match?.[1] ?? null
}

async function download(url: URL, signal: AbortSignal): Promise<Buffer> {
  const response = await fetch(url, {
    signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]),
    redirect: 'follow',
  })
  if (!response.ok) {
    await response.body?.cancel()
    throw new Error(`${url.host} answered HTTP ${response.status}`)
  }
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > MAX_IMAGE_BYTES) {
    await response.body?.cancel()
    throw new Error(`it is larger than ${MAX_IMAGE_BYTES} bytes`)
  }
  if (!response.body) return Buffer.alloc(0)
  return readAll(response.body)
}

/**
 * Loads an image input that is not a `data:` URL (the models decode those themselves): an asset
 * id of the organization, a presigned URL of this sandbox (read straight from the blob store, so
 * a run's output can feed the next run without a request to itself), or any http(s) URL.
 */
export function imageFetcher(
  services: SandboxServices,
  orgId: string,
  signal: AbortSignal,
): (ref: string) => Promise<Buffer> {
  return async (ref) => {
    if (signal.aborted) throw new Error('the run was stopped')
    const text = ref.trim()
    if (UUID.test(text)) {
      const asset = services.store.get<{
        id: string
        sha256?: unknown
        created_at: string
        updated_at: string
      }>('assets', text, orgId)
      if (!asset) throw new Error(`there is no asset ${text} in this organization`)
      if (typeof asset.sha256 !== 'string') throw new Error(`asset ${text} has no content yet`)
      return readBlob(services, asset.sha256)
    }
    let url: URL
    try {
      url = new URL(text)
    } catch {
      throw new Error('it is not a data: URL, an asset id or an http(s) URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`${url.protocol} URLs are not supported; use a data:, http: or https: URL`)
    }
    const sha256 = ownBlob(services, url)
    if (sha256) {
      const verdict = services.blobs.verify(url, services.clock())
      if (verdict === 'expired') {
        throw new Error(
          'its presigned URL has expired; read the run or asset again for a fresh URL',
        )
      }
      if (verdict === 'invalid') throw new Error('its presigned URL is not valid')
      return readBlob(services, sha256)
    }
    return download(url, signal)
  }
}

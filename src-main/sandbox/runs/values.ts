import { createHash } from 'node:crypto'
import { sharp } from '../../native'
import { blobUrl } from '../core-area'
import { decodeDataUrl } from '../models'
import type { SandboxServices } from '../services'

/**
 * A file made by a run, as outputs store it: the blob it is (`sha256`) and what it is. Presenting
 * a run adds a fresh presigned `url` to every such object (see `withUrls`).
 */
export interface StoredFile {
  sha256: string
  content_type: string
  size_bytes?: number
  width?: number
  height?: number
  duration_ms?: number
  frames?: number
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export function isStoredFile(value: unknown): value is StoredFile {
  return (
    isRecord(value) &&
    typeof value.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(value.sha256) &&
    typeof value.content_type === 'string'
  )
}

/** Reads a whole blob; its bytes must exist. */
export async function readBlob(services: SandboxServices, sha256: string): Promise<Buffer> {
  if (!services.blobs.has(sha256)) throw new Error('its stored bytes are gone')
  const chunks: Buffer[] = []
  const stream: AsyncIterable<Buffer | string> = services.blobs.open(sha256)
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * The bytes of an image value: a file another node made, a `data:` URL, or a reference the run's
 * fetcher loads (an asset id, a presigned or http(s) URL).
 */
export async function bytesOf(
  services: SandboxServices,
  value: unknown,
  fetchImage: (ref: string) => Promise<Buffer>,
): Promise<Buffer> {
  if (isStoredFile(value)) return readBlob(services, value.sha256)
  if (typeof value !== 'string' || value.trim() === '') {
    throw new Error('it is neither a file nor a data: URL, an asset id or a URL')
  }
  return value.startsWith('data:') ? decodeDataUrl(value) : fetchImage(value)
}

/**
 * An input as a model takes it: files other nodes made become presigned URLs of this sandbox,
 * which the run's image fetcher reads straight from the blob store.
 */
export function asModelInput(
  services: SandboxServices,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(input)) {
    out[name] = isStoredFile(value)
      ? blobUrl(services, value.sha256, value.content_type).url
      : value
  }
  return out
}

/** Stores a PNG (or any image sharp reads) made in-process and describes it as a file. */
export async function storeImage(services: SandboxServices, bytes: Buffer): Promise<StoredFile> {
  const metadata = await sharp(bytes).metadata()
  const { sha256, size } = services.blobs.put(bytes)
  return {
    content_type: `image/${metadata.format === 'jpeg' ? 'jpeg' : metadata.format}`,
    sha256,
    size_bytes: size,
    width: metadata.width,
    height: metadata.height,
  }
}

/** A seed of its own for each node of a run: the same run seed gives every node the same one. */
export function nodeSeed(runSeed: number, nodeId: string): number {
  return createHash('sha256').update(`${runSeed}:${nodeId}`).digest().readUInt32BE(0)
}

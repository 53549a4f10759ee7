import type { Readable } from 'node:stream'
import type { Asset } from '../../../src-shared/api'
import type { SandboxServices } from '../services'
import { EvaluationFailure, Halted } from './failure'

/** Where an image comes from: a URL (http, https or data:) or an asset of the organization. */
export type ImageRef = { url: string } | { assetId: string }

export interface LoadLimits {
  timeoutMs: number
  maxBytes: number
  /** Aborted when the sandbox stops. */
  halt: AbortSignal
}

const megabytes = (bytes: number): string => `${String(Math.round(bytes / (1024 * 1024)))} MB`

function tooLarge(label: string, maxBytes: number): EvaluationFailure {
  return new EvaluationFailure(
    'invalid_media',
    `${label} is larger than the ${megabytes(maxBytes)} the evaluator accepts.`,
  )
}

/** Why a fetch failed, in a few words: the system error code when there is one. */
function causeOf(error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    if (current.cause === undefined) return current.message
    current = current.cause
  }
  return String(current)
}

async function readCapped(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
  label: string,
): Promise<Buffer> {
  const parts: Uint8Array[] = []
  let size = 0
  for await (const chunk of chunks) {
    size += chunk.length
    if (size > maxBytes) throw tooLarge(label, maxBytes)
    parts.push(chunk)
  }
  return Buffer.concat(parts)
}

async function fetchUrl(url: string, label: string, limits: LoadLimits): Promise<Buffer> {
  const timeout = AbortSignal.timeout(limits.timeoutMs)
  const signal = AbortSignal.any([limits.halt, timeout])
  try {
    const response = await fetch(url, { signal, headers: { accept: 'image/*' } })
    if (!response.ok) {
      await response.body?.cancel()
      throw new EvaluationFailure(
        'dispatch_failed',
        `${label} URL answered HTTP ${String(response.status)}; check that it is public and has not expired.`,
      )
    }
    const length = Number(response.headers.get('content-length') ?? 0)
    if (length > limits.maxBytes) {
      await response.body?.cancel()
      throw tooLarge(label, limits.maxBytes)
    }
    // An empty answer is left to the decoder, which calls it what it is: not an image.
    if (!response.body) return Buffer.alloc(0)
    return await readCapped(response.body, limits.maxBytes, label)
  } catch (error) {
    if (limits.halt.aborted) throw new Halted()
    if (error instanceof EvaluationFailure) throw error
    if (timeout.aborted) {
      throw new EvaluationFailure(
        'timed_out',
        `${label} URL did not deliver the image within ${String(limits.timeoutMs / 1000)} s.`,
      )
    }
    throw new EvaluationFailure(
      'dispatch_failed',
      `${label} URL could not be fetched (${causeOf(error)}); check that the address is right and reachable.`,
    )
  }
}

async function readAsset(
  services: SandboxServices,
  orgId: string,
  assetId: string,
  label: string,
  limits: LoadLimits,
): Promise<Buffer> {
  const asset = services.store.get<Asset>('assets', assetId, orgId)
  if (!asset) {
    throw new EvaluationFailure(
      'dispatch_failed',
      `${label}'s asset ${assetId} was deleted before it could be evaluated.`,
    )
  }
  if (!services.blobs.has(asset.sha256)) {
    throw new EvaluationFailure(
      'processing_failed',
      `The bytes of asset ${assetId} are missing from storage; upload the file again.`,
    )
  }
  if (services.blobs.size(asset.sha256) > limits.maxBytes) throw tooLarge(label, limits.maxBytes)
  const stream: Readable = services.blobs.open(asset.sha256)
  try {
    return await readCapped(stream, limits.maxBytes, label)
  } finally {
    stream.destroy()
  }
}

/** The bytes of an image, within the limits; failures are EvaluationFailures with their code. */
export async function loadImage(
  services: SandboxServices,
  orgId: string,
  ref: ImageRef,
  label: string,
  limits: LoadLimits,
): Promise<Buffer> {
  if (limits.halt.aborted) throw new Halted()
  return 'url' in ref
    ? fetchUrl(ref.url, label, limits)
    : readAsset(services, orgId, ref.assetId, label, limits)
}

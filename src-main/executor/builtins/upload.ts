import { open } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Asset, AssetUpload } from '../../../src-shared/api'
import { isServiceError, type ServiceClient } from '../../service'
import type { MediaRef } from '../types'
import type { BuiltinRun } from './context'
import { abortedError, BuiltinError, reasonOf, throwIfAborted } from './errors'

/**
 * Puts a file among the organization's assets through the contract's three-step presigned
 * upload, never sending bytes the organization already holds:
 * 1. the assets are searched by sha256 (`q=sha256=…`): one in the target folder is reused, and
 *    so is one elsewhere (the service keeps one asset per content: its upload would answer
 *    `duplicate` with that very asset), with no upload started;
 * 2. otherwise POST /v1/asset-uploads declares the file; a `duplicate` answer (the bytes arrived
 *    meanwhile) ends there too;
 * 3. each part is PUT, raw, to its presigned URL with no API key; a URL that expired (403) is
 *    refreshed once through POST …/parts; a part storage already holds is not sent again;
 * 4. POST …/confirmations with every part's ETag creates the asset.
 * The contract takes no Idempotency-Key on these operations; the sha256 is what makes a repeat
 * harmless: a declaration whose answer was lost is declared again (a stray upload record only
 * expires), and a confirmation is repeatable by contract (200 with the same asset).
 */

const PART_ATTEMPTS = 3
const PART_RETRY_MS = 200

export interface UploadRequest {
  /** Asked only when bytes must be sent: a remote file is not fetched for an asset found. */
  file: () => Promise<{ path: string; size: number }>
  ref: MediaRef
  filename: string
  folderId: string | null
}

export interface UploadResult {
  assetId: string
  /** How the asset came to be: found by its sha256, answered as a duplicate, or uploaded. */
  how: 'found' | 'duplicate' | 'uploaded'
  /** The folder of the asset found, when it was found elsewhere than the target folder. */
  foundIn?: string | null
}

/** `image/png; charset=x` → `image/png`, in the form the contract's pattern accepts. */
function contentTypeOf(ref: MediaRef): string {
  const essence = ref.content_type.split(';')[0]?.trim().toLowerCase() ?? ''
  return /^[\w.+-]+\/[\w.+-]+$/.test(essence) ? essence : 'application/octet-stream'
}

/** An asset of the organization with these bytes, preferring one in `folderId`. */
export async function findAssetBySha256(
  service: ServiceClient,
  sha256: string,
  folderId: string | null,
  signal: AbortSignal,
): Promise<Asset | null> {
  const page = await service.get('/v1/assets', {
    params: { query: { q: `sha256=${sha256}`, limit: 100, sort_by: 'created_at:asc' } },
    signal,
  })
  const live = page.items.filter((asset) => asset.deleted_at === null)
  return live.find((asset) => asset.folder_id === folderId) ?? live[0] ?? null
}

/** A POST whose repeat is harmless, sent once more when its answer was lost. */
async function repeatable<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send()
  } catch (error) {
    if (isServiceError(error) && error.outcomeUnknown && error.code !== 'ABORTED') return send()
    throw error
  }
}

async function readPart(path: string, offset: number, length: number): Promise<Buffer> {
  const handle = await open(path, 'r')
  try {
    const bytes = Buffer.alloc(length)
    const { bytesRead } = await handle.read(bytes, 0, length, offset)
    return bytesRead === length ? bytes : bytes.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

type PutOutcome = { etag: string } | { expired: true }

async function putPart(run: BuiltinRun, url: string, bytes: Buffer): Promise<PutOutcome> {
  let lastError: unknown = null
  for (let attempt = 1; attempt <= PART_ATTEMPTS; attempt++) {
    throwIfAborted(run.signal)
    try {
      const response = await run.deps.fetch(url, {
        method: 'PUT',
        body: bytes,
        headers: { 'Content-Type': 'application/octet-stream' },
        signal: run.signal,
      })
      await response.body?.cancel().catch(() => undefined)
      if (response.status === 403) return { expired: true }
      const etag = response.headers.get('etag')
      if (response.ok && etag) return { etag }
      lastError = new Error(`storage answered HTTP ${response.status}`)
      // Other 4xx are not going to change by asking again.
      if (response.status < 500 && response.status !== 429) break
    } catch (error) {
      if (run.signal.aborted) throw abortedError(run.signal)
      lastError = error
    }
    if (attempt < PART_ATTEMPTS) {
      await sleep(PART_RETRY_MS * 2 ** (attempt - 1), undefined, { signal: run.signal }).catch(
        () => {
          throw abortedError(run.signal)
        },
      )
    }
  }
  throw new BuiltinError(
    'UPLOAD_FAILED',
    `A part of the upload could not be sent to storage (${reasonOf(lastError)}); run the node again later.`,
    { cause: lastError },
  )
}

async function sendParts(
  run: BuiltinRun,
  service: ServiceClient,
  upload: AssetUpload,
  path: string,
  size: number,
): Promise<{ part_number: number; etag: string }[]> {
  const sent: { part_number: number; etag: string }[] = []
  for (const part of upload.parts) {
    if (part.received && part.etag) {
      sent.push({ part_number: part.part_number, etag: part.etag })
      continue
    }
    const offset = (part.part_number - 1) * upload.part_size
    const bytes = await readPart(path, offset, Math.min(upload.part_size, size - offset))
    let outcome = await putPart(run, part.url, bytes)
    if ('expired' in outcome) {
      const fresh = await service.post('/v1/asset-uploads/{upload_id}/parts', {
        params: { path: { upload_id: upload.id } },
        body: { part_numbers: [part.part_number] },
        signal: run.signal,
      })
      const url = fresh.parts.find((p) => p.part_number === part.part_number)?.url
      outcome = url ? await putPart(run, url, bytes) : { expired: true }
      if ('expired' in outcome) {
        throw new BuiltinError(
          'UPLOAD_FAILED',
          `Storage refused part ${part.part_number} of the upload even with a fresh URL; check the computer's clock and run the node again.`,
        )
      }
    }
    sent.push({ part_number: part.part_number, etag: outcome.etag })
    run.emit({
      type: 'progress',
      fraction: sent.length / Math.max(1, upload.part_count),
      message: `Uploaded part ${sent.length} of ${upload.part_count}`,
    })
  }
  return sent
}

export async function uploadAsset(
  run: BuiltinRun,
  service: ServiceClient,
  request: UploadRequest,
): Promise<UploadResult> {
  const { ref, folderId } = request
  const found = await findAssetBySha256(service, ref.sha256, folderId, run.signal)
  if (found) {
    return found.folder_id === folderId
      ? { assetId: found.id, how: 'found' }
      : { assetId: found.id, how: 'found', foundIn: found.folder_id }
  }
  const file = await request.file()
  throwIfAborted(run.signal)
  const upload = await repeatable(() =>
    service.post('/v1/asset-uploads', {
      body: {
        filename: request.filename,
        content_type: contentTypeOf(ref),
        size_bytes: file.size,
        sha256: ref.sha256,
        folder_id: folderId,
      },
      signal: run.signal,
    }),
  )
  if (upload.status_code === 'duplicate' && upload.duplicate_of_asset_id) {
    return { assetId: upload.duplicate_of_asset_id, how: 'duplicate' }
  }
  const parts = await sendParts(run, service, upload, file.path, file.size)
  throwIfAborted(run.signal)
  const asset = await repeatable(() =>
    service.post('/v1/asset-uploads/{upload_id}/confirmations', {
      params: { path: { upload_id: upload.id } },
      body: { parts },
      signal: run.signal,
    }),
  )
  return { assetId: asset.id, how: 'uploaded' }
}

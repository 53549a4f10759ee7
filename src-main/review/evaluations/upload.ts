import { open } from 'node:fs/promises'
import { basename } from 'node:path'
import type { Asset, AssetUpload } from '../../../src-shared/api'
import { isServiceError, type ServiceClient } from '../../service'
import { hashFile, isUploadScanError, sniffMedia } from '../../uploads'
import { EvaluationReviewError, offline } from './errors'

export interface UploadedImage {
  asset: Asset
  how: 'uploaded' | 'found' | 'duplicate'
}

/**
 * Puts one local image among the organization's assets, so that it can be evaluated by
 * `asset_id` (the service fetches a `generated_image_url` itself, and a file on this computer
 * has none). Bytes the organization already holds are not sent again: the assets are searched
 * by sha256 first, and the service answers a declaration of known bytes `duplicate`. The file
 * goes in parts to the presigned URLs, which carry no API key. Folder uploads, with their
 * ledger and resuming, are `src-main/uploads`; one picture for an evaluation needs neither.
 */
export async function uploadImage(
  client: ServiceClient,
  path: string,
  options: { signal?: AbortSignal; fetch?: typeof fetch } = {},
): Promise<UploadedImage> {
  const { signal } = options
  const media = await readable(() => sniffMedia(path))
  if (media?.mediaType !== 'image') {
    throw new EvaluationReviewError(
      'NOT_AN_IMAGE',
      `${path} is not an image (PNG, JPEG, WebP, GIF…); evaluations judge images. Pick an image file.`,
    )
  }
  const hash = await readable(() => hashFile(path, signal ? { signal } : {}))
  try {
    const known = await client.get('/v1/assets', {
      params: { query: { q: `sha256=${hash.sha256}`, limit: 10 } },
      ...(signal ? { signal } : {}),
    })
    const found = known.items.find((a) => a.deleted_at === null && a.status_code === 'ready')
    if (found) return { asset: found, how: 'found' }

    const upload = await client.post('/v1/asset-uploads', {
      body: {
        filename: basename(path),
        content_type: media.contentType,
        size_bytes: hash.sizeBytes,
        sha256: hash.sha256,
        folder_id: null,
      },
      ...(signal ? { signal } : {}),
    })
    if (upload.status_code === 'duplicate' && upload.duplicate_of_asset_id) {
      const asset = await client.get('/v1/assets/{asset_id}', {
        params: { path: { asset_id: upload.duplicate_of_asset_id } },
        ...(signal ? { signal } : {}),
      })
      return { asset, how: 'duplicate' }
    }
    const parts = await sendParts(client, upload, path, hash.sizeBytes, options)
    const asset = await client.post('/v1/asset-uploads/{upload_id}/confirmations', {
      params: { path: { upload_id: upload.id } },
      body: { parts },
      ...(signal ? { signal } : {}),
    })
    return { asset, how: 'uploaded' }
  } catch (error) {
    if (isServiceError(error) && error.status === 0 && error.code !== 'ABORTED') {
      throw offline(`${basename(path)} could not be uploaded for evaluation`)
    }
    throw error
  }
}

async function readable<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (isUploadScanError(error)) {
      throw new EvaluationReviewError('FILE_NOT_READABLE', error.message, { cause: error })
    }
    throw error
  }
}

async function sendParts(
  client: ServiceClient,
  upload: AssetUpload,
  path: string,
  size: number,
  options: { signal?: AbortSignal; fetch?: typeof fetch },
): Promise<{ part_number: number; etag: string }[]> {
  const send = options.fetch ?? fetch
  const sent: { part_number: number; etag: string }[] = []
  const handle = await open(path, 'r')
  try {
    for (const part of upload.parts) {
      if (part.received && part.etag) {
        sent.push({ part_number: part.part_number, etag: part.etag })
        continue
      }
      const offset = (part.part_number - 1) * upload.part_size
      const length = Math.min(upload.part_size, size - offset)
      const bytes = Buffer.alloc(length)
      await handle.read(bytes, 0, length, offset)
      let etag = await putPart(send, part.url, bytes, options.signal)
      if (etag === null) {
        // A presigned URL expires: one fresh URL, then storage's refusal is final.
        const fresh = await client.post('/v1/asset-uploads/{upload_id}/parts', {
          params: { path: { upload_id: upload.id } },
          body: { part_numbers: [part.part_number] },
          ...(options.signal ? { signal: options.signal } : {}),
        })
        const url = fresh.parts.find((p) => p.part_number === part.part_number)?.url
        etag = url ? await putPart(send, url, bytes, options.signal) : null
      }
      if (etag === null) {
        throw new EvaluationReviewError(
          'UPLOAD_FAILED',
          `Storage refused part ${String(part.part_number)} of ${basename(path)}; check this computer's clock, then submit again.`,
        )
      }
      sent.push({ part_number: part.part_number, etag })
    }
  } finally {
    await handle.close()
  }
  return sent
}

/** The part's ETag, or null when storage refused the URL (expired). */
async function putPart(
  send: typeof fetch,
  url: string,
  bytes: Buffer,
  signal: AbortSignal | undefined,
): Promise<string | null> {
  let response: Response
  try {
    response = await send(url, {
      method: 'PUT',
      body: bytes,
      headers: { 'Content-Type': 'application/octet-stream' },
      ...(signal ? { signal } : {}),
    })
  } catch (error) {
    if (signal?.aborted) throw error
    throw offline('the image could not be sent to storage')
  }
  await response.body?.cancel().catch(() => undefined)
  if (response.status === 403) return null
  const etag = response.headers.get('etag')
  if (!response.ok || !etag) {
    throw new EvaluationReviewError(
      'UPLOAD_FAILED',
      `Storage answered HTTP ${String(response.status)} to a part of the image; submit again in a moment.`,
    )
  }
  return etag
}

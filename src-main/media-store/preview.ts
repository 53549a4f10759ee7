import { readFile } from 'node:fs/promises'
import { MediaStoreError } from './errors'
import type { MediaStore } from './store'

/** The largest preview a window asks for; what a canvas node or an inspector shows. */
export const MAX_PREVIEW_SIZE = 1024

export interface PreviewRequest {
  sha256: string
  /** Where the bytes can be fetched when the store does not have them (a presigned URL). */
  url?: string | undefined
  /** The longest side in pixels (default 256). */
  size?: number | undefined
  signal?: AbortSignal | undefined
}

export interface Preview {
  /** A `data:image/webp;base64,…` URL: the window's CSP allows data: images and nothing remote. */
  dataUrl: string
  sha256: string
}

/**
 * A small WebP of a stored image as a data URL, for a window whose CSP loads no remote image:
 * the file comes from the media store, downloaded first (checked against its sha256) when the
 * store does not hold it, and the thumbnail is made once and kept. Offline, whatever the store
 * holds still shows; an image it never held answers NOT_FOUND.
 */
export async function previewOf(media: MediaStore, request: PreviewRequest): Promise<Preview> {
  const sha256 = request.sha256.toLowerCase()
  const size = request.size ?? 256
  if (!media.has(sha256)) {
    if (request.url === undefined) {
      throw new MediaStoreError(
        'NOT_FOUND',
        'This image is not on this machine and has no address to fetch it from; sync, or run the node again.',
        { sha256 },
      )
    }
    await media.download(request.url, {
      expectedSha256: sha256,
      kind: 'output',
      ...(request.signal ? { signal: request.signal } : {}),
    })
  }
  // A video or an unreadable file answers NOT_AN_IMAGE: nothing to picture.
  const thumbnail = await media.thumbnail(sha256, { size })
  const bytes = await readFile(media.path(thumbnail.sha256))
  return { dataUrl: `data:image/webp;base64,${bytes.toString('base64')}`, sha256 }
}

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
  /**
   * A `data:image/webp;base64,…` URL: the window's CSP allows data: images and nothing remote.
   * An animated WebP for an animated image (a model's short video), a still one otherwise.
   */
  dataUrl: string
  sha256: string
}

/**
 * A small WebP of a stored image as a data URL, for a window whose CSP loads no remote image:
 * the file comes from the media store, downloaded first (checked against its sha256) when the
 * store does not hold it, and the thumbnail is made once and kept. An animated WebP or GIF (how
 * the service's models give a short video) keeps moving: its preview is an animated WebP,
 * bounded in frames, pixels and bytes (`makeThumbnail`). Offline, whatever the store holds still
 * shows; an image it never held answers NOT_FOUND.
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
  // A video file (MP4) or an unreadable one answers NOT_AN_IMAGE: nothing to picture.
  const thumbnail = await media.thumbnail(sha256, { size, animated: true })
  const bytes = await readFile(media.path(thumbnail.sha256))
  return { dataUrl: `data:image/webp;base64,${bytes.toString('base64')}`, sha256 }
}

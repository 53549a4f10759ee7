import { sharp } from '../native'
import { MediaStoreError } from './errors'

export const DEFAULT_THUMBNAIL_SIZE = 256
export const MIN_THUMBNAIL_SIZE = 16
export const MAX_THUMBNAIL_SIZE = 2048

/**
 * Bounds of an animated thumbnail: at most this many frames (the first ones: the sandbox's
 * longest animation, 4 s at 24 fps, has 96), at most this many pixels over all its frames (the
 * frames are made smaller to fit: 96 frames of 1024² become 500²), and at most this many bytes
 * (it crosses the IPC boundary as a data URL); past the last, the first frame is shown instead.
 */
export const MAX_ANIMATED_FRAMES = 96
export const MAX_ANIMATED_PIXELS = 24_000_000
export const MAX_ANIMATED_BYTES = 4 * 1024 * 1024

export interface ThumbnailOptions {
  /**
   * Keep an animated image (animated WebP or GIF, as a model's short video comes) moving: an
   * animated WebP of its first frames, bounded as above. A still image is thumbnailed the same
   * either way.
   */
  animated?: boolean
}

/**
 * The box (longest side, in pixels) each frame of an animated thumbnail fits in: `size`, made
 * smaller when the frames together would pass MAX_ANIMATED_PIXELS, never past the frame's own.
 */
export function animatedFrameBox(
  width: number,
  frameHeight: number,
  frames: number,
  size: number,
): number {
  const longest = Math.max(width, frameHeight)
  const budget = Math.sqrt(MAX_ANIMATED_PIXELS / (frames * width * frameHeight))
  return Math.max(1, Math.floor(longest * Math.min(1, size / longest, budget)))
}

/**
 * An animated WebP of an animated image that fits inside `size`×`size`, or null when the image
 * has a single frame, its thumbnail would be too large, or it cannot be read as an animation
 * (the still path then decides what the file is). sharp keeps the delays and the loop count.
 */
async function animatedThumbnail(file: string, size: number): Promise<Buffer | null> {
  const meta = await sharp(file, { animated: true }).metadata()
  const pages = meta.pages ?? 1
  const frameHeight = meta.pageHeight ?? meta.height
  if (pages < 2 || !meta.width || !frameHeight) return null
  const frames = Math.min(pages, MAX_ANIMATED_FRAMES)
  const box = animatedFrameBox(meta.width, frameHeight, frames, size)
  // `pages` reads only the first frames; resize applies to each frame.
  const bytes = await sharp(file, { pages: frames })
    .resize(box, box, { fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 75, effort: 2 })
    .toBuffer()
  return bytes.length <= MAX_ANIMATED_BYTES ? bytes : null
}

/**
 * A WebP thumbnail that fits inside `size`×`size`: turned upright from its EXIF orientation
 * (cameras store portraits sideways), first frame only for animated images unless `animated`
 * asks for them moving, never enlarged. Read from the path so libvips can shrink large JPEGs
 * while decoding instead of holding them.
 */
export async function makeThumbnail(
  file: string,
  size: number,
  sha256: string,
  options: ThumbnailOptions = {},
): Promise<Buffer> {
  if (options.animated) {
    // Anything that goes wrong here (a frame that will not decode, a pixel bomb) leaves the
    // still thumbnail, which names the failure when there is one.
    const moving = await animatedThumbnail(file, size).catch(() => null)
    if (moving) return moving
  }
  // `animated: false` reads one page, the first; sharp's pixel limit guards against bombs.
  const input = () => sharp(file, { animated: false, page: 0 })
  let width: number | undefined
  try {
    ;({ width } = await input().metadata())
  } catch (error) {
    throw new MediaStoreError(
      'NOT_AN_IMAGE',
      `The stored file ${sha256} is not an image that can be thumbnailed.`,
      { sha256 },
      { cause: error },
    )
  }
  if (!width) {
    throw new MediaStoreError('NOT_AN_IMAGE', `The stored file ${sha256} has no pixels.`, {
      sha256,
    })
  }
  try {
    return await input()
      .autoOrient()
      .resize(size, size, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer()
  } catch (error) {
    throw new MediaStoreError(
      'THUMBNAIL_FAILED',
      `The image ${sha256} could not be thumbnailed: it may be damaged.`,
      { sha256 },
      { cause: error },
    )
  }
}

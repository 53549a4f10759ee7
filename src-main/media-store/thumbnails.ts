import sharp from 'sharp'
import { MediaStoreError } from './errors'

export const DEFAULT_THUMBNAIL_SIZE = 256
export const MIN_THUMBNAIL_SIZE = 16
export const MAX_THUMBNAIL_SIZE = 2048

/**
 * A WebP thumbnail that fits inside `size`×`size`: turned upright from its EXIF orientation
 * (cameras store portraits sideways), first frame only for animated images, never enlarged.
 * Read from the path so libvips can shrink large JPEGs while decoding instead of holding them.
 */
export async function makeThumbnail(file: string, size: number, sha256: string): Promise<Buffer> {
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

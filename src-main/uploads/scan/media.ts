import { open } from 'node:fs/promises'
import { extname } from 'node:path'
import { fileTypeFromBuffer } from 'file-type'
import { fileError } from './errors'
import { openRegularFile, READ_FLAGS } from './files'

export type SniffedMediaType = 'image' | 'video'

export interface SniffedMedia {
  /** The content type the bytes show, e.g. image/jpeg for a JPEG named `.png`. */
  contentType: string
  mediaType: SniffedMediaType
}

/** file-type's own sample size: its detectors are written to decide within it. */
const HEAD_BYTES = 4100

/**
 * The pictures and movies an asset library takes. An allowlist rather than every `image/*` or
 * `video/*` file-type can name: that also covers camera RAW, Photoshop and GIMP projects, icons,
 * GPU textures and CAD drawings (and file-type reports SQLite databases as image/x-xcf), which
 * would upload as assets nothing can show.
 */
const MEDIA = new Map<string, SniffedMediaType>([
  ['image/png', 'image'],
  ['image/apng', 'image'],
  ['image/jpeg', 'image'],
  ['image/gif', 'image'],
  ['image/webp', 'image'],
  ['image/avif', 'image'],
  ['image/heic', 'image'],
  ['image/heic-sequence', 'image'],
  ['image/heif', 'image'],
  ['image/heif-sequence', 'image'],
  ['image/tiff', 'image'],
  ['image/bmp', 'image'],
  ['image/jxl', 'image'],
  ['video/mp4', 'video'],
  ['video/x-m4v', 'video'],
  ['video/quicktime', 'video'],
  ['video/webm', 'video'],
  ['video/matroska', 'video'],
  ['video/3gpp', 'video'],
  ['video/3gpp2', 'video'],
  ['video/vnd.avi', 'video'],
  ['video/mpeg', 'video'],
  ['video/mp2t', 'video'],
  ['video/ogg', 'video'],
])

/** An XML prolog, comments and an SVG doctype may come before the root `<svg` element. */
const SVG_START =
  /^\uFEFF?\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE\s+svg[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i

async function detect(path: string, head: Buffer): Promise<SniffedMedia | null> {
  const found = await fileTypeFromBuffer(head)
  const mediaType = found ? MEDIA.get(found.mime) : undefined
  if (found && mediaType) return { contentType: found.mime, mediaType }
  // SVG is text, which no magic number tells apart: only then does the name count, and only
  // when the text opens like an SVG document (file-type calls an `<?xml` start plain XML).
  const text = found === undefined || found.mime === 'application/xml'
  if (text && extname(path).toLowerCase() === '.svg') {
    if (SVG_START.test(head.toString('utf8')))
      return { contentType: 'image/svg+xml', mediaType: 'image' }
  }
  return null
}

/**
 * What the file's first bytes say it is; the system's errors are thrown as they are (the scan
 * turns them into problems, `sniffMedia` into an UploadScanError). `listedSize` is the size a
 * stat of the path just found, for a file known to be a regular one: the descriptor is then not
 * stat'ed again (one system call less a file in a scan of thousands). Should the path have
 * become something else meanwhile, the non-blocking open and the read fail or read nothing.
 */
export async function sniffFile(path: string, listedSize?: number): Promise<SniffedMedia | null> {
  const { handle, size } =
    listedSize === undefined
      ? await openRegularFile(path).then(({ handle, stats }) => ({ handle, size: stats.size }))
      : { handle: await open(path, READ_FLAGS), size: listedSize }
  try {
    const head = Buffer.alloc(Math.min(HEAD_BYTES, size))
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    return await detect(path, head.subarray(0, bytesRead))
  } finally {
    await handle.close()
  }
}

/**
 * Whether a file is an image or a video, by its content: only its first 4100 bytes are read.
 * Null for anything else (text, PDF, archives, a `.png` that holds text). The extension is
 * consulted for SVG only. Throws UploadScanError FILE_MISSING, NOT_A_FILE or FILE_UNREADABLE.
 */
export async function sniffMedia(path: string): Promise<SniffedMedia | null> {
  try {
    return await sniffFile(path)
  } catch (error) {
    throw fileError(path, error)
  }
}

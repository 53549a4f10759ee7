import { open } from 'node:fs/promises'
import type { Metadata } from 'sharp'
import { sharp } from '../../native'
import { readIsoMedia, readMatroska, readWav, UNKNOWN, type Dimensions } from './containers'
import type { MediaType } from './types'

/** What the bytes are, by their magic numbers; the declared content type is only a fallback. */
export interface Sniffed {
  format: string
  content_type: string
  media_type: MediaType
}

const HEAD_BYTES = 64 * 1024
/** Matroska keeps Info and Tracks near the start, but after the SeekHead and sometimes tags. */
const MATROSKA_HEAD_BYTES = 1024 * 1024
const THUMBNAIL_BOX = 256
export const THUMBNAIL_TYPE = 'image/webp'

export interface Thumbnail {
  bytes: Buffer
  width: number
  height: number
}

/**
 * The thumbnail of an image (a path or its bytes): upright, inside THUMBNAIL_BOX² and never
 * enlarged, as WebP. The same for a thumbnail made at upload and one made on request.
 */
export async function renderThumbnail(input: string | Buffer): Promise<Thumbnail> {
  const { data, info } = await sharp(input)
    .autoOrient()
    .resize(THUMBNAIL_BOX, THUMBNAIL_BOX, { fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 })
    .toBuffer({ resolveWithObject: true })
  return { bytes: data, width: info.width, height: info.height }
}

const SVG_START =
  /^\uFEFF?\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE\s+svg[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i

const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1'])

function sniffIsoMedia(head: Buffer): Sniffed {
  const ftypSize = Math.min(head.readUInt32BE(0), head.length)
  const brands: string[] = []
  for (let offset = 8; offset + 4 <= ftypSize; offset += offset === 8 ? 8 : 4) {
    brands.push(head.toString('latin1', offset, offset + 4))
  }
  const major = brands[0] ?? ''
  if (brands.includes('avif') || brands.includes('avis'))
    return { format: 'avif', content_type: 'image/avif', media_type: 'image' }
  if (HEIF_BRANDS.has(major))
    return { format: 'heic', content_type: 'image/heic', media_type: 'image' }
  if (major === 'qt  ')
    return { format: 'mov', content_type: 'video/quicktime', media_type: 'video' }
  if (major === 'M4A ' || major === 'M4B ')
    return { format: 'm4a', content_type: 'audio/mp4', media_type: 'audio' }
  if (major.startsWith('3g'))
    return { format: '3gp', content_type: 'video/3gpp', media_type: 'video' }
  return { format: 'mp4', content_type: 'video/mp4', media_type: 'video' }
}

export function sniff(head: Buffer): Sniffed | null {
  const ascii = (start: number, end: number) => head.toString('latin1', start, end)
  const byte = (index: number) => head[index] ?? -1
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')))
    return { format: 'png', content_type: 'image/png', media_type: 'image' }
  if (byte(0) === 0xff && byte(1) === 0xd8 && byte(2) === 0xff)
    return { format: 'jpeg', content_type: 'image/jpeg', media_type: 'image' }
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')
    return { format: 'gif', content_type: 'image/gif', media_type: 'image' }
  if (ascii(0, 4) === 'RIFF') {
    const kind = ascii(8, 12)
    if (kind === 'WEBP') return { format: 'webp', content_type: 'image/webp', media_type: 'image' }
    if (kind === 'WAVE') return { format: 'wav', content_type: 'audio/wav', media_type: 'audio' }
    if (kind === 'AVI ')
      return { format: 'avi', content_type: 'video/x-msvideo', media_type: 'video' }
  }
  if (ascii(0, 4) === 'II*\0' || ascii(0, 4) === 'MM\0*')
    return { format: 'tiff', content_type: 'image/tiff', media_type: 'image' }
  if (
    ascii(0, 2) === 'BM' &&
    head.length >= 26 &&
    [12, 40, 52, 56, 108, 124].includes(head.readUInt32LE(14))
  )
    return { format: 'bmp', content_type: 'image/bmp', media_type: 'image' }
  if (head.length >= 12 && ascii(4, 8) === 'ftyp') return sniffIsoMedia(head)
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) {
    return ascii(0, 64).includes('webm')
      ? { format: 'webm', content_type: 'video/webm', media_type: 'video' }
      : { format: 'mkv', content_type: 'video/x-matroska', media_type: 'video' }
  }
  if (ascii(0, 4) === 'OggS')
    return { format: 'ogg', content_type: 'audio/ogg', media_type: 'audio' }
  if (ascii(0, 4) === 'fLaC')
    return { format: 'flac', content_type: 'audio/flac', media_type: 'audio' }
  if (ascii(0, 3) === 'ID3')
    return { format: 'mp3', content_type: 'audio/mpeg', media_type: 'audio' }
  if (byte(0) === 0xff && (byte(1) & 0xe0) === 0xe0) {
    // An MPEG audio frame header: layer bits 00 are AAC in ADTS framing, anything else MP3.
    return (byte(1) & 0x06) === 0
      ? { format: 'aac', content_type: 'audio/aac', media_type: 'audio' }
      : { format: 'mp3', content_type: 'audio/mpeg', media_type: 'audio' }
  }
  if (ascii(0, 5) === '%PDF-')
    return { format: 'pdf', content_type: 'application/pdf', media_type: 'other' }
  if (SVG_START.test(head.toString('utf8', 0, Math.min(head.length, 4096))))
    return { format: 'svg', content_type: 'image/svg+xml', media_type: 'image' }
  return null
}

export interface Inspection extends Dimensions {
  media_type: MediaType
  content_type: string
  status_code: 'ready' | 'failed'
  /** Goes into the asset's metadata. */
  details: Record<string, unknown>
  /**
   * An image whose header libvips reads, so that a thumbnail can be made of it (false when one
   * was made now and failed).
   */
  previewable: boolean
  /** Made when asked for (`InspectOptions.thumbnail`), and when it could be made. */
  thumbnail: Thumbnail | null
}

export interface InspectOptions {
  /**
   * Make the thumbnail of an image now (the default). The three-step upload does not: it makes
   * an asset's thumbnail when it is first requested (see `thumbnails.ts`).
   */
  thumbnail?: boolean
  /** The file's bytes, when the caller holds all of them: an image is then read from these. */
  bytes?: Buffer
}

/** Formats libvips decodes in the sandbox; the others are stored and sized from their header. */
const DECODABLE = new Set(['png', 'jpeg', 'gif', 'webp', 'tiff', 'avif', 'heic', 'svg'])

async function inspectImage(
  input: string | Buffer,
  sniffed: Sniffed,
  head: Buffer,
  makeThumbnail: boolean,
): Promise<Inspection> {
  const base = { media_type: 'image' as const, content_type: sniffed.content_type }
  if (!DECODABLE.has(sniffed.format)) {
    const bmp = sniffed.format === 'bmp'
    return {
      ...base,
      width: bmp ? Math.abs(head.readInt32LE(18)) : null,
      height: bmp ? Math.abs(head.readInt32LE(22)) : null,
      duration_ms: null,
      status_code: 'ready',
      details: { format: sniffed.format },
      previewable: false,
      thumbnail: null,
    }
  }
  let metadata: Metadata
  try {
    metadata = await sharp(input).metadata()
  } catch (error) {
    return {
      ...base,
      ...UNKNOWN,
      status_code: 'failed',
      details: {
        format: sniffed.format,
        failure_message: `The file looks like ${sniffed.format.toUpperCase()} but does not decode: ${(error as Error).message}`,
      },
      previewable: false,
      thumbnail: null,
    }
  }
  const frames = metadata.pages ?? 1
  const delays = metadata.delay ?? []
  const details: Record<string, unknown> = {
    format: sniffed.format,
    has_alpha: metadata.hasAlpha,
    ...(frames > 1 ? { frames } : {}),
  }
  let thumbnail: Thumbnail | null = null
  if (makeThumbnail) {
    try {
      thumbnail = await renderThumbnail(input)
    } catch (error) {
      // The size is known and the bytes are kept; only the preview is missing.
      details.thumbnail_error = (error as Error).message
    }
  }
  return {
    ...base,
    width: metadata.autoOrient.width,
    height: metadata.autoOrient.height,
    duration_ms: frames > 1 && delays.length > 0 ? delays.reduce((a, b) => a + b, 0) : null,
    status_code: 'ready',
    details,
    previewable: makeThumbnail ? thumbnail !== null : true,
    thumbnail,
  }
}

/**
 * Sniffs the file, reads its size and duration where cheap and makes a thumbnail of images (unless
 * told not to). Bytes no magic number recognises keep the declared content type, as media type
 * `other`.
 */
export async function inspectFile(
  path: string,
  size: number,
  declared: string,
  options: InspectOptions = {},
): Promise<Inspection> {
  const makeThumbnail = options.thumbnail ?? true
  if (options.bytes?.length === size) {
    const sniffed = sniff(options.bytes.subarray(0, HEAD_BYTES))
    // Other kinds are read from the file, below: their readers take a file handle.
    if (sniffed?.media_type === 'image') {
      return inspectImage(options.bytes, sniffed, options.bytes, makeThumbnail)
    }
  }
  const file = await open(path, 'r')
  try {
    const head = Buffer.alloc(Math.min(size, HEAD_BYTES))
    await file.read(head, 0, head.length, 0)
    const sniffed = sniff(head)
    if (!sniffed) {
      return {
        media_type: 'other',
        content_type: declared,
        ...UNKNOWN,
        status_code: 'ready',
        details: { format: null },
        previewable: false,
        thumbnail: null,
      }
    }
    if (sniffed.media_type === 'image') {
      return await inspectImage(path, sniffed, head, makeThumbnail)
    }
    let dimensions = UNKNOWN
    if (['mp4', 'mov', 'm4a', '3gp'].includes(sniffed.format)) {
      dimensions = await readIsoMedia(file, size)
    } else if (sniffed.format === 'webm' || sniffed.format === 'mkv') {
      const more = Buffer.alloc(Math.min(size, MATROSKA_HEAD_BYTES))
      await file.read(more, 0, more.length, 0)
      dimensions = readMatroska(more)
    } else if (sniffed.format === 'wav') {
      dimensions = readWav(head)
    }
    return {
      media_type: sniffed.media_type,
      content_type: sniffed.content_type,
      ...dimensions,
      status_code: 'ready',
      details: { format: sniffed.format },
      previewable: false,
      thumbnail: null,
    }
  } finally {
    await file.close()
  }
}

import { createHash } from 'node:crypto'
import {
  PROVENANCE_FORMAT,
  PROVENANCE_KEYWORD,
  PROVENANCE_VERSION,
  provenanceRecordSchema,
  type ProvenanceReading,
  type ProvenanceRecord,
} from '../../src-shared/domain/provenance'
import { ProvenanceError } from './errors'
import { readExifText } from './exif'
import { atelierJpegXmp, embedJpeg, isJpeg, readJpegSegments, stripJpeg } from './jpeg'
import { mediaTypeOf, nameOfType } from './media-type'
import {
  PNG_TEXT_TYPES,
  concat,
  decodePngText,
  encodeITxt,
  isPng,
  readPngChunks,
  type PngChunk,
} from './png'
import { atelierWebpXmp, embedWebp, isWebp, readWebpChunks, stripWebp } from './webp'
import { buildXmpPacket, recordTextOf } from './xmp'

/**
 * Provenance inside the picture files Atelier writes (issue 20): the record goes in as a PNG
 * iTXt chunk or as XMP in WebP and JPEG, comes out again, and taking it out gives back the
 * file exactly as it was made, so its sha256 tells whether the picture was edited since.
 * Pure and synchronous: bytes in, bytes out.
 */
export { ProvenanceError, type ProvenanceErrorCode } from './errors'
export { mediaTypeOf } from './media-type'
export { readWebpChunks, readWebpXmp, type WebpChunk } from './webp'

const NONE_MESSAGE = 'This file carries no Atelier record.'
const CHANGED_MESSAGE =
  'This picture was changed after Atelier made it; its record is shown as it was written, not trusted.'
/** The text chunks ComfyUI writes into its pictures. */
const COMFYUI_KEYS = ['prompt', 'workflow'] as const

/** Ours is iTXt, but a tool that re-saves text chunks may have made it tEXt or zTXt. */
const isOurKeyword = (chunk: PngChunk) =>
  PNG_TEXT_TYPES.has(chunk.type) &&
  new TextDecoder('latin1').decode(chunk.data.subarray(0, PROVENANCE_KEYWORD.length + 1)) ===
    `${PROVENANCE_KEYWORD}\0`

/** Every tEXt, zTXt and iTXt chunk of a PNG by keyword (the first one wins a repeated keyword). */
export function readPngTextChunks(bytes: Uint8Array): Record<string, string> {
  const found: Record<string, string> = {}
  for (const chunk of readPngChunks(bytes)) {
    if (!PNG_TEXT_TYPES.has(chunk.type)) continue
    const text = decodePngText(chunk)
    if (text && !(text.keyword in found)) found[text.keyword] = text.text
  }
  return found
}

/**
 * The text a picture carries by key, whatever the format: a PNG's text chunks, the `key:value`
 * text tags of a WebP's or JPEG's EXIF (where ComfyUI saves `prompt` and `workflow` in WebP).
 * Empty for a file with none, or of another type.
 */
export function readImageTextChunks(bytes: Uint8Array): Record<string, string> {
  if (isPng(bytes)) return readPngTextChunks(bytes)
  if (isWebp(bytes)) {
    const exif = readWebpChunks(bytes).find((chunk) => chunk.type === 'EXIF')
    return exif ? readExifText(exif.data) : {}
  }
  if (isJpeg(bytes)) {
    const exif = readJpegSegments(bytes).find(
      (s) =>
        s.marker === 0xe1 && new TextDecoder('latin1').decode(s.data.subarray(0, 6)) === 'Exif\0\0',
    )
    return exif ? readExifText(exif.data) : {}
  }
  return {}
}

function unsupported(bytes: Uint8Array): ProvenanceError {
  return new ProvenanceError(
    'PROVENANCE_UNSUPPORTED_TYPE',
    `A record can only go into PNG, WebP or JPEG pictures, and this file is ${nameOfType(mediaTypeOf(bytes))}.`,
  )
}

function stripPng(bytes: Uint8Array): Uint8Array {
  const ours = readPngChunks(bytes).filter(isOurKeyword)
  if (ours.length === 0) return bytes
  const kept: Uint8Array[] = []
  let at = 0
  for (const chunk of ours) {
    kept.push(bytes.subarray(at, chunk.start))
    at = chunk.end
  }
  kept.push(bytes.subarray(at))
  return concat(kept)
}

/** The picture as it was made: the file with its Atelier record taken out, byte for byte. */
export function stripProvenance(bytes: Uint8Array): Uint8Array {
  if (isPng(bytes)) return stripPng(bytes)
  if (isWebp(bytes)) return stripWebp(bytes)
  if (isJpeg(bytes)) return stripJpeg(bytes)
  throw unsupported(bytes)
}

/**
 * The same picture with `record` inside as JSON; a record already there is replaced. PNG: one
 * iTXt chunk just before IEND, after the picture data, so a viewer that draws as it reads is
 * not held up by a record that can be as long as the whole flow. WebP and JPEG: XMP.
 */
export function embedProvenance(bytes: Uint8Array, record: ProvenanceRecord): Uint8Array {
  const json = JSON.stringify(record)
  if (isPng(bytes)) {
    const base = stripPng(bytes)
    const end = readPngChunks(base).at(-1) as PngChunk // IEND: readPngChunks throws without it
    return concat([
      base.subarray(0, end.start),
      encodeITxt(PROVENANCE_KEYWORD, json),
      base.subarray(end.start),
    ])
  }
  if (isWebp(bytes)) return embedWebp(stripWebp(bytes), json)
  if (isJpeg(bytes)) return embedJpeg(stripJpeg(bytes), buildXmpPacket(json))
  throw unsupported(bytes)
}

type RecordText = { text: string } | { damaged: string } | null

function recordTextIn(bytes: Uint8Array): RecordText {
  if (isPng(bytes)) {
    const chunk = readPngChunks(bytes).find(isOurKeyword)
    if (!chunk) return null
    if (!chunk.crcOk) return { damaged: "the record's checksum does not match its contents" }
    const text = decodePngText(chunk)
    return text ? { text: text.text } : { damaged: 'the record chunk cannot be read' }
  }
  const packet = isWebp(bytes) ? atelierWebpXmp(bytes) : atelierJpegXmp(bytes)
  if (packet === null) return null
  const text = recordTextOf(packet)
  return text === null ? { damaged: "the record cannot be found in the picture's XMP" } : { text }
}

function damaged(what: string): ProvenanceReading {
  return {
    state: 'damaged',
    message: `This file's Atelier record is damaged (${what}), so where the picture came from cannot be told. The picture itself may be fine.`,
  }
}

function noRecord(bytes: Uint8Array): ProvenanceReading {
  const text = readImageTextChunks(bytes)
  if (COMFYUI_KEYS.some((key) => key in text)) {
    return {
      state: 'none',
      message: `${NONE_MESSAGE} It carries a ComfyUI workflow: \`atelier workflow import FILE\` imports it.`,
    }
  }
  return { state: 'none', message: NONE_MESSAGE }
}

function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const shown = issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || 'the record'}: ${issue.message}`)
  const more = issues.length - shown.length
  return shown.join('; ') + (more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : '')
}

/**
 * What a file says about where it came from: its record, checked against the picture. A file
 * of a type that cannot carry a record reads as `none`; a PNG, WebP or JPEG too broken to read
 * throws a `ProvenanceError` (PROVENANCE_MALFORMED_FILE).
 */
export function readProvenance(bytes: Uint8Array): ProvenanceReading {
  if (!isPng(bytes) && !isWebp(bytes) && !isJpeg(bytes)) {
    return {
      state: 'none',
      message: `${NONE_MESSAGE} Only PNG, WebP and JPEG pictures carry one, and this file is ${nameOfType(mediaTypeOf(bytes))}.`,
    }
  }
  const found = recordTextIn(bytes)
  if (found === null) return noRecord(bytes)
  if ('damaged' in found) return damaged(found.damaged)
  let json: unknown
  try {
    json = JSON.parse(found.text)
  } catch {
    return damaged('its text is not valid JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return damaged('it is not a JSON object')
  }
  const { format, version } = json as { format?: unknown; version?: unknown }
  if (format !== PROVENANCE_FORMAT) {
    return {
      state: 'foreign',
      message: `This file carries a record that is not Atelier's (its format is ${JSON.stringify(format ?? null)}), so it is not read.`,
    }
  }
  if (typeof version === 'number' && version > PROVENANCE_VERSION) {
    return {
      state: 'foreign',
      message: `This file's record was written by a newer Atelier (record version ${version}; this one reads version ${PROVENANCE_VERSION}). Update Atelier to read it.`,
    }
  }
  const parsed = provenanceRecordSchema.safeParse(json)
  if (!parsed.success) return damaged(describeIssues(parsed.error.issues))
  const record = parsed.data
  const made = createHash('sha256').update(stripProvenance(bytes)).digest('hex')
  return made === record.output.sha256
    ? { state: 'intact', record }
    : { state: 'changed', message: CHANGED_MESSAGE, record }
}

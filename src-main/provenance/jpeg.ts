import { concat } from './png'
import { ProvenanceError } from './errors'
import { isAtelierXmp } from './xmp'

/**
 * JPEG segments, from the spec: after SOI (FFD8), markers FFxx each with a big-endian length
 * that counts itself, up to SOS (FFDA), where the picture data starts. XMP lives in an APP1
 * (FFE1) segment that opens with Adobe's namespace and a NUL.
 */
export const XMP_HEADER = 'http://ns.adobe.com/xap/1.0/\0'
const APP1 = 0xe1
/** A segment's length field is 16 bits and counts itself. */
const MAX_SEGMENT_BODY = 0xffff - 2

export interface JpegSegment {
  marker: number
  data: Uint8Array
  start: number
  end: number
}

export function isJpeg(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff
}

/** The segments before the picture data (SOS and what follows are left alone). */
export function readJpegSegments(bytes: Uint8Array): JpegSegment[] {
  if (!isJpeg(bytes)) {
    throw new ProvenanceError('PROVENANCE_MALFORMED_FILE', 'This file is not a JPEG picture.')
  }
  const segments: JpegSegment[] = []
  let at = 2
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) break
    const marker = bytes[at + 1] ?? 0
    if (marker === 0xda || marker === 0xd9) break
    const length = ((bytes[at + 2] ?? 0) << 8) | (bytes[at + 3] ?? 0)
    const end = at + 2 + length
    if (length < 2 || end > bytes.length) break
    segments.push({ marker, data: bytes.subarray(at + 4, end), start: at, end })
    at = end
  }
  return segments
}

function xmpText(segment: JpegSegment): string | null {
  if (segment.marker !== APP1) return null
  const head = new TextDecoder('latin1').decode(segment.data.subarray(0, XMP_HEADER.length))
  return head === XMP_HEADER
    ? new TextDecoder().decode(segment.data.subarray(XMP_HEADER.length))
    : null
}

function atelierSegment(bytes: Uint8Array): { segment: JpegSegment; packet: string } | null {
  for (const segment of readJpegSegments(bytes)) {
    const packet = xmpText(segment)
    if (packet !== null && isAtelierXmp(packet)) return { segment, packet }
  }
  return null
}

/** Our packet's text, or null when the file carries none of ours. */
export function atelierJpegXmp(bytes: Uint8Array): string | null {
  return atelierSegment(bytes)?.packet ?? null
}

/** The file with our APP1 segment taken out again (a pure insertion, so nothing else to undo). */
export function stripJpeg(bytes: Uint8Array): Uint8Array {
  const ours = atelierSegment(bytes)
  if (!ours) return bytes
  return concat([bytes.subarray(0, ours.segment.start), bytes.subarray(ours.segment.end)])
}

/**
 * The file with an APP1 XMP segment of ours, after the leading APP0 (JFIF) and APP1 (Exif, or
 * someone else's XMP, which stays and stays first) segments, where readers look for XMP.
 * `bytes` must carry none of ours (strip it first).
 */
export function embedJpeg(bytes: Uint8Array, packet: string): Uint8Array {
  const body = new TextEncoder().encode(XMP_HEADER + packet)
  if (body.length > MAX_SEGMENT_BODY) {
    throw new ProvenanceError(
      'PROVENANCE_TOO_LARGE',
      `This record is ${body.length} bytes, more than a JPEG's metadata segment holds (${MAX_SEGMENT_BODY}); save the picture as PNG or WebP to keep its record.`,
    )
  }
  let at = 2
  for (const segment of readJpegSegments(bytes)) {
    if (segment.marker !== 0xe0 && segment.marker !== APP1) break
    at = segment.end
  }
  const head = Uint8Array.of(0xff, APP1, (body.length + 2) >> 8, (body.length + 2) & 0xff)
  return concat([bytes.subarray(0, at), head, body, bytes.subarray(at)])
}

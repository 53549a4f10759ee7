import { concat } from './png'
import { ProvenanceError } from './errors'
import { buildXmpPacket, isAtelierXmp, noteOf } from './xmp'

/**
 * WebP's RIFF container, from the spec: `RIFF` size `WEBP`, then chunks (FourCC, little-endian
 * size, data, a pad byte to an even length). Metadata lives in `EXIF` and `XMP ` chunks, which
 * only the extended format (a `VP8X` header with flags) may carry.
 */
export interface WebpChunk {
  type: string
  data: Uint8Array
  start: number
  /** End including the pad byte. */
  end: number
}

const FLAG_XMP = 0x04
const FLAG_ALPHA = 0x10
/** Chunks the spec puts before XMP; ours goes after the last of them, before unknown ones. */
const BEFORE_XMP = new Set(['VP8X', 'ICCP', 'ANIM', 'ANMF', 'ALPH', 'VP8 ', 'VP8L', 'EXIF'])

/** What the embedding changed besides adding its chunk, noted in the packet to undo it exactly. */
const NOTE_ADDED_HEADER = 'addedHeader'
const NOTE_SET_FLAG = 'setXmpFlag'
const NOTE_REPLACED = 'replacedXmp'

const ascii = (bytes: Uint8Array) => String.fromCharCode(...bytes)
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)

export function isWebp(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 12 &&
    ascii(bytes.subarray(0, 4)) === 'RIFF' &&
    ascii(bytes.subarray(8, 12)) === 'WEBP'
  )
}

export function readWebpChunks(bytes: Uint8Array): WebpChunk[] {
  if (!isWebp(bytes)) {
    throw new ProvenanceError('PROVENANCE_MALFORMED_FILE', 'This file is not a WebP picture.')
  }
  const data = view(bytes)
  const riffEnd = Math.min(bytes.length, 8 + data.getUint32(4, true))
  const chunks: WebpChunk[] = []
  let at = 12
  while (at + 8 <= riffEnd) {
    const size = data.getUint32(at + 4, true)
    const dataEnd = at + 8 + size
    if (dataEnd > riffEnd) {
      throw new ProvenanceError(
        'PROVENANCE_MALFORMED_FILE',
        'This WebP picture is cut short; save it again and retry.',
      )
    }
    chunks.push({
      type: ascii(bytes.subarray(at, at + 4)),
      data: bytes.subarray(at + 8, dataEnd),
      start: at,
      end: Math.min(riffEnd, dataEnd + (size % 2)),
    })
    at = dataEnd + (size % 2)
  }
  return chunks
}

function encodeChunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + body.length + (body.length % 2))
  out.set(new TextEncoder().encode(type), 0)
  view(out).setUint32(4, body.length, true)
  out.set(body, 8)
  return out
}

/** The file again from its chunks, with the RIFF size made right; bytes after RIFF kept. */
function assemble(
  bytes: Uint8Array,
  parts: readonly Uint8Array[],
  chunks: WebpChunk[],
): Uint8Array {
  const riffEnd = chunks.at(-1)?.end ?? 12
  const body = concat([bytes.subarray(0, 12), ...parts])
  view(body).setUint32(4, body.length - 8, true)
  return concat([body, bytes.subarray(riffEnd)])
}

/** The XMP packet of a WebP file, whoever wrote it; null when it has none. */
export function readWebpXmp(bytes: Uint8Array): string | null {
  const chunk = readWebpChunks(bytes).find((c) => c.type === 'XMP ')
  return chunk ? new TextDecoder().decode(chunk.data) : null
}

/** The canvas size and alpha of a simple (VP8 or VP8L) WebP, for the VP8X header it gains. */
function simpleCanvas(chunk: WebpChunk): { width: number; height: number; alpha: boolean } {
  const d = chunk.data
  if (chunk.type === 'VP8 ' && d.length >= 10 && d[3] === 0x9d && d[4] === 0x01 && d[5] === 0x2a) {
    const v = view(d)
    return {
      width: v.getUint16(6, true) & 0x3fff,
      height: v.getUint16(8, true) & 0x3fff,
      alpha: false,
    }
  }
  if (chunk.type === 'VP8L' && d.length >= 5 && d[0] === 0x2f) {
    const bits = view(d).getUint32(1, true)
    return {
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
      alpha: ((bits >>> 28) & 1) === 1,
    }
  }
  throw new ProvenanceError(
    'PROVENANCE_MALFORMED_FILE',
    'This WebP picture has an image header that cannot be read; save it again and retry.',
  )
}

function vp8xHeader(canvas: { width: number; height: number; alpha: boolean }): Uint8Array {
  const body = new Uint8Array(10)
  body[0] = FLAG_XMP | (canvas.alpha ? FLAG_ALPHA : 0)
  const v = view(body)
  v.setUint16(4, (canvas.width - 1) & 0xffff, true)
  body[6] = ((canvas.width - 1) >>> 16) & 0xff
  v.setUint16(7, (canvas.height - 1) & 0xffff, true)
  body[9] = ((canvas.height - 1) >>> 16) & 0xff
  return encodeChunk('VP8X', body)
}

function atelierXmpChunk(chunks: WebpChunk[]): WebpChunk | undefined {
  return chunks.find((c) => c.type === 'XMP ' && isAtelierXmp(new TextDecoder().decode(c.data)))
}

/** Our packet's text, or null when the file carries none of ours. */
export function atelierWebpXmp(bytes: Uint8Array): string | null {
  const chunk = atelierXmpChunk(readWebpChunks(bytes))
  return chunk ? new TextDecoder().decode(chunk.data) : null
}

/**
 * The file as it was before our XMP went in: the chunk out, and whatever the embedding noted it
 * changed put back (the VP8X header it added, the flag it set, the XMP packet it replaced).
 */
export function stripWebp(bytes: Uint8Array): Uint8Array {
  const chunks = readWebpChunks(bytes)
  const ours = atelierXmpChunk(chunks)
  if (!ours) return bytes
  const packet = new TextDecoder().decode(ours.data)
  const replaced = noteOf(packet, NOTE_REPLACED)
  const parts: Uint8Array[] = []
  for (const chunk of chunks) {
    const whole = bytes.subarray(chunk.start, chunk.end)
    if (chunk === ours) {
      if (replaced !== null) parts.push(encodeChunk('XMP ', Buffer.from(replaced, 'base64')))
    } else if (chunk.type === 'VP8X' && noteOf(packet, NOTE_ADDED_HEADER) === 'VP8X') {
      // the header was ours: a simple file goes back to simple
    } else if (chunk.type === 'VP8X' && noteOf(packet, NOTE_SET_FLAG) === 'true') {
      const copy = whole.slice()
      copy[8] = (copy[8] ?? 0) & ~FLAG_XMP
      parts.push(copy)
    } else {
      parts.push(whole)
    }
  }
  return assemble(bytes, parts, chunks)
}

/** The file with our XMP packet in it; `bytes` must carry none of ours (strip it first). */
export function embedWebp(bytes: Uint8Array, json: string): Uint8Array {
  const chunks = readWebpChunks(bytes)
  const first = chunks[0]
  if (!first) {
    throw new ProvenanceError('PROVENANCE_MALFORMED_FILE', 'This WebP file holds no picture.')
  }
  const notes: Record<string, string> = {}
  const parts: Uint8Array[] = []
  let header: Uint8Array | undefined
  if (first.type === 'VP8X') {
    if (((first.data[0] ?? 0) & FLAG_XMP) === 0) notes[NOTE_SET_FLAG] = 'true'
  } else {
    header = vp8xHeader(simpleCanvas(first))
    notes[NOTE_ADDED_HEADER] = 'VP8X'
  }
  // Only one XMP chunk is allowed: someone else's is kept inside ours, to be put back on strip.
  const theirs = chunks.find((c) => c.type === 'XMP ')
  if (theirs) notes[NOTE_REPLACED] = Buffer.from(theirs.data).toString('base64')
  const xmp = encodeChunk('XMP ', new TextEncoder().encode(buildXmpPacket(json, notes)))
  const lastBefore = theirs
    ? chunks.indexOf(theirs) - 1
    : chunks.reduce((last, c, i) => (BEFORE_XMP.has(c.type) ? i : last), -1)
  if (header) parts.push(header)
  if (lastBefore < 0) parts.push(xmp)
  chunks.forEach((chunk, i) => {
    if (chunk === theirs) return
    const whole = bytes.subarray(chunk.start, chunk.end)
    if (chunk.type === 'VP8X') {
      const copy = whole.slice()
      copy[8] = (copy[8] ?? 0) | FLAG_XMP
      parts.push(copy)
    } else {
      parts.push(whole)
    }
    if (i === lastBefore) parts.push(xmp)
  })
  return assemble(bytes, parts, chunks)
}

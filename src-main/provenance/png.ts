import { inflateSync } from 'node:zlib'
import { ProvenanceError } from './errors'

/**
 * PNG chunks, from the spec (length, type, data, CRC-32): no chunk library is installed, and
 * the job is a few lines. Node 20 has no `zlib.crc32`, hence the table.
 */
export const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)

export interface PngChunk {
  type: string
  data: Uint8Array
  /** Where the whole chunk (length to CRC) starts and ends in the file. */
  start: number
  end: number
  crcOk: boolean
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

export function crc32(...parts: Uint8Array[]): number {
  let crc = 0xffffffff
  for (const part of parts) {
    for (const byte of part) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8)
  }
  return (crc ^ 0xffffffff) >>> 0
}

export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && PNG_SIGNATURE.every((byte, i) => bytes[i] === byte)
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** Every chunk up to and including IEND; a truncated file is an error, not a guess. */
export function readPngChunks(bytes: Uint8Array): PngChunk[] {
  if (!isPng(bytes)) {
    throw new ProvenanceError('PROVENANCE_MALFORMED_FILE', 'This file is not a PNG picture.')
  }
  const data = view(bytes)
  const chunks: PngChunk[] = []
  let at = PNG_SIGNATURE.length
  while (at + 12 <= bytes.length) {
    const length = data.getUint32(at)
    const end = at + 12 + length
    if (end > bytes.length) break
    const typeBytes = bytes.subarray(at + 4, at + 8)
    const body = bytes.subarray(at + 8, at + 8 + length)
    const type = String.fromCharCode(...typeBytes)
    chunks.push({
      type,
      data: body,
      start: at,
      end,
      crcOk: data.getUint32(at + 8 + length) === crc32(typeBytes, body),
    })
    at = end
    if (type === 'IEND') return chunks
  }
  throw new ProvenanceError(
    'PROVENANCE_MALFORMED_FILE',
    'This PNG picture is cut short (it has no end marker); save it again and retry.',
  )
}

export function encodePngChunk(type: string, body: Uint8Array): Uint8Array {
  const typeBytes = new TextEncoder().encode(type)
  const out = new Uint8Array(12 + body.length)
  const data = view(out)
  data.setUint32(0, body.length)
  out.set(typeBytes, 4)
  out.set(body, 8)
  data.setUint32(8 + body.length, crc32(typeBytes, body))
  return out
}

const latin1 = new TextDecoder('latin1')
const utf8 = new TextDecoder('utf-8')

export interface PngTextChunk {
  keyword: string
  text: string
}

/** One tEXt, zTXt or iTXt chunk as keyword and text; null for a chunk that does not parse. */
export function decodePngText(chunk: PngChunk): PngTextChunk | null {
  const body = chunk.data
  const nul = body.indexOf(0)
  if (nul <= 0) return null
  const keyword = latin1.decode(body.subarray(0, nul))
  try {
    if (chunk.type === 'tEXt') return { keyword, text: latin1.decode(body.subarray(nul + 1)) }
    if (chunk.type === 'zTXt') {
      return { keyword, text: latin1.decode(inflateSync(body.subarray(nul + 2))) }
    }
    if (chunk.type === 'iTXt') {
      const compressed = body[nul + 1] === 1
      const languageEnd = body.indexOf(0, nul + 3)
      const translatedEnd = languageEnd < 0 ? -1 : body.indexOf(0, languageEnd + 1)
      if (translatedEnd < 0) return null
      const text = body.subarray(translatedEnd + 1)
      return { keyword, text: utf8.decode(compressed ? inflateSync(text) : text) }
    }
  } catch {
    return null
  }
  return null
}

export const PNG_TEXT_TYPES = new Set(['tEXt', 'zTXt', 'iTXt'])

/** An uncompressed iTXt chunk: UTF-8 text, no language, readable by any PNG tool. */
export function encodeITxt(keyword: string, text: string): Uint8Array {
  const encoder = new TextEncoder()
  const key = encoder.encode(keyword)
  const value = encoder.encode(text)
  // keyword \0, compression flag 0, method 0, empty language \0, empty translated keyword \0
  const body = new Uint8Array(key.length + 5 + value.length)
  body.set(key, 0)
  body.set(value, key.length + 5)
  return encodePngChunk('iTXt', body)
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

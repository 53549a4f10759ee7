import type { FileHandle } from 'node:fs/promises'

/**
 * Width, height and duration read from the headers of video and audio containers, where that is
 * cheap: a few header reads, never the media data. Anything unexpected gives nulls, not errors;
 * these files are stored whatever their headers say.
 */
export interface Dimensions {
  width: number | null
  height: number | null
  duration_ms: number | null
}

export const UNKNOWN: Dimensions = { width: null, height: null, duration_ms: null }

/** A `moov` larger than this is not read; real ones are kilobytes to a few megabytes. */
const MAX_MOOV_BYTES = 32 * 1024 * 1024
const MAX_TOP_LEVEL_BOXES = 10_000

interface Box {
  type: string
  start: number
  end: number
}

function* boxesIn(buffer: Buffer, start: number, end: number): Generator<Box> {
  let offset = start
  while (offset + 8 <= end) {
    let size = buffer.readUInt32BE(offset)
    let header = 8
    if (size === 1) {
      if (offset + 16 > end) return
      size = Number(buffer.readBigUInt64BE(offset + 8))
      header = 16
    } else if (size === 0) {
      size = end - offset
    }
    if (size < header || offset + size > end) return
    yield {
      type: buffer.toString('latin1', offset + 4, offset + 8),
      start: offset + header,
      end: offset + size,
    }
    offset += size
  }
}

function child(buffer: Buffer, parent: Box, type: string): Box | undefined {
  for (const box of boxesIn(buffer, parent.start, parent.end)) if (box.type === type) return box
  return undefined
}

function parseMoov(moov: Buffer): Dimensions {
  const whole: Box = { type: 'moov', start: 0, end: moov.length }
  let duration: number | null = null
  const mvhd = child(moov, whole, 'mvhd')
  if (mvhd && mvhd.end - mvhd.start >= 32) {
    const version = moov.readUInt8(mvhd.start)
    const timescale = moov.readUInt32BE(mvhd.start + (version === 1 ? 20 : 12))
    const units =
      version === 1
        ? Number(moov.readBigUInt64BE(mvhd.start + 24))
        : moov.readUInt32BE(mvhd.start + 16)
    if (timescale > 0 && units > 0 && units !== 0xffffffff) {
      duration = Math.round((units / timescale) * 1000)
    }
  }
  let width: number | null = null
  let height: number | null = null
  for (const trak of boxesIn(moov, 0, moov.length)) {
    if (trak.type !== 'trak') continue
    const tkhd = child(moov, trak, 'tkhd')
    const mdia = child(moov, trak, 'mdia')
    const hdlr = mdia ? child(moov, mdia, 'hdlr') : undefined
    const handler =
      hdlr && hdlr.end - hdlr.start >= 12
        ? moov.toString('latin1', hdlr.start + 8, hdlr.start + 12)
        : ''
    if (!tkhd || tkhd.end - tkhd.start < 84 || handler !== 'vide') continue
    // The last eight bytes of tkhd are width and height as 16.16 fixed point, in both versions.
    const w = Math.round(moov.readUInt32BE(tkhd.end - 8) / 65536)
    const h = Math.round(moov.readUInt32BE(tkhd.end - 4) / 65536)
    if (w > 0 && h > 0) {
      width = w
      height = h
      break
    }
  }
  return { width, height, duration_ms: duration }
}

/** MP4, MOV, M4A, 3GP (ISO base media): walks the top-level boxes to `moov` and reads it. */
export async function readIsoMedia(file: FileHandle, size: number): Promise<Dimensions> {
  const header = Buffer.alloc(16)
  let offset = 0
  for (let boxes = 0; offset + 8 <= size && boxes < MAX_TOP_LEVEL_BOXES; boxes++) {
    const { bytesRead } = await file.read(header, 0, 16, offset)
    if (bytesRead < 8) break
    let boxSize = header.readUInt32BE(0)
    let headerSize = 8
    if (boxSize === 1) {
      if (bytesRead < 16) break
      boxSize = Number(header.readBigUInt64BE(8))
      headerSize = 16
    } else if (boxSize === 0) {
      boxSize = size - offset
    }
    if (boxSize < headerSize) break
    if (header.toString('latin1', 4, 8) === 'moov') {
      const length = Math.min(boxSize, size - offset) - headerSize
      if (length > MAX_MOOV_BYTES) break
      const moov = Buffer.alloc(length)
      await file.read(moov, 0, length, offset + headerSize)
      return parseMoov(moov)
    }
    offset += boxSize
  }
  return UNKNOWN
}

interface Vint {
  length: number
  value: number
  /** All value bits set: the element's size is unknown (it runs to the end of its parent). */
  unknown: boolean
}

function readVint(buffer: Buffer, offset: number, keepMarker: boolean): Vint | null {
  const first = buffer[offset]
  if (first === undefined || first === 0) return null
  const length = Math.clz32(first) - 23
  if (offset + length > buffer.length) return null
  const mask = 0xff >> length
  let value = keepMarker ? first : first & mask
  let unknown = (first & mask) === mask
  for (let i = 1; i < length; i++) {
    const byte = buffer[offset + i] ?? 0
    value = value * 256 + byte
    unknown &&= byte === 0xff
  }
  return { length, value, unknown }
}

function readUnsigned(buffer: Buffer, start: number, end: number): number {
  let value = 0
  for (let i = start; i < end; i++) value = value * 256 + (buffer[i] ?? 0)
  return value
}

const EBML = {
  segment: 0x18538067,
  info: 0x1549a966,
  timecodeScale: 0x2ad7b1,
  duration: 0x4489,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  video: 0xe0,
  pixelWidth: 0xb0,
  pixelHeight: 0xba,
  cluster: 0x1f43b675,
}
const EBML_CONTAINERS = new Set([EBML.segment, EBML.info, EBML.tracks, EBML.trackEntry, EBML.video])

/** WebM and Matroska: Info (duration) and the first video track's size, before any cluster. */
export function readMatroska(head: Buffer): Dimensions {
  const found = {
    scale: 1_000_000,
    duration: null as number | null,
    width: null as number | null,
    height: null as number | null,
    done: false,
  }
  const walk = (start: number, end: number): void => {
    let offset = start
    while (!found.done && offset < end) {
      const id = readVint(head, offset, true)
      const size = id ? readVint(head, offset + id.length, false) : null
      if (!id || !size) return
      const dataStart = offset + id.length + size.length
      const dataEnd = size.unknown ? end : Math.min(end, dataStart + size.value)
      const length = dataEnd - dataStart
      if (id.value === EBML.cluster) {
        found.done = true
        return
      }
      if (EBML_CONTAINERS.has(id.value)) walk(dataStart, dataEnd)
      else if (id.value === EBML.timecodeScale) found.scale = readUnsigned(head, dataStart, dataEnd)
      else if (id.value === EBML.duration && length === 8)
        found.duration = head.readDoubleBE(dataStart)
      else if (id.value === EBML.duration && length === 4)
        found.duration = head.readFloatBE(dataStart)
      else if (id.value === EBML.pixelWidth) found.width ??= readUnsigned(head, dataStart, dataEnd)
      else if (id.value === EBML.pixelHeight)
        found.height ??= readUnsigned(head, dataStart, dataEnd)
      if (size.unknown) return
      offset = dataEnd
    }
  }
  walk(0, head.length)
  const ms = found.duration === null ? null : Math.round((found.duration * found.scale) / 1_000_000)
  return {
    width: found.width || null,
    height: found.height || null,
    duration_ms: ms !== null && Number.isFinite(ms) && ms >= 0 ? ms : null,
  }
}

/** WAV: the duration is the data chunk's size over the byte rate of the fmt chunk. */
export function readWav(head: Buffer): Dimensions {
  let byteRate = 0
  let offset = 12
  while (offset + 8 <= head.length) {
    const id = head.toString('latin1', offset, offset + 4)
    const size = head.readUInt32LE(offset + 4)
    if (id === 'fmt ' && offset + 20 <= head.length) byteRate = head.readUInt32LE(offset + 16)
    if (id === 'data') {
      return {
        ...UNKNOWN,
        duration_ms: byteRate > 0 ? Math.round((size / byteRate) * 1000) : null,
      }
    }
    offset += 8 + size + (size % 2)
  }
  return UNKNOWN
}

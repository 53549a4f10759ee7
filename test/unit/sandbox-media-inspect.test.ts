import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { readIsoMedia, readMatroska, readWav } from '../../src-main/sandbox/media/containers'
import { inspectFile, sniff } from '../../src-main/sandbox/media/inspect'

/**
 * Bytes that look like noise but are the same at every run: random ones could, one run in many,
 * happen to start like a real header (a 100-byte buffer once read as a 6e129-pixel WebM).
 */
function noiseBytes(length: number, seed = 1): Buffer {
  const bytes = Buffer.alloc(length)
  let state = seed
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    bytes[i] = state >>> 24
  }
  return bytes
}

const folder = mkdtempSync(join(tmpdir(), 'atelier-media-inspect-'))
afterAll(() => {
  rmSync(folder, { recursive: true, force: true })
})

function fileOf(name: string, bytes: Buffer): string {
  const path = join(folder, name)
  writeFileSync(path, bytes)
  return path
}

/** An ISO media box: 32-bit size, type, payload. */
function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload)
  const header = Buffer.alloc(8)
  header.writeUInt32BE(body.length + 8, 0)
  header.write(type, 4, 'latin1')
  return Buffer.concat([header, body])
}

function u32(...values: number[]): Buffer {
  const bytes = Buffer.alloc(values.length * 4)
  values.forEach((value, index) => bytes.writeUInt32BE(value, index * 4))
  return bytes
}

function track(handler: string, width: number, height: number): Buffer {
  // tkhd version 0: 80 bytes of fields, then width and height as 16.16 fixed point.
  const tkhd = box('tkhd', Buffer.alloc(76), u32(width * 65536, height * 65536))
  const hdlr = box('hdlr', u32(0, 0), Buffer.from(handler, 'latin1'), Buffer.alloc(13))
  return box('trak', tkhd, box('mdia', hdlr))
}

function mp4(brand: string, moovFirst: boolean): Buffer {
  const ftyp = box('ftyp', Buffer.from(brand, 'latin1'), u32(0), Buffer.from('isommp41', 'latin1'))
  // mvhd version 0: flags, creation, modification, timescale 600, duration 2520 (4.2 s).
  const mvhd = box('mvhd', u32(0, 0, 0, 600, 2520), Buffer.alloc(80))
  const moov = box('moov', mvhd, track('soun', 0, 0), track('vide', 1920, 1080))
  const mdat = box('mdat', noiseBytes(4096))
  return Buffer.concat(moovFirst ? [ftyp, moov, mdat] : [ftyp, mdat, moov])
}

/** An EBML element: id bytes, a one-byte size (or 8 bytes of "unknown"), data. */
function element(id: number[], data: Buffer, unknownSize = false): Buffer {
  const size = unknownSize
    ? Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
    : Buffer.from([0x80 | data.length])
  return Buffer.concat([Buffer.from(id), size, data])
}

function webm(): Buffer {
  const duration = Buffer.alloc(8)
  duration.writeDoubleBE(2500)
  const header = element([0x1a, 0x45, 0xdf, 0xa3], element([0x42, 0x82], Buffer.from('webm')))
  const info = element(
    [0x15, 0x49, 0xa9, 0x66],
    Buffer.concat([
      element([0x2a, 0xd7, 0xb1], Buffer.from([0x0f, 0x42, 0x40])),
      element([0x44, 0x89], duration),
    ]),
  )
  const video = element(
    [0xe0],
    Buffer.concat([
      element([0xb0], Buffer.from([0x05, 0x00])),
      element([0xba], Buffer.from([0x02, 0xd0])),
    ]),
  )
  const tracks = element([0x16, 0x54, 0xae, 0x6b], element([0xae], video))
  const cluster = element([0x1f, 0x43, 0xb6, 0x75], noiseBytes(64))
  const segment = element([0x18, 0x53, 0x80, 0x67], Buffer.concat([info, tracks, cluster]), true)
  return Buffer.concat([header, segment])
}

function wav(seconds: number): Buffer {
  const byteRate = 44_100 * 2 * 2
  const fmt = Buffer.alloc(24)
  fmt.write('fmt ', 0, 'latin1')
  fmt.writeUInt32LE(16, 4)
  fmt.writeUInt16LE(1, 8)
  fmt.writeUInt16LE(2, 10)
  fmt.writeUInt32LE(44_100, 12)
  fmt.writeUInt32LE(byteRate, 16)
  fmt.writeUInt16LE(4, 20)
  fmt.writeUInt16LE(16, 22)
  const data = Buffer.alloc(8)
  data.write('data', 0, 'latin1')
  data.writeUInt32LE(byteRate * seconds, 4)
  const riff = Buffer.alloc(12)
  riff.write('RIFF', 0, 'latin1')
  riff.writeUInt32LE(36 + byteRate * seconds, 4)
  riff.write('WAVE', 8, 'latin1')
  return Buffer.concat([riff, fmt, data, Buffer.alloc(256)])
}

describe('sniffing media types by magic numbers', () => {
  it('recognises images, video and audio whatever they are called', async () => {
    const pixels = { create: { width: 8, height: 8, channels: 3 as const, background: '#c33' } }
    expect(sniff(await sharp(pixels).png().toBuffer())?.content_type).toBe('image/png')
    expect(sniff(await sharp(pixels).jpeg().toBuffer())?.content_type).toBe('image/jpeg')
    expect(sniff(await sharp(pixels).webp().toBuffer())?.content_type).toBe('image/webp')
    expect(sniff(await sharp(pixels).gif().toBuffer())?.content_type).toBe('image/gif')
    expect(sniff(await sharp(pixels).tiff().toBuffer())?.content_type).toBe('image/tiff')
    expect(sniff(mp4('isom', true))).toMatchObject({
      content_type: 'video/mp4',
      media_type: 'video',
    })
    expect(sniff(mp4('qt  ', true))).toMatchObject({ content_type: 'video/quicktime' })
    expect(sniff(mp4('M4A ', true))).toMatchObject({ media_type: 'audio' })
    expect(sniff(mp4('avif', true))).toMatchObject({ content_type: 'image/avif' })
    expect(sniff(webm())).toMatchObject({ content_type: 'video/webm', media_type: 'video' })
    expect(sniff(wav(1))).toMatchObject({ content_type: 'audio/wav', media_type: 'audio' })
    expect(sniff(Buffer.from('ID3\x04\x00', 'latin1'))?.content_type).toBe('audio/mpeg')
    expect(sniff(Buffer.from([0xff, 0xfb, 0x90, 0x00]))?.content_type).toBe('audio/mpeg')
    expect(sniff(Buffer.from([0xff, 0xf1, 0x50, 0x80]))?.content_type).toBe('audio/aac')
    expect(sniff(Buffer.from('%PDF-1.7\n'))).toMatchObject({ media_type: 'other' })
    const svg = '<?xml version="1.0"?>\n<!-- drawn -->\n<svg xmlns="http://www.w3.org/2000/svg"/>'
    expect(sniff(Buffer.from(svg))?.content_type).toBe('image/svg+xml')
  })

  it('recognises nothing in random bytes or in an HTML page that holds an svg', () => {
    expect(sniff(Buffer.from('<!doctype html><body><svg></svg></body>'))).toBeNull()
    expect(sniff(Buffer.from('plain text'))).toBeNull()
    expect(sniff(Buffer.alloc(0))).toBeNull()
  })
})

describe('reading container headers', () => {
  it('reads size and duration of MP4 and MOV, moov before or after the media data', async () => {
    for (const moovFirst of [true, false]) {
      const bytes = mp4('isom', moovFirst)
      const file = await open(fileOf(`clip-${moovFirst}.mp4`, bytes), 'r')
      try {
        expect(await readIsoMedia(file, bytes.length)).toEqual({
          width: 1920,
          height: 1080,
          duration_ms: 4200,
        })
      } finally {
        await file.close()
      }
    }
  })

  it('gives nulls for a truncated or garbled MP4 rather than failing', async () => {
    const bytes = mp4('isom', false).subarray(0, 200)
    const file = await open(fileOf('cut.mp4', bytes), 'r')
    try {
      expect(await readIsoMedia(file, bytes.length)).toEqual({
        width: null,
        height: null,
        duration_ms: null,
      })
    } finally {
      await file.close()
    }
  })

  it('reads WebM Info and the video track, stopping at the first cluster', () => {
    expect(readMatroska(webm())).toEqual({ width: 1280, height: 720, duration_ms: 2500 })
    expect(readMatroska(noiseBytes(100))).toMatchObject({ width: null, height: null })
  })

  it('reads the duration of a WAV from its byte rate', () => {
    expect(readWav(wav(3))).toEqual({ width: null, height: null, duration_ms: 3000 })
  })
})

describe('inspecting stored files', () => {
  it('sums the frame delays of an animated GIF and makes a still thumbnail', async () => {
    const width = 300
    const height = 200
    const frames = Buffer.alloc(width * height * 4 * 2, 0x80)
    // Distinct frames, or the encoder folds them into one.
    frames.fill(0xff, width * height * 4)
    const gif = await sharp(frames, {
      raw: { width, height: height * 2, channels: 4, pageHeight: height },
    })
      .gif({ delay: [100, 150], loop: 0 })
      .toBuffer()
    const result = await inspectFile(
      fileOf('anim.gif', gif),
      gif.length,
      'application/octet-stream',
    )
    expect(result).toMatchObject({
      media_type: 'image',
      content_type: 'image/gif',
      width,
      height,
      duration_ms: 250,
      status_code: 'ready',
      details: { format: 'gif', frames: 2 },
    })
    expect(result.thumbnail).toMatchObject({ width: 256, height: 171 })
  })

  it('reports the displayed size of a rotated JPEG', async () => {
    const jpeg = await sharp({
      create: { width: 120, height: 80, channels: 3, background: '#246' },
    })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer()
    const result = await inspectFile(fileOf('turned.jpg', jpeg), jpeg.length, 'image/jpeg')
    expect(result).toMatchObject({ width: 80, height: 120 })
    expect(result.thumbnail).toMatchObject({ width: 80, height: 120 })
  })

  it('marks an image that does not decode as failed, and keeps unknown bytes as other', async () => {
    const broken = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), noiseBytes(500)])
    const failed = await inspectFile(fileOf('broken.png', broken), broken.length, 'image/png')
    expect(failed).toMatchObject({
      media_type: 'image',
      status_code: 'failed',
      thumbnail: null,
      details: { failure_message: expect.stringContaining('does not decode') },
    })
    const noise = noiseBytes(2000)
    noise[0] = 0
    const other = await inspectFile(fileOf('noise.bin', noise), noise.length, 'application/x-thing')
    expect(other).toMatchObject({ media_type: 'other', content_type: 'application/x-thing' })
  })

  it('reads a video header through the file', async () => {
    const bytes = mp4('qt  ', false)
    const result = await inspectFile(fileOf('clip.mov', bytes), bytes.length, 'video/mp4')
    expect(result).toMatchObject({
      media_type: 'video',
      content_type: 'video/quicktime',
      width: 1920,
      height: 1080,
      duration_ms: 4200,
    })
  })
})

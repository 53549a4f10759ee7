import { createHash } from 'node:crypto'
import { sharp } from '../../src-main/native/sharp'
import type { ProvenanceRecord } from '../../src-shared/domain/provenance'

/** Small pictures made by sharp, with a pattern so that a changed byte changes the pixels. */
const WIDTH = 24
const HEIGHT = 16

function pattern(width: number, height: number, frame = 0): Buffer {
  const pixels = Buffer.alloc(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 4
      pixels[at] = (x * 10 + frame * 60) & 0xff
      pixels[at + 1] = (y * 15) & 0xff
      pixels[at + 2] = ((x + y) * 7) & 0xff
      pixels[at + 3] = 255
    }
  }
  return pixels
}

const raw = (height = HEIGHT) => ({ raw: { width: WIDTH, height, channels: 4 as const } })

export async function makePng(): Promise<Uint8Array> {
  return new Uint8Array(await sharp(pattern(WIDTH, HEIGHT), raw()).png().toBuffer())
}

export async function makeLossyWebp(): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp(pattern(WIDTH, HEIGHT), raw()).removeAlpha().webp({ quality: 80 }).toBuffer(),
  )
}

export async function makeLosslessWebp(): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp(pattern(WIDTH, HEIGHT), raw()).webp({ lossless: true }).toBuffer(),
  )
}

/** Three frames stacked into one tall raw picture, cut into pages by `pageHeight`. */
export async function makeAnimatedWebp(): Promise<Uint8Array> {
  const frames = Buffer.concat([0, 1, 2].map((f) => pattern(WIDTH, HEIGHT, f)))
  return new Uint8Array(
    await sharp(frames, {
      raw: { width: WIDTH, height: HEIGHT * 3, channels: 4, pageHeight: HEIGHT },
    })
      .webp({ lossless: true, loop: 0, delay: [100, 100, 100] })
      .toBuffer(),
  )
}

export async function makeJpeg(): Promise<Uint8Array> {
  return new Uint8Array(await sharp(pattern(WIDTH, HEIGHT), raw()).jpeg({ quality: 90 }).toBuffer())
}

export async function makeGif(): Promise<Uint8Array> {
  return new Uint8Array(await sharp(pattern(WIDTH, HEIGHT), raw()).gif().toBuffer())
}

/** Every frame's pixels, as a decoder sees them. */
export async function pixelsOf(bytes: Uint8Array): Promise<Buffer> {
  return sharp(bytes, { animated: true }).raw().toBuffer()
}

export const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** A record for `picture` as the service made it: its sha256, and a flow worth recreating. */
export function recordFor(
  picture: Uint8Array,
  mediaType: string,
  overrides: Partial<ProvenanceRecord> = {},
): ProvenanceRecord {
  return {
    format: 'atelier.provenance',
    version: 1,
    flow: {
      version: 1,
      name: 'Moonlit <harbour> & "friends"',
      nodes: [
        { id: 'paint', model: 'sandbox/paint', inputs: { prompt: 'a harbour at night — 月' } },
      ],
    },
    flow_version: 3,
    node: { id: 'paint', label: 'Paint the harbour' },
    node_inputs: {
      prompt: 'a harbour at night — 月',
      seed: 1234,
      image: { media: { sha256: 'a'.repeat(64), asset_id: 'asset-1', media_type: 'image/png' } },
    },
    flow_inputs: { prompt: 'a harbour at night — 月' },
    run_id: '0b7f3c1e-2a5d-4c8e-9f10-123456789abc',
    node_run: { flow_run_id: 'flow-run-1', node_id: 'paint', attempt: 1 },
    model: { slug: 'sandbox/paint', version: '2024-06' },
    seed: 1234,
    seeds: { paint: { seed: 1234 } },
    cost: '0.0420',
    created_at: '2026-11-28T03:00:00.000Z',
    evaluation: { id: 'eval-1', verdict: 'passed', score: 0.91 },
    output: { name: 'image', index: 0, sha256: sha256Of(picture), media_type: mediaType },
    ...overrides,
  }
}

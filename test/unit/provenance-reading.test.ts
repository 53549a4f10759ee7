import { deflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import {
  embedProvenance,
  readImageTextChunks,
  readPngTextChunks,
  readProvenance,
} from '../../src-main/provenance'
import { crc32, encodePngChunk, readPngChunks } from '../../src-main/provenance/png'
import { sharp } from '../../src-main/native/sharp'
import type { ProvenanceRecord } from '../../src-shared/domain/provenance'
import {
  makeAnimatedWebp,
  makeJpeg,
  makeLossyWebp,
  makePng,
  recordFor,
} from '../helpers/provenance-pictures'

const kinds = [
  { name: 'PNG', make: makePng, mediaType: 'image/png', format: 'png' as const },
  { name: 'WebP', make: makeLossyWebp, mediaType: 'image/webp', format: 'webp' as const },
  {
    name: 'animated WebP',
    make: makeAnimatedWebp,
    mediaType: 'image/webp',
    format: 'webp' as const,
  },
  { name: 'JPEG', make: makeJpeg, mediaType: 'image/jpeg', format: 'jpeg' as const },
]

/** A PNG with extra chunks put in just before IEND, as another program would write them. */
function withChunks(png: Uint8Array, chunks: Uint8Array[]): Uint8Array {
  const end = readPngChunks(png).at(-1)?.start ?? png.length
  return Buffer.concat([png.subarray(0, end), ...chunks, png.subarray(end)])
}

const latin1 = (text: string) => Buffer.from(text, 'latin1')

/** The file with one byte of the record's JSON changed: `"format":` becomes `"format";`. */
function breakJson(bytes: Uint8Array): Uint8Array {
  const copy = Buffer.from(bytes)
  const at = copy.indexOf('"format":')
  expect(at).toBeGreaterThan(0)
  copy[at + '"format"'.length] = ';'.charCodeAt(0)
  return copy
}

describe.each(kinds)('reading the record of a $name', ({ make, mediaType, format }) => {
  it('reports a picture edited after it was made as changed, with its record', async () => {
    const picture = await make()
    const record = recordFor(picture, mediaType)
    // an editor that keeps the record: the pixels change, the record stays as it was written
    const edited = await sharp(picture, { animated: true })
      .modulate({ brightness: 1.3 })
      .toFormat(format)
      .toBuffer()
    const reading = readProvenance(embedProvenance(new Uint8Array(edited), record))
    expect(reading).toEqual({
      state: 'changed',
      message:
        'This picture was changed after Atelier made it; its record is shown as it was written, not trusted.',
      record,
    })
  })

  it('reports a flipped byte in the record as damaged', async () => {
    const picture = await make()
    const reading = readProvenance(
      breakJson(embedProvenance(picture, recordFor(picture, mediaType))),
    )
    expect(reading.state).toBe('damaged')
    expect('message' in reading && reading.message).toMatch(/record is damaged \(.+\)/)
  })

  it('reports a record of a newer version, or of another format, as foreign', async () => {
    const picture = await make()
    const newer = { ...recordFor(picture, mediaType), version: 2 } as unknown as ProvenanceRecord
    expect(readProvenance(embedProvenance(picture, newer))).toEqual({
      state: 'foreign',
      message:
        "This file's record was written by a newer Atelier (record version 2; this one reads version 1). Update Atelier to read it.",
    })
    const other = {
      ...recordFor(picture, mediaType),
      format: 'someone.else',
    } as unknown as ProvenanceRecord
    const reading = readProvenance(embedProvenance(picture, other))
    expect(reading.state).toBe('foreign')
    expect('message' in reading && reading.message).toContain('"someone.else"')
  })

  it('says what is wrong with a record that does not match the shape', async () => {
    const picture = await make()
    const wrong = {
      ...recordFor(picture, mediaType),
      seed: 'lucky',
      output: undefined,
    } as unknown as ProvenanceRecord
    const reading = readProvenance(embedProvenance(picture, wrong))
    expect(reading.state).toBe('damaged')
    expect('message' in reading && reading.message).toMatch(/seed: .*; output: /)
  })

  it('reads a picture without a record as none', async () => {
    expect(readProvenance(await make())).toEqual({
      state: 'none',
      message: 'This file carries no Atelier record.',
    })
  })
})

describe('PNG specifics', () => {
  it('reports a changed pixel byte as changed', async () => {
    const picture = await makePng()
    const record = recordFor(picture, 'image/png')
    const copy = Buffer.from(embedProvenance(picture, record))
    const idat = readPngChunks(copy).find((c) => c.type === 'IDAT')
    if (!idat) throw new Error('the PNG has no IDAT')
    copy[idat.start + 8 + 4] = (copy[idat.start + 8 + 4] ?? 0) ^ 0x01
    expect(readProvenance(copy)).toMatchObject({ state: 'changed', record })
  })

  it('still reports damaged JSON when the chunk’s checksum was made right again', async () => {
    const picture = await makePng()
    const broken = Buffer.from(breakJson(embedProvenance(picture, recordFor(picture, 'image/png'))))
    const ours = readPngChunks(broken).find((c) => c.type === 'iTXt')
    if (!ours) throw new Error('no iTXt chunk')
    expect(readProvenance(broken)).toMatchObject({
      message: expect.stringContaining('checksum does not match') as unknown,
    })
    broken.writeUInt32BE(crc32(latin1('iTXt'), ours.data), ours.end - 4)
    expect(readProvenance(broken)).toMatchObject({
      state: 'damaged',
      message: expect.stringContaining('its text is not valid JSON') as unknown,
    })
  })

  it('reads tEXt, zTXt and iTXt chunks by keyword', async () => {
    const png = withChunks(await makePng(), [
      encodePngChunk('tEXt', latin1('Title\0Harbour at night')),
      encodePngChunk(
        'zTXt',
        Buffer.concat([latin1('Comment\0\0'), deflateSync(latin1('squeezed words'))]),
      ),
      encodePngChunk(
        'iTXt',
        Buffer.concat([latin1('Author\0\0\0fr\0Auteur\0'), Buffer.from('Zoë 月', 'utf8')]),
      ),
      encodePngChunk(
        'iTXt',
        Buffer.concat([
          latin1('Note\0\x01\0\0\0'),
          deflateSync(Buffer.from('compressed ✓', 'utf8')),
        ]),
      ),
    ])
    expect(readPngTextChunks(png)).toEqual({
      Title: 'Harbour at night',
      Comment: 'squeezed words',
      Author: 'Zoë 月',
      Note: 'compressed ✓',
    })
    expect((await sharp(png).metadata()).format).toBe('png')
  })
})

describe('pictures saved by ComfyUI', () => {
  const prompt = JSON.stringify({ '3': { class_type: 'KSampler', inputs: { seed: 5 } } })
  const workflow = JSON.stringify({ nodes: [], links: [] })
  const hint =
    'This file carries no Atelier record. It carries a ComfyUI workflow: `atelier workflow import FILE` imports it.'

  it('finds the prompt and workflow text chunks of a PNG, and points to the import', async () => {
    const png = withChunks(await makePng(), [
      encodePngChunk('tEXt', latin1(`prompt\0${prompt}`)),
      encodePngChunk('tEXt', latin1(`workflow\0${workflow}`)),
    ])
    expect(readImageTextChunks(png)).toEqual({ prompt, workflow })
    expect(readProvenance(png)).toEqual({ state: 'none', message: hint })
  })

  it('finds them in a WebP’s EXIF, where ComfyUI saves them as Model and Make', async () => {
    const webp = new Uint8Array(
      await sharp(await makeLossyWebp())
        .withExif({ IFD0: { Model: `prompt:${prompt}`, Make: `workflow:${workflow}` } })
        .webp()
        .toBuffer(),
    )
    expect(readImageTextChunks(webp)).toEqual({ prompt, workflow })
    expect(readProvenance(webp)).toEqual({ state: 'none', message: hint })
  })
})

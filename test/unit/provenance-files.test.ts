import { describe, expect, it } from 'vitest'
import {
  embedProvenance,
  mediaTypeOf,
  readProvenance,
  readWebpChunks,
  stripProvenance,
  ProvenanceError,
} from '../../src-main/provenance'
import { sharp } from '../../src-main/native/sharp'
import {
  makeAnimatedWebp,
  makeGif,
  makeJpeg,
  makeLosslessWebp,
  makeLossyWebp,
  makePng,
  pixelsOf,
  recordFor,
} from '../helpers/provenance-pictures'

const NAMESPACE = 'https://atelier.invalid/ns/provenance/1.0/'

const kinds = [
  { name: 'a PNG', make: makePng, mediaType: 'image/png' },
  { name: 'a lossy WebP', make: makeLossyWebp, mediaType: 'image/webp' },
  { name: 'a lossless WebP', make: makeLosslessWebp, mediaType: 'image/webp' },
  { name: 'an animated WebP', make: makeAnimatedWebp, mediaType: 'image/webp' },
  { name: 'a JPEG', make: makeJpeg, mediaType: 'image/jpeg' },
]

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b))

describe.each(kinds)('provenance inside $name', ({ make, mediaType }) => {
  it('keeps the pixels, reads the record back whole, and strips to the same bytes', async () => {
    const picture = await make()
    expect(mediaTypeOf(picture)).toBe(mediaType)
    const record = recordFor(picture, mediaType)
    const withRecord = embedProvenance(picture, record)

    expect(withRecord.length).toBeGreaterThan(picture.length)
    expect((await pixelsOf(withRecord)).equals(await pixelsOf(picture))).toBe(true)
    expect(readProvenance(withRecord)).toEqual({ state: 'intact', record })
    expect(sameBytes(stripProvenance(withRecord), picture)).toBe(true)
    // a file without a record strips to itself
    expect(sameBytes(stripProvenance(picture), picture)).toBe(true)
  })

  it('replaces the record when a second one is written', async () => {
    const picture = await make()
    const first = embedProvenance(picture, recordFor(picture, mediaType))
    const second = recordFor(picture, mediaType, { seed: 99, cost: '1.5000' })
    const rewritten = embedProvenance(first, second)

    expect(readProvenance(rewritten)).toEqual({ state: 'intact', record: second })
    expect(sameBytes(stripProvenance(rewritten), picture)).toBe(true)
    const text = Buffer.from(rewritten).toString('latin1')
    expect(text.split('atelier.provenance').length - 1).toBe(1)
  })

  it('stays a valid file for other readers, which see the XMP of WebP and JPEG', async () => {
    const picture = await make()
    const before = await sharp(picture).metadata()
    const after = await sharp(embedProvenance(picture, recordFor(picture, mediaType))).metadata()
    expect(after.format).toBe(before.format)
    expect([after.width, after.height, after.pages ?? 1]).toEqual([
      before.width,
      before.height,
      before.pages ?? 1,
    ])
    if (mediaType !== 'image/png') {
      expect(after.xmp?.toString()).toContain(NAMESPACE)
      expect(after.xmpAsString).toContain('{"format":"atelier.provenance"')
    }
  })
})

describe('the WebP container', () => {
  it('gives a simple lossy WebP a VP8X header with its canvas, and takes it away again', async () => {
    const picture = await makeLossyWebp()
    expect(readWebpChunks(picture).map((c) => c.type)).toEqual(['VP8 '])
    const withRecord = embedProvenance(picture, recordFor(picture, 'image/webp'))
    const chunks = readWebpChunks(withRecord)
    expect(chunks.map((c) => c.type)).toEqual(['VP8X', 'VP8 ', 'XMP '])
    const header = Buffer.from(chunks[0]?.data ?? [])
    expect(header[0]).toBe(0x04)
    expect(header.readUIntLE(4, 3) + 1).toBe(24)
    expect(header.readUIntLE(7, 3) + 1).toBe(16)
  })

  it('keeps every frame of an animated WebP', async () => {
    const picture = await makeAnimatedWebp()
    const withRecord = embedProvenance(picture, recordFor(picture, 'image/webp'))
    const frames = (bytes: Uint8Array) =>
      readWebpChunks(bytes).filter((c) => c.type === 'ANMF').length
    expect(frames(picture)).toBe(3)
    expect(frames(withRecord)).toBe(3)
    expect((await sharp(withRecord, { animated: true }).metadata()).pages).toBe(3)
  })

  it('keeps a WebP’s own XMP aside and puts it back when the record is taken out', async () => {
    const theirs =
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:format>image/webp</dc:format></rdf:Description></rdf:RDF></x:xmpmeta>'
    const picture = new Uint8Array(
      await sharp(await makeLosslessWebp())
        .withXmp(theirs)
        .webp({ lossless: true })
        .toBuffer(),
    )
    expect(readWebpChunks(picture).map((c) => c.type)).toContain('XMP ')
    const record = recordFor(picture, 'image/webp')
    const withRecord = embedProvenance(picture, record)
    expect(readWebpChunks(withRecord).filter((c) => c.type === 'XMP ')).toHaveLength(1)
    expect(readProvenance(withRecord)).toEqual({ state: 'intact', record })
    expect(sameBytes(stripProvenance(withRecord), picture)).toBe(true)
  })
})

describe('the JPEG segments', () => {
  it('leaves a JPEG’s own XMP first, for other readers, and reads its record beside it', async () => {
    const theirs =
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:format>image/jpeg</dc:format></rdf:Description></rdf:RDF></x:xmpmeta>'
    const picture = new Uint8Array(
      await sharp(await makeJpeg())
        .withXmp(theirs)
        .jpeg()
        .toBuffer(),
    )
    const record = recordFor(picture, 'image/jpeg')
    const withRecord = embedProvenance(picture, record)
    expect((await sharp(withRecord).metadata()).xmpAsString).toContain('<dc:format>image/jpeg')
    expect(readProvenance(withRecord)).toEqual({ state: 'intact', record })
    expect(sameBytes(stripProvenance(withRecord), picture)).toBe(true)
  })

  it('refuses a record larger than a JPEG segment holds, saying what to do', async () => {
    const picture = await makeJpeg()
    const huge = recordFor(picture, 'image/jpeg', { flow: { notes: 'x'.repeat(70_000) } })
    expect(() => embedProvenance(picture, huge)).toThrow(
      expect.objectContaining({ code: 'PROVENANCE_TOO_LARGE' }),
    )
    expect(() => embedProvenance(picture, huge)).toThrow(/save the picture as PNG or WebP/)
  })
})

describe('files that cannot carry a record', () => {
  it('refuses a GIF by name, with a stable code', async () => {
    const gif = await makeGif()
    expect(mediaTypeOf(gif)).toBe('image/gif')
    let caught: unknown
    try {
      embedProvenance(gif, recordFor(gif, 'image/gif'))
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(ProvenanceError)
    expect(caught).toMatchObject({ code: 'PROVENANCE_UNSUPPORTED_TYPE' })
    expect((caught as Error).message).toContain('a GIF file')
    expect(readProvenance(gif)).toMatchObject({ state: 'none' })
  })

  it('names an MP4 video, and a file of no known kind', () => {
    const mp4 = Buffer.concat([
      Buffer.from([0, 0, 0, 0x18]),
      Buffer.from('ftypisom'),
      Buffer.alloc(16),
    ])
    expect(() => embedProvenance(mp4, recordFor(mp4, 'video/mp4'))).toThrow(/an MP4 video/)
    const text = new TextEncoder().encode('just some words')
    expect(mediaTypeOf(text)).toBeNull()
    expect(() => stripProvenance(text)).toThrow(ProvenanceError)
  })
})

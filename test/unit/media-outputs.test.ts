import { describe, expect, it } from 'vitest'
import type { Asset } from '../../src-shared/api'
import { assetMedia, outputMedia } from '../../src-main/sync/media'

const SHA_A = 'a'.repeat(64)
const SHA_B = 'B'.repeat(64)

describe('outputMedia', () => {
  it('finds the contract’s file objects, in the order the output lists them', () => {
    const output = {
      images: [
        {
          url: 'https://storage.test/a?sig=1',
          content_type: 'image/png',
          sha256: SHA_A,
          width: 8,
          height: 8,
          expires_at: '2030-01-01T00:00:00Z',
        },
        { url: 'http://storage.test/b', content_type: 'IMAGE/WEBP; q=1', sha256: SHA_B },
      ],
      video: { url: 'https://storage.test/c', content_type: 'video/mp4', sha256: 'not a hash' },
      text: 'see https://example.test/not-a-file.png',
      seed: 7,
    }
    expect(outputMedia(output)).toEqual([
      {
        position: 0,
        role: 'images.0',
        url: 'https://storage.test/a?sig=1',
        contentType: 'image/png',
        sha256: SHA_A,
        expiresAt: Date.parse('2030-01-01T00:00:00Z'),
      },
      {
        position: 1,
        role: 'images.1',
        url: 'http://storage.test/b',
        contentType: 'image/webp',
        sha256: SHA_B.toLowerCase(),
        expiresAt: null,
      },
      {
        position: 2,
        role: 'video',
        url: 'https://storage.test/c',
        contentType: 'video/mp4',
        sha256: null,
        expiresAt: null,
      },
    ])
  })

  it('finds flow outputs by their names, nested, and nothing inside a file object', () => {
    const output = {
      hero: { url: 'https://storage.test/h', content_type: 'image/png' },
      variants: { best: [{ url: 'https://storage.test/v', content_type: 'audio/mpeg' }] },
      poster: {
        url: 'https://storage.test/p',
        content_type: 'image/jpeg',
        source: { url: 'https://storage.test/inner', content_type: 'image/png' },
      },
    }
    expect(outputMedia(output).map((file) => [file.role, file.url])).toEqual([
      ['hero', 'https://storage.test/h'],
      ['variants.best.0', 'https://storage.test/v'],
      ['poster', 'https://storage.test/p'],
    ])
  })

  it('leaves out what is not a media file', () => {
    expect(
      outputMedia({
        report: { url: 'https://storage.test/r.json', content_type: 'application/json' },
        local: { url: 'file:///etc/passwd', content_type: 'image/png' },
        inline: { url: 'data:image/png;base64,AAAA', content_type: 'image/png' },
        bare: 'https://storage.test/x.png',
        untyped: { url: 'https://storage.test/y.png' },
        broken: { url: 'not a url', content_type: 'image/png' },
      }),
    ).toEqual([])
    expect(outputMedia(null)).toEqual([])
    expect(outputMedia('https://storage.test/x.png')).toEqual([])
  })

  it('stops at a bounded depth', () => {
    let deep: unknown = { url: 'https://storage.test/deep', content_type: 'image/png' }
    for (let i = 0; i < 20; i++) deep = { next: deep }
    expect(outputMedia(deep)).toEqual([])
  })
})

describe('assetMedia', () => {
  const asset = (fields: Partial<Asset>): Asset => ({
    id: '01900000-0000-7000-8000-000000000001',
    org_id: '01900000-0000-7000-8000-000000000002',
    folder_id: null,
    name: 'fox.png',
    media_type: 'image',
    content_type: 'image/png',
    size_bytes: 1000,
    sha256: SHA_A,
    width: 10,
    height: 10,
    duration_ms: null,
    url: 'https://storage.test/content?sig=1',
    url_expires_at: '2030-01-01T00:00:00Z',
    thumbnail_url: 'https://storage.test/preview?sig=2',
    status_code: 'ready',
    metadata: {},
    created_at: '2025-01-01T00:00:00Z',
    updated_at: '2025-01-01T00:00:00Z',
    deleted_at: null,
    ...fields,
  })

  it('keeps the content of a ready image, checked against its sha256', () => {
    expect(assetMedia(asset({}), 2000)).toEqual({
      position: 0,
      role: 'content',
      url: 'https://storage.test/content?sig=1',
      contentType: 'image/png',
      sha256: SHA_A,
      expiresAt: Date.parse('2030-01-01T00:00:00Z'),
    })
  })

  it('keeps only the preview of an image too large to keep whole', () => {
    expect(assetMedia(asset({ size_bytes: 5000 }), 2000)).toMatchObject({
      role: 'preview',
      url: 'https://storage.test/preview?sig=2',
      contentType: null,
      sha256: null,
    })
    expect(assetMedia(asset({ size_bytes: 5000, thumbnail_url: null }), 2000)).toBeNull()
  })

  it('keeps nothing of videos, unfinished or deleted assets', () => {
    expect(assetMedia(asset({ media_type: 'video', content_type: 'video/mp4' }), 2000)).toBeNull()
    expect(assetMedia(asset({ status_code: 'processing' }), 2000)).toBeNull()
    expect(assetMedia(asset({ deleted_at: '2025-01-02T00:00:00Z' }), 2000)).toBeNull()
  })
})

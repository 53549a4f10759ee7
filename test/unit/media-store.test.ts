import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { mediaType } from '../../src-main/media-store/download'
import { MediaStoreError, redactUrl } from '../../src-main/media-store/errors'
import { sniffContentType } from '../../src-main/media-store/files'
import { SharedWork } from '../../src-main/media-store/shared'

/** Work that finishes when told to, and says whether its signal aborted. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  const seen = { aborted: false, starts: 0 }
  const start = async (signal: AbortSignal) => {
    seen.starts += 1
    signal.addEventListener('abort', () => {
      seen.aborted = true
    })
    await opened
    return 'done'
  }
  return { open, start, seen }
}

describe('SharedWork', () => {
  it('runs the work once for every caller that shares one of its keys', async () => {
    const shared = new SharedWork()
    const work = gate()
    const first = shared.run(['url:a', 'sha256:x'], work.start)
    const second = shared.run(['sha256:x'], work.start)
    work.open()
    expect(await Promise.all([first, second])).toEqual(['done', 'done'])
    expect(work.seen.starts).toBe(1)
    // Settled work is forgotten: the next call starts afresh.
    await shared.run(['url:a'], work.start)
    expect(work.seen.starts).toBe(2)
  })

  it('aborts the work only when the last waiting caller gives up', async () => {
    const shared = new SharedWork()
    const work = gate()
    const one = new AbortController()
    const two = new AbortController()
    const first = shared.run(['k'], work.start, one.signal)
    const second = shared.run(['k'], work.start, two.signal)
    one.abort()
    await expect(first).rejects.toMatchObject({ code: 'ABORTED' })
    expect(work.seen.aborted).toBe(false)
    two.abort()
    await expect(second).rejects.toMatchObject({ code: 'ABORTED' })
    expect(work.seen.aborted).toBe(true)
    work.open()
  })

  it('refuses a caller whose signal has already aborted', async () => {
    const shared = new SharedWork()
    const work = gate()
    await expect(shared.run(['k'], work.start, AbortSignal.abort())).rejects.toMatchObject({
      code: 'ABORTED',
    })
    expect(work.seen.starts).toBe(0)
  })
})

describe('media types', () => {
  it('keeps the essence of a declared type and drops what is malformed', () => {
    expect(mediaType('Image/PNG; charset=binary')).toBe('image/png')
    expect(mediaType('video/mp4')).toBe('video/mp4')
    expect(mediaType('')).toBeNull()
    expect(mediaType(null)).toBeNull()
    expect(mediaType('text')).toBeNull()
    expect(mediaType('a/b c')).toBeNull()
  })

  const dir = mkdtempSync(join(tmpdir(), 'atelier-sniff-'))
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  it.each([
    ['image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
    ['image/jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10])],
    ['image/gif', Buffer.from('GIF89a')],
    ['image/webp', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')])],
    ['image/avif', Buffer.concat([Buffer.alloc(4), Buffer.from('ftypavif')])],
    ['video/mp4', Buffer.concat([Buffer.alloc(4), Buffer.from('ftypisom')])],
    ['video/webm', Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f])],
    ['application/octet-stream', Buffer.from('plain text')],
    ['application/octet-stream', Buffer.alloc(0)],
  ])('sniffs %s from the first bytes of an adopted file', (type, head) => {
    const file = join(dir, `${type.replace('/', '-')}-${head.length}`)
    writeFileSync(file, head)
    expect(sniffContentType(file)).toBe(type)
  })
})

describe('MediaStoreError', () => {
  it('never carries the query of a presigned URL', () => {
    const url = redactUrl('https://store.example/b/abc?expires=1&signature=deadbeef')
    expect(url).toBe('https://store.example/b/abc')
    expect(redactUrl('not a url')).toBe('(not a URL)')
    const error = new MediaStoreError('URL_EXPIRED', 'expired', { status: 403, url })
    expect(error.toJSON()).toEqual({
      name: 'MediaStoreError',
      code: 'URL_EXPIRED',
      message: 'expired',
      status: 403,
      url: 'https://store.example/b/abc',
      retryable: false,
    })
  })
})

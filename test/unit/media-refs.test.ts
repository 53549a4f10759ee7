import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import sharp from 'sharp'
import { afterEach, describe, expect, it } from 'vitest'
import { MediaStore } from '../../src-main/media-store'

const folders: string[] = []
const stores: MediaStore[] = []

function openStore(dir = mkdtempSync(join(tmpdir(), 'atelier-media-refs-'))): MediaStore {
  if (!folders.includes(dir)) folders.push(dir)
  const store = new MediaStore({ dir, maxBytes: 1024 * 1024, recentUseMs: 0 })
  stores.push(store)
  return store
}

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const RUN = { kind: 'run-output', id: 'run-1' } as const

const image = () =>
  sharp({ create: { width: 40, height: 20, channels: 3, background: '#336699' } })
    .png()
    .toBuffer()

describe('media refs', () => {
  it('records which files a run made, with their thumbnails, and keeps them past eviction', async () => {
    const store = openStore()
    const picture = await store.put(await image(), 'image/png')
    const text = await store.put(Buffer.from('not an image'), 'application/octet-stream')
    const thumbnail = await store.thumbnail(picture.sha256, { size: 16 })
    store.recordRefs(
      RUN,
      [
        { position: 1, role: 'images.1', sha256: text.sha256, contentType: 'audio/mpeg' },
        { position: 0, role: 'images.0', sha256: picture.sha256, contentType: 'image/png' },
      ],
      { state: 'done' },
    )
    expect(store.forRun('run-1', { thumbnailSize: 16 })).toEqual([
      {
        owner: RUN,
        position: 0,
        role: 'images.0',
        sha256: picture.sha256,
        contentType: 'image/png',
        thumbnailSha256: thumbnail.sha256,
        stored: true,
      },
      {
        owner: RUN,
        position: 1,
        role: 'images.1',
        sha256: text.sha256,
        contentType: 'audio/mpeg',
        thumbnailSha256: null,
        stored: true,
      },
    ])
    // Another size was never made.
    expect(store.forRun('run-1')[0]?.thumbnailSha256).toBeNull()
    expect(store.owners(picture.sha256)).toEqual([RUN])
    expect(store.forAsset('run-1')).toEqual([])

    await store.setMaxBytes(0)
    expect(
      store.forRun('run-1', { thumbnailSize: 16 }).map((ref) => [ref.stored, ref.thumbnailSha256]),
    ).toEqual([
      [false, null],
      [false, null],
    ])
    expect(store.fetchRecord(RUN)?.state).toBe('done')
  })

  it('counts failed fetches until one is done', () => {
    const store = openStore()
    expect(store.fetchRecord(RUN)).toBeNull()
    store.recordRefs(RUN, [], { state: 'failed', code: 'DOWNLOAD_FAILED', retryAt: 0 })
    store.recordRefs(RUN, [], { state: 'failed', code: 'CHECKSUM_MISMATCH', retryAt: 5000 })
    expect(store.fetchRecord(RUN)).toMatchObject({
      owner: RUN,
      state: 'failed',
      attempts: 2,
      retryAt: 5000,
      lastCode: 'CHECKSUM_MISMATCH',
    })
    // Refs alone leave the record as it was.
    store.recordRefs(RUN, [
      { position: 0, role: 'video', sha256: 'c'.repeat(64), contentType: 'video/mp4' },
    ])
    expect(store.fetchRecord(RUN)?.attempts).toBe(2)
    store.recordRefs(RUN, [], { state: 'done' })
    expect(store.fetchRecord(RUN)).toMatchObject({
      state: 'done',
      attempts: 0,
      retryAt: 0,
      lastCode: null,
    })
    expect(store.forRun('run-1')).toMatchObject([{ role: 'video', stored: false }])
  })

  it('refuses malformed refs with INVALID_ARGUMENT and writes none of them', () => {
    const store = openStore()
    const good = { position: 0, role: 'images.0', sha256: 'a'.repeat(64), contentType: 'image/png' }
    const bad = [
      { ...good, position: 1, sha256: 'xyz' },
      { ...good, position: -1 },
      { ...good, position: 1, role: '' },
      { ...good, position: 1, contentType: 'png' },
    ]
    for (const ref of bad) {
      expect(() => {
        store.recordRefs(RUN, [good, ref])
      }).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    }
    expect(() => {
      store.recordRefs({ kind: 'flow' as 'asset', id: 'x' }, [good])
    }).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(store.forRun('run-1')).toEqual([])
  })

  it('upgrades an index written before refs existed, keeping its entries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atelier-media-refs-'))
    folders.push(dir)
    const first = openStore(dir)
    const stored = await first.put(Buffer.from('kept'), 'text/plain')
    await first.close()
    // What the first release left: schema 1, no refs tables (nor animated thumbnails, schema 3).
    const db = new Database(join(dir, 'index.db'))
    db.exec(
      'DROP TABLE animated_thumbnails; DROP TABLE refs; DROP TABLE fetches; PRAGMA user_version = 1',
    )
    db.close()

    const again = openStore(dir)
    expect(again.stat(stored.sha256)).toMatchObject({ size: 4, contentType: 'text/plain' })
    again.recordRefs(
      RUN,
      [{ position: 0, role: 'text', sha256: stored.sha256, contentType: 'audio/wav' }],
      {
        state: 'done',
      },
    )
    expect(again.owners(stored.sha256)).toEqual([RUN])
  })
})

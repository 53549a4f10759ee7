import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabases, type Databases } from '../../src-main/db'
import { openLogger, type Logger } from '../../src-main/log'
import { openAssetManager, type AssetManager } from '../../src-main/review/assets'
import { UploadManager } from '../../src-main/review/assets/upload-jobs'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import type { UploadProgressEvent } from '../../src-shared/domain/assets'
import type { MirrorChange } from '../../src-shared/ipc'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Uploads written through (issue 19): the assets an upload made are in the mirror as soon as it
 * ends, listed without any sync, and the views are told with `mirror.changed`. A real sandbox,
 * a real mirror and ledger, real files; the sync asked for after the upload never runs here.
 */

let sandbox: TestSandbox
let scratch: string
let home: string
let databases: Databases
let client: ServiceClient
let logger: Logger

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  scratch = mkdtempSync(join(tmpdir(), 'atelier-uploads-write-through-'))
  home = join(scratch, 'home')
  mkdirSync(home)
  databases = openDatabases(home)
  logger = openLogger({ home, level: 'info' })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
})

afterAll(async () => {
  logger.close()
  databases.close()
  await sandbox.close()
  rmSync(scratch, { recursive: true, force: true })
})

async function folderOfPictures(name: string, count: number, shade: number): Promise<string> {
  const root = join(scratch, name)
  mkdirSync(root)
  for (let i = 0; i < count; i++) {
    const background = { r: (shade + i * 37) % 256, g: (shade * 7 + i) % 256, b: 90 }
    const png = await sharp({ create: { width: 24, height: 16, channels: 3, background } })
      .png()
      .toBuffer()
    writeFileSync(join(root, `picture-${i}.png`), png)
  }
  return root
}

/** Resolves the first time `called` is; the sync "after an upload" is such a call. */
function signal(): { called: () => void; heard: Promise<void>; count: () => number } {
  let count = 0
  let resolve: () => void = () => undefined
  const heard = new Promise<void>((r) => (resolve = r))
  return {
    called: () => {
      count++
      resolve()
    },
    heard,
    count: () => count,
  }
}

describe('an upload written through', () => {
  it('lists the new assets from the mirror with no sync', async () => {
    const syncAsked = signal()
    const manager: AssetManager = openAssetManager({
      client,
      databases,
      profile: 'default',
      orgId: sandbox.orgId,
      home,
      logger,
      emit: () => undefined,
      // Asked for (the folders it made come with it) but never run: the list must not need it.
      syncNow: () => {
        syncAsked.called()
        return Promise.resolve()
      },
    })
    try {
      const root = await folderOfPictures('harbour', 3, 11)
      const before = await manager.list({ text: '', limit: 100, folder: undefined })
      expect(before.items).toEqual([])
      await manager.startUpload({ path: root, watch: false })
      // The upload's end writes its assets first, then asks for the sync.
      await syncAsked.heard
      const page = await manager.list({ text: '', limit: 100, folder: undefined })
      expect(page.items.map((asset) => asset.name).sort()).toEqual([
        'picture-0.png',
        'picture-1.png',
        'picture-2.png',
      ])
      // Each is the service's own record, as a sync would have written it: but for its
      // presigned addresses, signed afresh (with a new expiry) each time the record is read.
      const unsigned = (record: unknown) => {
        const { url, url_expires_at, thumbnail_url, ...rest } = record as Record<string, unknown>
        expect([url, url_expires_at, thumbnail_url]).not.toContain(undefined)
        return rest
      }
      for (const item of page.items) {
        const answer = await sandbox.call('GET', `/v1/assets/${item.id}`)
        expect(unsigned(databases.mirror.assets.get(item.id))).toEqual(unsigned(answer.body))
      }
    } finally {
      await manager.close()
    }
  }, 60_000)

  it('tells the views through mirror.changed before the sync is asked for', async () => {
    const told: (readonly MirrorChange[])[] = []
    const syncAsked = signal()
    let toldBeforeSync: number | null = null
    let finished: UploadProgressEvent | null = null
    const uploads = new UploadManager({
      client,
      databases,
      profile: 'default',
      orgId: sandbox.orgId,
      home,
      logger,
      clock: Date.now,
      progress: (event) => {
        if (event.upload.state === 'finished') finished = event
      },
      uploaded: () => {
        toldBeforeSync = told.length
        syncAsked.called()
      },
      written: (collections) => told.push(collections),
    })
    try {
      const root = await folderOfPictures('kites', 2, 140)
      const started = await uploads.start({ path: root, watch: false })
      await syncAsked.heard
      expect(toldBeforeSync).toBe(1)
      expect(told).toEqual([['assets']])
      expect(syncAsked.count()).toBe(1)
      expect(finished).not.toBeNull()
      expect(uploads.list().find((u) => u.id === started.id)?.files.done).toBe(2)
      // Every asset the service has came through the write-through: no sync ever ran here.
      const answer = await sandbox.call('GET', '/v1/assets?limit=100')
      const all = (answer.body as { items: { id: string; name: string }[] }).items
      expect(all).toHaveLength(5)
      for (const asset of all) expect(databases.mirror.assets.get(asset.id)?.name).toBe(asset.name)
    } finally {
      await uploads.close()
    }
  }, 60_000)
})

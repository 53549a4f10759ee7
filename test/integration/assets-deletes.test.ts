import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabases, type Databases } from '../../src-main/db'
import { openLogger, type Logger } from '../../src-main/log'
import { openAssetManager, WATCHES_FILE, type AssetManager } from '../../src-main/review/assets'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import type { UploadSummary } from '../../src-shared/domain/assets'
import type { IpcEvents } from '../../src-shared/ipc'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Held deletes and watched folders, through the asset manager's public entry with a short undo
 * time: a real sandbox, a real mirror and ledger, a real sync, real folders.
 */

let sandbox: TestSandbox
let scratch: string
let home: string
let databases: Databases
let client: ServiceClient
let logger: Logger
let manager: AssetManager
type Heard = { [E in keyof IpcEvents]: { event: E; payload: IpcEvents[E] } }[keyof IpcEvents]
const heard: Heard[] = []
const waiting = new Set<() => void>()

function nextEvent(matches: (e: Heard) => boolean, from: number, timeoutMs = 20_000) {
  return new Promise<Heard>((resolve, reject) => {
    const look = () => {
      const found = heard.slice(from).find(matches)
      if (!found) return false
      clearTimeout(timer)
      waiting.delete(check)
      resolve(found)
      return true
    }
    const check = () => {
      look()
    }
    const timer = setTimeout(() => {
      waiting.delete(check)
      reject(new Error(`no event matched within ${timeoutMs} ms`))
    }, timeoutMs)
    if (!look()) waiting.add(check)
  })
}

const UNDO_MS = 300

function open(): AssetManager {
  return openAssetManager({
    client,
    databases,
    profile: 'default',
    orgId: sandbox.orgId,
    home,
    logger,
    undoMs: UNDO_MS,
    watchSettleMs: 200,
    emit: (event, payload) => {
      heard.push({ event, payload } as Heard)
      for (const check of [...waiting]) check()
    },
    syncNow: () =>
      new SyncEngine({
        client,
        mirror: databases.mirror,
        profileName: 'default',
        orgId: sandbox.orgId,
      }).syncAll({}),
  })
}

async function png(seed: number): Promise<Buffer> {
  const background = { r: (seed * 37) % 256, g: (seed * 91) % 256, b: (seed * 53) % 256 }
  return sharp({ create: { width: 20, height: 20, channels: 3, background } })
    .png()
    .toBuffer()
}

const finished = (id: string) => (e: Heard) =>
  e.event === 'uploads.progress' &&
  e.payload.upload.id === id &&
  e.payload.upload.state === 'finished'

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  scratch = mkdtempSync(join(tmpdir(), 'atelier-assets-deletes-'))
  home = join(scratch, 'home')
  mkdirSync(home)
  databases = openDatabases(home)
  logger = openLogger({ home, level: 'info' })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  manager = open()
})

afterAll(async () => {
  await manager.close()
  logger.close()
  databases.close()
  await sandbox.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe('a delete held for undo', () => {
  let ids: string[]

  beforeAll(async () => {
    const root = join(scratch, 'trash-me')
    mkdirSync(root)
    for (let i = 0; i < 3; i++) writeFileSync(join(root, `sketch-${i}.png`), await png(i + 1))
    const from = heard.length
    const started = await manager.startUpload({ path: root, watch: false })
    await nextEvent(finished(started.id), from)
    await nextEvent((e) => e.event === 'assets.changed' && e.payload.reason === 'uploaded', from)
    const page = await manager.list({ text: '', limit: 100, folder: undefined })
    ids = page.items.map((a) => a.id)
    expect(ids).toHaveLength(3)
  }, 30_000)

  it('hides the assets at once and brings them back on undo, sending nothing', async () => {
    const [first = ''] = ids
    const from = heard.length
    const held = await manager.delete({ ids: [first] })
    expect(held.count).toBe(1)
    const during = await manager.list({ text: '', limit: 100 })
    expect(during.items.map((a) => a.id)).not.toContain(first)
    expect((await manager.folders()).total).toBe(2)
    expect(() => manager.get({ id: first })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))

    await manager.undoDelete({ undoId: held.undoId })
    expect((await manager.list({ text: '', limit: 100 })).items.map((a) => a.id)).toContain(first)
    // Past the undo time, nothing was sent: the service still has it.
    const later = await manager.delete({ ids: [ids[1] ?? ''] })
    await nextEvent((e) => e.event === 'assets.changed', from)
    expect(heard.slice(from).filter((e) => e.event === 'assets.changed')).toHaveLength(1)
    const still = await client.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: first } },
    })
    expect(still.id).toBe(first)
    expect(() => manager.undoDelete({ undoId: later.undoId })).toThrow(
      expect.objectContaining({ code: 'UNDO_EXPIRED' }),
    )
  })

  it('sends the delete once the undo time has passed, and the mirror forgets it', async () => {
    const second = ids[1] ?? ''
    // Deleted by the previous test's second delete, which was not undone.
    expect(databases.mirror.assets.get(second)).toBeNull()
    await expect(
      client.get('/v1/assets/{asset_id}', { params: { path: { asset_id: second } } }),
    ).rejects.toMatchObject({ status: 404 })
  })

  it('deletes an empty folder after the undo time', async () => {
    const folder = await manager.createFolder({ name: 'Empty', parentId: null })
    const from = heard.length
    const held = await manager.deleteFolder({ id: folder.id })
    expect(held.count).toBe(1)
    expect((await manager.folders()).folders.map((f) => f.id)).not.toContain(folder.id)
    const told = await nextEvent((e) => e.event === 'assets.changed', from)
    expect(told).toMatchObject({ payload: { reason: 'deleted' } })
    expect(databases.mirror.assetFolders.get(folder.id)).toBeNull()
  })

  it('brings the records back, with a notice, when the service cannot delete them', async () => {
    const third = ids[2] ?? ''
    const rule = await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ operationId: 'deleteAsset', status: 503 }] },
    })
    expect(rule.status).toBeLessThan(300)
    try {
      const from = heard.length
      await manager.delete({ ids: [third] })
      const told = await nextEvent((e) => e.event === 'assets.changed', from)
      expect(told).toMatchObject({ payload: { reason: 'delete-failed' } })
      const notice = heard.slice(from).find((e) => e.event === 'app.notice')
      expect(notice?.payload).toMatchObject({ level: 'warning' })
      expect((await manager.list({ text: '', limit: 100 })).items.map((a) => a.id)).toContain(third)
    } finally {
      await sandbox.call('DELETE', '/_sandbox/faults')
    }
  })
})

describe('a watched folder', () => {
  it('uploads the folder, then what appears in it, and is watched again after a restart', async () => {
    const root = join(scratch, 'hot')
    mkdirSync(root)
    writeFileSync(join(root, 'first.png'), await png(40))
    let from = heard.length
    const watch = await manager.watch({ path: root })
    expect(watch).toMatchObject({ path: root, folderName: 'hot' })
    await nextEvent(finished(watch.id), from)
    expect((await manager.watches())[0]?.state).toBe('watching')

    from = heard.length
    writeFileSync(join(root, 'second.png'), await png(41))
    const pass = await nextEvent(finished(watch.id), from)
    const upload = (pass.payload as { upload: UploadSummary }).upload
    // The pass goes on with the same manifest: the first file counts as done, not sent again.
    expect(upload.files).toMatchObject({ total: 2, done: 2 })
    expect(pass.payload).toMatchObject({ files: [{ relativePath: 'second.png', state: 'done' }] })
    expect(upload.watched).toBe(true)

    const saved = JSON.parse(readFileSync(join(home, WATCHES_FILE), 'utf8')) as { path: string }[]
    expect(saved.map((w) => w.path)).toEqual([root])
    await manager.close()
    manager = open()
    expect((await manager.watches()).map((w) => w.path)).toEqual([root])
    await expect(Promise.resolve(manager.watch({ path: root }))).rejects.toMatchObject({
      code: 'WATCH_EXISTS',
    })

    await manager.unwatch({ id: watch.id })
    expect(await manager.watches()).toEqual([])
    expect(JSON.parse(readFileSync(join(home, WATCHES_FILE), 'utf8'))).toEqual([])
    expect(existsSync(join(home, `${WATCHES_FILE}.tmp`))).toBe(false)
  }, 30_000)
})

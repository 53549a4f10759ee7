import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import type {
  AssetDetail,
  AssetFolderItem,
  AssetFolderTree,
  AssetItem,
  AssetPage,
  FolderListing,
  UploadProgressEvent,
  UploadSummary,
} from '../../src-shared/domain/assets'
import type { IpcChannel, IpcEventName, IpcEvents, IpcResult } from '../../src-shared/ipc'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The assets and uploads channels as the window reaches them: the real dispatcher and handlers
 * over a real core (mirror, ledger, sync) against a real sandbox, with real folders on disk.
 */

let sandbox: TestSandbox
let scratch: string
let logger: Logger
let core: Core
const heard: { event: IpcEventName; payload: unknown; at: number }[] = []
const waiting = new Set<() => void>()
const web = { shell: 'web' } as const

function handlers() {
  return createHandlers({
    platform: 'linux',
    backend: () => null,
    openExternal: () => Promise.resolve(),
    core: () => core,
  })
}

async function call<T>(channel: IpcChannel, args?: unknown): Promise<IpcResult<T>> {
  return (await dispatchIpc(handlers(), channel, args, web)) as IpcResult<T>
}

async function value<T>(channel: IpcChannel, args?: unknown): Promise<T> {
  const result = await call<T>(channel, args)
  if (!result.ok) throw new Error(`${channel}: ${result.error.code} ${result.error.message}`)
  return result.value
}

/** Resolves with the first event heard from `from` on that matches; bounded in time. */
function nextEvent<E extends IpcEventName>(
  name: E,
  matches: (payload: IpcEvents[E]) => boolean,
  from = heard.length,
  timeoutMs = 30_000,
): Promise<IpcEvents[E]> {
  return new Promise((resolve, reject) => {
    const look = () => {
      const found = heard
        .slice(from)
        .find((e) => e.event === name && matches(e.payload as IpcEvents[E]))
      if (!found) return false
      clearTimeout(timer)
      waiting.delete(check)
      resolve(found.payload as IpcEvents[E])
      return true
    }
    const check = () => {
      look()
    }
    const timer = setTimeout(() => {
      waiting.delete(check)
      reject(new Error(`no ${name} event matched within ${timeoutMs} ms`))
    }, timeoutMs)
    if (!look()) waiting.add(check)
  })
}

const progressOf = (id: string) =>
  heard
    .filter((e) => e.event === 'uploads.progress')
    .filter((e) => (e.payload as UploadProgressEvent).upload.id === id)

async function png(seed: number, size = 24): Promise<Buffer> {
  const background = { r: (seed * 37) % 256, g: (seed * 91) % 256, b: (seed * 53) % 256 }
  return sharp({ create: { width: size, height: size, channels: 3, background } })
    .png()
    .toBuffer()
}

async function uploadAndWait(path: string, extra: object = {}) {
  const from = heard.length
  const started = await value<UploadSummary>('uploads.start', { path, ...extra })
  const end = await nextEvent(
    'uploads.progress',
    (e) =>
      e.upload.id === started.id && ['finished', 'failed', 'canceled'].includes(e.upload.state),
    from,
  )
  return { started, end: end.upload }
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  scratch = mkdtempSync(join(tmpdir(), 'atelier-assets-channels-'))
  const home = join(scratch, 'home')
  mkdirSync(home)
  logger = openLogger({ home, level: 'info' })
  core = openCore({ home, logger, backend: { ...sandboxBackend(sandbox), close: async () => {} } })
  core.onEvent((event, payload) => {
    heard.push({ event, payload, at: performance.now() })
    for (const check of [...waiting]) check()
  })
  expect((await core.syncNow()).last?.outcome).toBe('ok')
}, 60_000)

afterAll(async () => {
  await core.close()
  logger.close()
  await sandbox.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe('uploading a folder through the channels', () => {
  let shoot: string
  let summary: UploadSummary

  beforeAll(async () => {
    shoot = join(scratch, 'shoot')
    mkdirSync(join(shoot, 'day1'), { recursive: true })
    mkdirSync(join(shoot, 'day2'), { recursive: true })
    writeFileSync(join(shoot, 'harbour.png'), await png(1, 64))
    writeFileSync(join(shoot, 'harbour copy.png'), await png(1, 64))
    writeFileSync(join(shoot, 'day1', 'dunes.png'), await png(2))
    writeFileSync(join(shoot, 'day1', 'gulls.png'), await png(3))
    writeFileSync(join(shoot, 'day2', 'pier.png'), await png(4))
    writeFileSync(join(shoot, 'day2', 'dunes again.png'), await png(2))
    writeFileSync(join(shoot, 'notes.txt'), 'not a picture')
    const from = heard.length
    const { end } = await uploadAndWait(shoot)
    summary = end
    // The finished upload starts a sync; its assets are in the mirror once it says so.
    await nextEvent('assets.changed', (e) => e.reason === 'uploaded', from)
  }, 60_000)

  it('sends each file once, skips the duplicates and what is not media, and says so', () => {
    expect(summary).toMatchObject({
      root: shoot,
      folderName: 'shoot',
      state: 'finished',
      files: { total: 6, done: 4, duplicates: 2, failed: 0 },
      skipped: 1,
      failures: [],
    })
    expect(summary.bytes.done).toBe(summary.bytes.total)
  })

  it('pushes progress at most ten times a second, files only when their state changes', () => {
    const events = progressOf(summary.id)
    expect(events.length).toBeGreaterThan(1)
    // The last event (the outcome) goes at once; every other one waits its turn.
    for (let i = 1; i < events.length - 1; i++) {
      const gap = (events[i]?.at ?? 0) - (events[i - 1]?.at ?? 0)
      expect(gap).toBeGreaterThanOrEqual(95)
    }
    const last = new Map<number, string>()
    for (const { payload } of events) {
      for (const file of (payload as UploadProgressEvent).files) {
        expect(last.get(file.seq)).not.toBe(file.state)
        last.set(file.seq, file.state)
      }
    }
    expect([...last.values()].sort()).toEqual([
      'done',
      'done',
      'done',
      'done',
      'duplicate',
      'duplicate',
    ])
  })

  it('lists the folder tree with the count of each folder', async () => {
    const tree = await value<AssetFolderTree>('assets.folders')
    const count = (path: string) => tree.folders.find((f) => f.path === path)?.assetCount
    expect(count('/shoot')).toBe(1)
    // Of two identical files, the one read first is sent and the other takes its asset: the
    // two dunes are read side by side, so either day may hold theirs.
    expect([count('/shoot/day1'), count('/shoot/day2')].sort()).toEqual([1, 2])
    const day1 = tree.folders.find((f) => f.path === '/shoot/day1')
    const top = tree.folders.find((f) => f.path === '/shoot')
    expect(day1?.parentId).toBe(top?.id)
  })

  it('filters the list by folder, type, size and words, and pages it by keyset', async () => {
    const tree = await value<AssetFolderTree>('assets.folders')
    const day1 = tree.folders.find((f) => f.path === '/shoot/day1')
    const names = (page: AssetPage) => page.items.map((a) => a.name).sort()

    // Which of the two identical dunes was sent (see above) decides where their asset is.
    const [dunes] = names(await value('assets.list', { text: 'dunes' }))
    expect(['dunes.png', 'dunes again.png']).toContain(dunes)
    expect(names(await value('assets.list', { folder: day1?.id }))).toEqual(
      dunes === 'dunes.png' ? ['dunes.png', 'gulls.png'] : ['gulls.png'],
    )
    expect(names(await value('assets.list', { mediaType: 'video' }))).toEqual([])
    // The harbour is the only 64-pixel image, the largest file, sent once.
    const big = names(await value<AssetPage>('assets.list', { minBytes: 200 }))
    expect(big.filter((name) => name.startsWith('harbour'))).toHaveLength(1)
    expect(big).not.toContain('gulls.png')
    expect(names(await value('assets.list', { text: 'gulls' }))).toEqual(['gulls.png'])
    expect(names(await value('assets.list', { text: 'day2' }))).toEqual(
      dunes === 'dunes again.png' ? ['dunes again.png', 'pier.png'] : ['pier.png'],
    )
    const all = await value<AssetPage>('assets.list', {})
    const seen: string[] = []
    let cursor: string | null = null
    for (let page = 0; page < 10; page++) {
      const result: AssetPage = await value('assets.list', { limit: 3, cursor })
      seen.push(...result.items.map((a) => a.id))
      cursor = result.next
      if (cursor === null) break
    }
    expect(seen).toEqual(all.items.map((a) => a.id))
    expect(new Set(seen).size).toBe(seen.length)
    const wrong = await call('assets.list', { cursor: 'nonsense' })
    expect(wrong).toMatchObject({ ok: false, error: { code: 'ASSETS_INVALID_CURSOR' } })
  })

  it('opens an asset with the runs that used it as an input', async () => {
    const page = await value<AssetPage>('assets.list', { text: 'gulls' })
    const gulls = page.items[0] as AssetItem
    const run = await sandbox.call('POST', '/v1/models/atelier/upscale/runs', {
      body: { input: { image: gulls.id, scale: 2 } },
    })
    expect(run.status).toBe(201)
    expect((await core.syncNow()).last?.outcome).toBe('ok')
    const detail = await value<AssetDetail>('assets.get', { id: gulls.id })
    expect(detail).toMatchObject({
      name: 'gulls.png',
      folderPath: '/shoot/day1',
      usedByMore: false,
    })
    expect(detail.usedBy.map((use) => [use.runId, use.model])).toEqual([
      [(run.body as { id: string }).id, 'atelier/upscale'],
    ])
    const dunes = (await value<AssetPage>('assets.list', { text: 'dunes' })).items[0]
    expect((await value<AssetDetail>('assets.get', { id: dunes?.id })).usedBy).toEqual([])
    const missing = await call('assets.get', { id: 'no-such-asset' })
    expect(missing).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
  })

  it('creates, renames and moves folders, and moves assets into them', async () => {
    const made = await value<AssetFolderItem>('assets.createFolder', { name: 'Selects' })
    expect(made).toMatchObject({ name: 'Selects', parentId: null, path: '/Selects' })
    const clash = await call('assets.createFolder', { name: 'selects' })
    expect(clash).toMatchObject({ ok: false, error: { code: 'FOLDER_NAME_TAKEN' } })
    const inner = await value<AssetFolderItem>('assets.createFolder', {
      name: 'Best',
      parentId: made.id,
    })
    const loop = await call('assets.moveFolder', { id: made.id, parentId: inner.id })
    expect(loop).toMatchObject({ ok: false, error: { code: 'FOLDER_INTO_ITSELF' } })

    const renamed = await value<AssetFolderItem>('assets.renameFolder', {
      id: made.id,
      name: 'Picks',
    })
    expect(renamed.path).toBe('/Picks')
    let tree = await value<AssetFolderTree>('assets.folders')
    expect(tree.folders.find((f) => f.id === inner.id)?.path).toBe('/Picks/Best')

    const moved = await value<AssetFolderItem>('assets.moveFolder', {
      id: inner.id,
      parentId: null,
    })
    expect(moved).toMatchObject({ parentId: null, path: '/Best' })

    const pier = (await value<AssetPage>('assets.list', { text: 'pier' })).items[0] as AssetItem
    const after = await value<AssetItem[]>('assets.move', { ids: [pier.id], folderId: inner.id })
    expect(after.map((a) => a.folderId)).toEqual([inner.id])
    expect(
      (await value<AssetPage>('assets.list', { folder: inner.id })).items.map((a) => a.name),
    ).toEqual(['pier.png'])
    tree = await value<AssetFolderTree>('assets.folders')
    expect(tree.folders.find((f) => f.id === inner.id)?.assetCount).toBe(1)

    const full = await call('assets.deleteFolder', { id: inner.id })
    expect(full).toMatchObject({ ok: false, error: { code: 'FOLDER_NOT_EMPTY' } })
  })

  it('refuses to upload what is not a folder, before anything starts', async () => {
    const file = join(scratch, 'shoot', 'notes.txt')
    expect(await call('uploads.start', { path: file })).toMatchObject({
      ok: false,
      error: { code: 'NOT_A_FOLDER' },
    })
    expect(await call('uploads.start', { path: 'relative/shoot' })).toMatchObject({
      ok: false,
      error: { code: 'PATH_NOT_ABSOLUTE' },
    })
  })
})

describe('uploading files dropped on the window', () => {
  // What a drop of a.png, c.png and notes.txt from this folder sends: the folder, and the files.
  let desk: string

  beforeAll(async () => {
    desk = join(scratch, 'desk')
    mkdirSync(join(desk, 'sub'), { recursive: true })
    writeFileSync(join(desk, 'drop-a.png'), await png(201))
    writeFileSync(join(desk, 'drop-b.png'), await png(202))
    writeFileSync(join(desk, 'drop-c.png'), await png(203))
    writeFileSync(join(desk, 'sub', 'drop-d.png'), await png(204))
    writeFileSync(join(desk, 'notes.txt'), 'not a picture')
  })

  const dropNames = async () =>
    (await value<AssetPage>('assets.list', { text: 'drop' })).items.map((a) => a.name).sort()

  it('sends only the named files, to the top level, and names the upload by them', async () => {
    const from = heard.length
    const { started, end } = await uploadAndWait(desk, {
      files: ['drop-c.png', 'drop-a.png', 'notes.txt'],
    })
    expect(started).toMatchObject({
      root: desk,
      folderName: null,
      named: { count: 3, first: 'drop-a.png' },
    })
    expect(end).toMatchObject({
      state: 'finished',
      files: { total: 2, done: 2, duplicates: 0, failed: 0 },
      // notes.txt is not media: left out as it would be from a folder.
      skipped: 1,
      unreadable: 0,
    })
    const rows = await value<{ relativePath: string }[]>('uploads.files', { id: started.id })
    expect(rows.map((row) => row.relativePath).sort()).toEqual(['drop-a.png', 'drop-c.png'])
    await nextEvent('assets.changed', (e) => e.reason === 'uploaded', from)
    // Neither the rest of the folder nor an asset folder named after it.
    expect(await dropNames()).toEqual(['drop-a.png', 'drop-c.png'])
    const page = await value<AssetPage>('assets.list', { text: 'drop' })
    expect(page.items.map((a) => a.folderId)).toEqual([null, null])
    const tree = await value<AssetFolderTree>('assets.folders')
    expect(tree.folders.map((f) => f.path)).not.toContain('/desk')
  }, 60_000)

  it('takes a file of a sub-folder by its path inside the folder, into a folder when named', async () => {
    const from = heard.length
    const { end } = await uploadAndWait(desk, { files: ['sub/drop-d.png'], folder: 'Dropped' })
    expect(end).toMatchObject({ state: 'finished', folderName: 'Dropped', files: { done: 1 } })
    await nextEvent('assets.changed', (e) => e.reason === 'uploaded', from)
    const tree = await value<AssetFolderTree>('assets.folders')
    const sub = tree.folders.find((f) => f.path === '/Dropped/sub')
    expect(sub).toBeDefined()
    const page = await value<AssetPage>('assets.list', { folder: sub?.id })
    expect(page.items.map((a) => a.name)).toEqual(['drop-d.png'])
  }, 60_000)

  it('lists a named file that is gone, or is a folder, as unreadable', async () => {
    const { end } = await uploadAndWait(desk, { files: ['gone.png', 'sub'] })
    expect(end).toMatchObject({
      state: 'finished',
      files: { total: 0, done: 0 },
      unreadable: 2,
    })
    expect(await dropNames()).toEqual(['drop-a.png', 'drop-c.png', 'drop-d.png'])
  }, 60_000)

  it('refuses names that lead out of the folder, and a watch of named files', async () => {
    for (const files of [['../shoot/harbour.png'], ['/etc/hostname'], ['sub/./x.png'], []]) {
      expect(await call('uploads.start', { path: desk, files })).toMatchObject({
        ok: false,
        error: { code: 'INVALID_ARGUMENT' },
      })
    }
    expect(
      await call('uploads.start', { path: desk, files: ['drop-b.png'], watch: true }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
    expect(
      await call('uploads.start', { path: join(desk, 'drop-b.png'), files: ['x.png'] }),
    ).toMatchObject({ ok: false, error: { code: 'NOT_A_FOLDER' } })
  })

  it('resumes an earlier session’s upload of named files with those files only', async () => {
    const later = join(scratch, 'later')
    mkdirSync(later)
    for (const [name, seed] of [
      ['lantern-x.png', 211],
      ['lantern-y.png', 212],
      ['lantern-z.png', 213],
    ] as const) {
      writeFileSync(join(later, name), await png(seed))
    }
    // What a session that was killed mid-upload of a drop of x and y leaves in the ledger.
    const uploads = core.databases.ledger.uploads
    const manifest = uploads.createManifest({
      profile: sandboxBackend(sandbox).profile,
      orgId: core.orgId,
      rootPath: later,
      targetFolderId: null,
      filesOnly: true,
    })
    uploads.addFiles(
      manifest.id,
      ['lantern-x.png', 'lantern-y.png'].map((name) => {
        const stats = statSync(join(later, name))
        return { relativePath: name, sizeBytes: stats.size, mtimeMs: Math.floor(stats.mtimeMs) }
      }),
    )
    uploads.setManifestState(manifest.id, 'uploading')

    const listed = await value<UploadSummary[]>('uploads.list')
    expect(listed.find((u) => u.id === manifest.id)).toMatchObject({
      state: 'interrupted',
      root: later,
      named: { count: 2, first: 'lantern-x.png' },
    })
    const from = heard.length
    const resumed = await value<UploadSummary>('uploads.resume', { id: manifest.id })
    expect(resumed.named).toEqual({ count: 2, first: 'lantern-x.png' })
    const end = await nextEvent(
      'uploads.progress',
      (e) => e.upload.id === manifest.id && ['finished', 'failed'].includes(e.upload.state),
      from,
    )
    expect(end.upload).toMatchObject({ state: 'finished', files: { total: 2, done: 2 } })
    await nextEvent('assets.changed', (e) => e.reason === 'uploaded', from)
    const names = (await value<AssetPage>('assets.list', { text: 'lantern' })).items
      .map((a) => a.name)
      .sort()
    expect(names).toEqual(['lantern-x.png', 'lantern-y.png'])
  }, 60_000)
})

describe('pausing and resuming an upload', () => {
  it('stops at pause, goes on at resume and finishes every file', async () => {
    const root = join(scratch, 'batch')
    mkdirSync(root)
    for (let i = 0; i < 30; i++) writeFileSync(join(root, `frame-${i}.png`), await png(100 + i))
    const from = heard.length
    const started = await value<UploadSummary>('uploads.start', { path: root, concurrency: 1 })
    await nextEvent(
      'uploads.progress',
      (e) => e.upload.id === started.id && e.upload.files.done >= 1,
      from,
    )
    const paused = await value<UploadSummary>('uploads.pause', { id: started.id })
    expect(paused.state).toBe('paused')
    const pausedEvent = await nextEvent(
      'uploads.progress',
      (e) => e.upload.id === started.id && e.upload.state === 'paused',
      from,
    )
    expect(pausedEvent.upload.files.done).toBeLessThan(30)
    const listed = await value<UploadSummary[]>('uploads.list')
    expect(listed.find((u) => u.id === started.id)?.state).toBe('paused')

    const resumeFrom = heard.length
    expect((await value<UploadSummary>('uploads.resume', { id: started.id })).state).toBe(
      'uploading',
    )
    const end = await nextEvent(
      'uploads.progress',
      (e) => e.upload.id === started.id && e.upload.state === 'finished',
      resumeFrom,
    )
    expect(end.upload.files).toMatchObject({ total: 30, done: 30, failed: 0 })
    const again = await call('uploads.resume', { id: started.id })
    expect(again).toMatchObject({ ok: false, error: { code: 'UPLOAD_NOT_PAUSED' } })
    const files = await value<{ state: string }[]>('uploads.files', { id: started.id })
    expect(files.filter((f) => f.state === 'done')).toHaveLength(30)
  }, 60_000)
})

describe('browsing the folders of this machine', () => {
  it('starts at home and lists sub-folders only, hidden ones left out', async () => {
    const home = await value<FolderListing>('uploads.browse', {})
    expect(home.path).toBe(homedir())
    const place = join(scratch, 'browse')
    mkdirSync(join(place, 'Beta'), { recursive: true })
    mkdirSync(join(place, 'alpha'))
    mkdirSync(join(place, '.cache'))
    writeFileSync(join(place, 'photo.png'), 'x')
    const listing = await value<FolderListing>('uploads.browse', { path: place })
    expect(listing).toMatchObject({ path: place, parent: scratch })
    expect(listing.folders).toEqual([
      { name: 'alpha', path: join(place, 'alpha') },
      { name: 'Beta', path: join(place, 'Beta') },
    ])
  })

  it('refuses a file, a missing folder and a relative path, saying why', async () => {
    const file = join(scratch, 'browse', 'photo.png')
    expect(await call('uploads.browse', { path: file })).toMatchObject({
      ok: false,
      error: { code: 'NOT_A_FOLDER' },
    })
    expect(await call('uploads.browse', { path: join(scratch, 'nowhere') })).toMatchObject({
      ok: false,
      error: { code: 'FOLDER_MISSING' },
    })
    expect(await call('uploads.browse', { path: 'Pictures' })).toMatchObject({
      ok: false,
      error: { code: 'PATH_NOT_ABSOLUTE' },
    })
  })

  it('refuses a folder it cannot read', async () => {
    // A link that points at itself cannot be read by anyone, root included.
    const loop = join(scratch, 'loop')
    symlinkSync(loop, loop)
    expect(await call('uploads.browse', { path: loop })).toMatchObject({
      ok: false,
      error: { code: 'FOLDER_UNREADABLE' },
    })
    // Permissions bind everyone but root (CI and this machine run as root).
    if (process.getuid?.() === 0) return
    const locked = join(scratch, 'locked')
    mkdirSync(locked)
    chmodSync(locked, 0o000)
    try {
      expect(await call('uploads.browse', { path: locked })).toMatchObject({
        ok: false,
        error: { code: 'FOLDER_UNREADABLE' },
      })
    } finally {
      chmodSync(locked, 0o755)
    }
  })

  it('has no system folder dialog in the browser mode', async () => {
    expect(await call('uploads.chooseFolder')).toMatchObject({
      ok: false,
      error: { code: 'UNAVAILABLE' },
    })
  })
})

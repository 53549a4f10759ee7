import { createHash, randomBytes } from 'node:crypto'
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Asset, AssetFolder } from '../../src-shared/api'
import { openDatabases, type Databases } from '../../src-main/db'
import { createServiceClient, type RequestLog, type ServiceClient } from '../../src-main/service'
import {
  startFolderUpload,
  watchFolder,
  type FileProgress,
  type FolderWatchOptions,
  type UploadProgress,
} from '../../src-main/uploads'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

let sandbox: TestSandbox
let client: ServiceClient
let scratch: string
let databases: Databases

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  scratch = mkdtempSync(join(tmpdir(), 'atelier-uploads-folder-'))
  databases = openDatabases(join(scratch, 'home'))
})

afterAll(async () => {
  databases.close()
  rmSync(scratch, { recursive: true, force: true })
  await sandbox.close()
})

/** A small real PNG, different for each `seed`. */
async function png(seed: number, size = 16): Promise<Buffer> {
  const background = { r: (seed * 37) % 256, g: (seed * 91) % 256, b: (seed * 53) % 256 }
  return sharp({ create: { width: size, height: size, channels: 3, background } })
    .png()
    .toBuffer()
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

async function assetsIn(folderId: string | null): Promise<Asset[]> {
  const assets: Asset[] = []
  for await (const asset of client.list('/v1/assets', { params: { query: { limit: 500 } } })) {
    if (asset.folder_id === folderId) assets.push(asset)
  }
  return assets
}

async function folders(): Promise<AssetFolder[]> {
  const all: AssetFolder[] = []
  for await (const f of client.list('/v1/asset-folders', { params: { query: { limit: 500 } } })) {
    all.push(f)
  }
  return all
}

function options(root: string, extra: Partial<FolderWatchOptions> = {}): FolderWatchOptions {
  return {
    service: client,
    uploads: databases.ledger.uploads,
    profile: 'default',
    orgId: sandbox.orgId,
    root,
    ...extra,
  }
}

describe('a folder upload', () => {
  it('mirrors the tree, sends identical files once, leaves out what is not media, and says so', async () => {
    const root = join(scratch, 'shoot')
    mkdirSync(join(root, 'day 1', 'raw'), { recursive: true })
    mkdirSync(join(root, 'day 2'), { recursive: true })
    const a = await png(1)
    const b = await png(2)
    const c = await png(3)
    writeFileSync(join(root, 'cover.png'), a)
    writeFileSync(join(root, 'day 1', 'a.png'), b)
    writeFileSync(join(root, 'day 1', 'raw', 'b.png'), c)
    // The same bytes twice in one folder, and a third time elsewhere.
    writeFileSync(join(root, 'day 2', 'same-1.png'), c)
    writeFileSync(join(root, 'day 2', 'same-2.png'), c)
    writeFileSync(join(root, 'notes.txt'), 'not a picture')
    writeFileSync(join(root, '.hidden.png'), a)

    const files: FileProgress[] = []
    const progress: UploadProgress[] = []
    const upload = startFolderUpload(
      options(root, {
        onFile: (f) => files.push(f),
        onProgress: (p) => progress.push(p),
      }),
    )
    const summary = await upload.done
    expect(summary.state).toBe('finished')
    expect(summary.files).toEqual({
      total: 5,
      uploaded: 3,
      duplicates: 2,
      failed: 0,
      left: 0,
      already: 0,
    })
    expect(summary.skipped).toMatchObject({ hidden: 1, notMedia: 1 })
    // Only the three distinct files' bytes went out.
    expect(summary.bytes.sent).toBe(a.length + b.length + c.length)

    const tree = await folders()
    const top = tree.find((f) => f.name === 'shoot' && f.parent_id === null)
    const day1 = tree.find((f) => f.name === 'day 1' && f.parent_id === top?.id)
    const raw = tree.find((f) => f.name === 'raw' && f.parent_id === day1?.id)
    const day2 = tree.find((f) => f.name === 'day 2' && f.parent_id === top?.id)
    expect([top, day1, raw, day2].every(Boolean)).toBe(true)
    expect((await assetsIn(top?.id ?? null)).map((x) => [x.name, x.sha256])).toEqual([
      ['cover.png', sha256(a)],
    ])
    expect((await assetsIn(raw?.id ?? null)).map((x) => x.sha256)).toEqual([sha256(c)])

    // Every file went from queued to an end, and the bar reached the whole.
    const ends = new Map(files.map((f) => [f.relativePath, f.state]))
    expect(Object.fromEntries(ends)).toEqual({
      'cover.png': 'done',
      'day 1/a.png': 'done',
      'day 1/raw/b.png': 'done',
      'day 2/same-1.png': 'duplicate',
      'day 2/same-2.png': 'duplicate',
    })
    const last = progress.at(-1)
    expect(last?.phase).toBe('finished')
    expect(last?.bytes.done).toBe(last?.bytes.total)
    expect(upload.progress().files).toEqual({ total: 5, done: 3, duplicates: 2, failed: 0 })
  })

  it('makes the asset of identical files from the first of them in sorted path order, however the hashing goes', async () => {
    const root = join(scratch, 'identical copies')
    const same = await png(77, 64)
    // Same size, other bytes (solid squares compress alike): in the same line as the copies.
    const other = await png(1, 64)
    expect(other.length).toBe(same.length)
    const COPIES = 12
    // Written last to first, so that neither the disk's order nor the times favour the first.
    for (let i = COPIES - 1; i >= 0; i--) {
      const dir = join(root, `copy ${String(i).padStart(2, '0')}`)
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, `shot ${i}.png`), same)
      if (i % 3 === 0) writeFileSync(join(dir, 'other.png'), other)
    }
    const summary = await startFolderUpload(options(root, { concurrency: 6 })).done
    expect(summary.state).toBe('finished')
    expect(summary.files).toMatchObject({ total: COPIES + 4, uploaded: 2, duplicates: COPIES + 2 })

    const tree = await folders()
    const top = tree.find((f) => f.name === 'identical copies' && f.parent_id === null)
    const first = tree.find((f) => f.name === 'copy 00' && f.parent_id === top?.id)
    expect((await assetsIn(first?.id ?? null)).map((x) => [x.name, x.sha256]).sort()).toEqual(
      [
        ['other.png', sha256(other)],
        ['shot 0.png', sha256(same)],
      ].sort(),
    )
  })

  it('sends each small file with its three requests and nothing more, hashes kept in the ledger', async () => {
    const root = join(scratch, 'many small')
    mkdirSync(join(root, 'sub'), { recursive: true })
    const FILES = 24
    const pictures = await Promise.all(Array.from({ length: FILES }, (_, i) => png(500 + i, 24)))
    pictures.forEach((bytes, i) => {
      writeFileSync(
        join(root, i % 2 === 0 ? '' : 'sub', `s${String(i).padStart(2, '0')}.png`),
        bytes,
      )
    })
    const api: RequestLog[] = []
    const logged = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      log: (entry) => api.push(entry),
    })
    let puts = 0
    const counting: typeof fetch = (input, init) => {
      if (init?.method === 'PUT') puts++
      return fetch(input, init)
    }
    const summary = await startFolderUpload(
      options(root, { service: logged, fetch: counting, concurrency: 3 }),
    ).done
    expect(summary.files).toMatchObject({ total: FILES, uploaded: FILES, failed: 0 })

    const count = (method: string, path: RegExp) =>
      api.filter((entry) => entry.method === method && path.test(entry.path)).length
    expect(count('POST', /^\/v1\/asset-uploads$/)).toBe(FILES)
    expect(puts).toBe(FILES)
    expect(count('POST', /\/confirmations$/)).toBe(FILES)
    // Besides those, the asset folders: listed once, the two made (the folder and 'sub').
    expect(count('GET', /^\/v1\/asset-folders$/)).toBe(1)
    expect(count('POST', /^\/v1\/asset-folders$/)).toBe(2)
    expect(api).toHaveLength(3 * 1 + 2 * FILES)

    const rows = databases.ledger.uploads.files(summary.manifestId, { limit: 1000 }).items
    expect(rows.map((row) => [row.state, row.sha256, row.contentType])).toEqual(
      [...rows]
        .sort((a, b) => a.seq - b.seq)
        .map((row) => {
          const i = Number(/s(\d+)\.png$/.exec(row.relativePath)?.[1])
          return ['confirmed', sha256(pictures[i] ?? Buffer.alloc(0)), 'image/png']
        }),
    )
  })

  it('goes on with the same manifest: nothing finished is hashed or sent again, new files are', async () => {
    const root = join(scratch, 'again')
    mkdirSync(root)
    writeFileSync(join(root, 'one.png'), await png(11))
    const first = await startFolderUpload(options(root)).done
    expect(first.files.uploaded).toBe(1)
    writeFileSync(join(root, 'two.png'), await png(12))
    const files: FileProgress[] = []
    const second = await startFolderUpload(options(root, { onFile: (f) => files.push(f) })).done
    expect(second.manifestId).toBe(first.manifestId)
    // one.png is counted as already there, not as uploaded again.
    expect(second.files).toMatchObject({ total: 2, uploaded: 1, already: 1, failed: 0 })
    // one.png was not touched: no hashing, no sending.
    expect(files.filter((f) => f.relativePath === 'one.png')).toEqual([])
    expect(second.bytes.sent).toBe((await png(12)).length)
  })

  it('uploads into the folder selected in the tree: its tree goes inside that folder', async () => {
    const coast = await client.post('/v1/asset-folders', {
      body: { name: 'Coast selected', parent_id: null },
    })
    const root = join(scratch, 'harbour')
    mkdirSync(join(root, 'boats'), { recursive: true })
    // Pictures of their own: bytes another test uploads would be answered as that asset.
    const [quay, boat] = await Promise.all([png(451), png(452)])
    writeFileSync(join(root, 'quay.png'), quay)
    writeFileSync(join(root, 'boats', 'skiff.png'), boat)
    const summary = await startFolderUpload(options(root, { into: coast.id })).done
    expect(summary.files).toMatchObject({ total: 2, uploaded: 2, failed: 0 })
    const tree = await folders()
    const under = tree
      .map((f) => f.path)
      .filter((path) => path.includes('harbour'))
      .sort()
    expect(under).toEqual(['/Coast selected/harbour', '/Coast selected/harbour/boats'])
    const harbour = tree.find((f) => f.path === '/Coast selected/harbour')
    expect((await assetsIn(harbour?.id ?? '')).map((a) => a.sha256)).toEqual([sha256(quay)])
  })

  it('answers bytes the organization already holds as duplicates, sending nothing', async () => {
    const root = join(scratch, 'known')
    mkdirSync(root)
    writeFileSync(join(root, 'copy-of-cover.png'), await png(1))
    const summary = await startFolderUpload(options(root, { folder: 'known elsewhere' })).done
    expect(summary.files).toMatchObject({ total: 1, uploaded: 0, duplicates: 1 })
    expect(summary.bytes.sent).toBe(0)
  })

  it('lets the copy whose upload is under way go on, not an identical file listed before it', async () => {
    const root = join(scratch, 'copies')
    mkdirSync(root)
    // Three parts of 8 MiB; an MP4 header so that the scan takes it for a video.
    const bytes = randomBytes(20 * 1024 * 1024)
    Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex').copy(bytes, 0)
    writeFileSync(join(root, 'a.mp4'), bytes)
    writeFileSync(join(root, 'b.mp4'), bytes)
    let puts = 0
    let stopAtSecondPart = true
    const counting: typeof fetch = (input, init) => {
      if ((init?.method ?? 'GET') === 'PUT') {
        puts++
        // a.mp4 is listed first, so it sends: stop it as its second part leaves (one part in
        // flight at a time, so the first is recorded by then).
        if (stopAtSecondPart && puts === 2) first.cancel()
      }
      return fetch(input, init)
    }
    const first = startFolderUpload(
      options(root, { concurrency: 1, partsInFlight: 1, fetch: counting }),
    )
    expect((await first.done).state).toBe('canceled')
    const { uploads } = databases.ledger
    const rows = uploads.files((await first.done).manifestId).items
    const [a, b] = rows
    if (!a?.uploadId || !b || a.sha256 === null) throw new Error('a.mp4 did not start sending')
    expect(uploads.finishedParts(a.seq)).toHaveLength(1)
    // What a kill can leave when the two were hashed side by side and b.mp4 won the race: b.mp4
    // with the upload under way, a.mp4 hashed and not sending.
    uploads.setHash(b.seq, a.sha256, 'video/mp4')
    uploads.startUpload(b.seq, {
      uploadId: a.uploadId,
      expiresMs: a.uploadExpiresMs,
      partSize: a.partSize ?? 0,
      partCount: a.partCount ?? 0,
      folderId: a.folderId,
    })
    for (const part of uploads.finishedParts(a.seq)) uploads.recordPart(b.seq, part)
    uploads.addFiles(a.manifestId, [{ ...a, mtimeMs: a.mtimeMs + 1 }])
    utimesSync(join(root, 'a.mp4'), new Date(), new Date(a.mtimeMs + 1))
    uploads.setHash(a.seq, a.sha256, 'video/mp4')

    puts = 0
    stopAtSecondPart = false
    const second = await startFolderUpload(options(root, { concurrency: 2, fetch: counting })).done
    expect(second.files).toMatchObject({ total: 2, uploaded: 1, duplicates: 1, failed: 0 })
    // Only b.mp4's two missing parts went out: nothing was declared or sent again for a.mp4.
    expect(puts).toBe(2)
    expect(uploads.getFile(b.seq)?.state).toBe('confirmed')
    expect(uploads.getFile(a.seq)?.state).toBe('duplicate')
  })

  it('pauses with nothing more sent, resumes, and finishes', async () => {
    const root = join(scratch, 'pausing')
    mkdirSync(root)
    for (let i = 0; i < 6; i++) writeFileSync(join(root, `p${i}.png`), await png(100 + i, 64))
    let sentWhilePaused = 0
    let paused = false
    const upload = startFolderUpload(
      options(root, {
        concurrency: 1,
        onFile: (f) => {
          if (f.state === 'done' && f.relativePath === 'p0.png') {
            upload.pause()
            paused = true
          }
        },
        onProgress: (p) => {
          if (paused && p.phase === 'paused') sentWhilePaused = p.bytesSent
        },
      }),
    )
    await expect.poll(() => upload.progress().phase, { timeout: 10_000 }).toBe('paused')
    const before = upload.progress()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(upload.progress().bytesSent).toBe(before.bytesSent)
    expect(upload.progress().files.done).toBeLessThan(6)
    expect(sentWhilePaused).toBe(before.bytesSent)
    upload.resume()
    const summary = await upload.done
    expect(summary.state).toBe('finished')
    expect(summary.files).toMatchObject({ total: 6, uploaded: 6, failed: 0 })
  })

  it('cancels, and the next upload of the folder sends only what is left', async () => {
    const root = join(scratch, 'canceling')
    mkdirSync(root)
    for (let i = 0; i < 5; i++) writeFileSync(join(root, `c${i}.png`), await png(200 + i, 64))
    const upload = startFolderUpload(
      options(root, {
        concurrency: 1,
        onFile: (f) => {
          if (f.state === 'done' && f.relativePath === 'c1.png') upload.cancel()
        },
      }),
    )
    const canceled = await upload.done
    expect(canceled.state).toBe('canceled')
    expect(canceled.files.uploaded).toBe(2)
    expect(canceled.files.left).toBe(3)
    const files: FileProgress[] = []
    const rest = await startFolderUpload(options(root, { onFile: (f) => files.push(f) })).done
    expect(rest.state).toBe('finished')
    expect(rest.files).toMatchObject({ uploaded: 3, already: 2, failed: 0 })
    expect(new Set(files.map((f) => f.relativePath))).toEqual(
      new Set(['c2.png', 'c3.png', 'c4.png']),
    )
  })

  it('reports a file that fails and goes on with the others', async () => {
    const root = join(scratch, 'failing')
    mkdirSync(root)
    writeFileSync(join(root, 'good.png'), await png(300))
    writeFileSync(join(root, 'refused.png'), await png(301))
    // Storage refuses every part of the second upload for good: fresh URLs included.
    const set = await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ method: 'PUT', pathPrefix: '/_storage', status: 503, times: 1_000 }] },
    })
    expect(set.status).toBe(200)
    try {
      const summary = await startFolderUpload(
        options(root, {
          concurrency: 1,
          retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
        }),
      ).done
      expect(summary.state).toBe('failed')
      expect(summary.files.failed).toBe(2)
      expect(summary.failures.map((f) => f.code)).toEqual([
        'STORAGE_UNREACHABLE',
        'STORAGE_UNREACHABLE',
      ])
    } finally {
      await sandbox.call('DELETE', '/_sandbox/faults')
    }
    const retried = await startFolderUpload(options(root)).done
    expect(retried.state).toBe('finished')
    expect(retried.files).toMatchObject({ uploaded: 2, failed: 0 })
  })

  it('watches a folder and uploads what appears in it', async () => {
    const root = join(scratch, 'hot')
    mkdirSync(root)
    writeFileSync(join(root, 'first.png'), await png(400))
    const passes: number[] = []
    const watch = watchFolder(
      options(root, { settleMs: 200, onPass: (s) => passes.push(s.files.uploaded) }),
    )
    try {
      await expect.poll(() => passes.length, { timeout: 10_000 }).toBe(1)
      const dropped = await png(401)
      writeFileSync(join(root, 'dropped.png'), dropped.subarray(0, 10))
      appendFileSync(join(root, 'dropped.png'), dropped.subarray(10))
      // Waits for the outcome, not for a number of passes: on a busy machine the append can
      // come after the settle time, so a pass may first see the half-written file and leave it.
      const top = (await folders()).find((f) => f.name === 'hot' && f.parent_id === null)
      await expect
        .poll(async () => (await assetsIn(top?.id ?? null)).map((x) => x.name).sort(), {
          timeout: 15_000,
        })
        .toEqual(['dropped.png', 'first.png'])
      expect(passes.length).toBeGreaterThanOrEqual(2)
    } finally {
      await watch.stop()
    }
    await watch.done
  })
})

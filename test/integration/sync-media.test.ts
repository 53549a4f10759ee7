import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Asset, AssetUpload, Run } from '../../src-shared/api'
import { openDatabases, type Databases } from '../../src-main/db'
import { MediaStore } from '../../src-main/media-store'
import { createServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import {
  ledgerPins,
  MediaFetcher,
  type MediaFetcherOptions,
  type MediaProgress,
} from '../../src-main/sync/media'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const HOUR = 60 * 60 * 1000
const MiB = 1024 * 1024
const PROFILE = 'test'

type FileOutput = { url: string; sha256: string; content_type: string }

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

const folders: string[] = []

function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'atelier-sync-media-'))
  folders.push(dir)
  return dir
}

afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

/** The sandbox's runs, assets and sync, bound to one sandbox. */
function service(sandbox: TestSandbox) {
  const client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
  })

  async function run(slug: string, input: Record<string, unknown>): Promise<Run> {
    const [provider = '', model = ''] = slug.split('/')
    const created = await client.post('/v1/models/{provider}/{model}/runs', {
      params: { path: { provider, model } },
      body: { input },
    })
    const deadline = Date.now() + 20_000
    for (;;) {
      const read = await client.get('/v1/runs/{run_id}', {
        params: { path: { run_id: created.id } },
      })
      if (['succeeded', 'failed', 'canceled'].includes(read.status_code)) return read
      if (Date.now() > deadline) throw new Error(`run ${created.id} is still ${read.status_code}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** The three-step upload: start, PUT each part to its presigned URL, confirm. */
  async function upload(bytes: Buffer, filename: string): Promise<Asset> {
    const started: AssetUpload = await client.post('/v1/asset-uploads', {
      body: {
        filename,
        content_type: 'image/png',
        size_bytes: bytes.length,
        sha256: sha256(bytes),
      },
    })
    const parts = []
    for (const part of started.parts) {
      const from = (part.part_number - 1) * started.part_size
      const sent = await fetch(part.url, {
        method: 'PUT',
        body: bytes.subarray(from, from + started.part_size),
      })
      expect(sent.status).toBe(200)
      parts.push({ part_number: part.part_number, etag: sent.headers.get('etag') ?? '' })
    }
    return client.post('/v1/asset-uploads/{upload_id}/confirmations', {
      params: { path: { upload_id: started.id } },
      body: { parts },
    })
  }

  async function sync(dbs: Databases): Promise<void> {
    const engine = new SyncEngine({
      client,
      mirror: dbs.mirror,
      profileName: PROFILE,
      orgId: sandbox.orgId,
    })
    const result = await engine.syncAll({ collections: ['assets', 'runs'] })
    expect(result.state, result.message).toBe('ok')
  }

  /** What the service serves for a file now, read through a fresh URL. */
  async function freshBytes(runId: string, sha: string): Promise<Buffer> {
    const read = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: runId } } })
    const file = imagesOf(read).find((image) => image.sha256 === sha) ?? videoOf(read)
    const response = await fetch(file.url)
    expect(response.status).toBe(200)
    return Buffer.from(await response.arrayBuffer())
  }

  return { client, run, upload, sync, freshBytes }
}

const imagesOf = (run: Run) => (run.output?.images ?? []) as FileOutput[]
const videoOf = (run: Run) => run.output?.video as FileOutput

async function png(width: number, height: number, seed: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3)
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * seed + (i >> 6)) % 251
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer()
}

/** A fetch that notes the status the storage answered for every blob path. */
function notingFetch() {
  const seen: { path: string; status: number }[] = []
  const noting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    const url = input instanceof Request ? input.url : String(input)
    seen.push({ path: new URL(url).pathname, status: response.status })
    return response
  }
  return {
    seen,
    fetch: noting,
    statusesOf: (sha: string) => seen.filter((s) => s.path.endsWith(sha)).map((s) => s.status),
  }
}

async function thumbnailSize(store: MediaStore, sha: string | null) {
  expect(sha).not.toBeNull()
  const metadata = await sharp(readFileSync(store.path(sha ?? ''))).metadata()
  return { format: metadata.format, width: metadata.width, height: metadata.height }
}

describe('MediaFetcher against a sandbox', () => {
  let sandbox: TestSandbox
  let api: ReturnType<typeof service>
  /** Added to the sandbox's time; only ever moved forward, so the sync cursors stay valid. */
  let clockOffset = 0
  let dbs: Databases
  let media: MediaStore
  let noted: ReturnType<typeof notingFetch>
  let wide: Run
  let small: Run
  let animation: Run
  let caption: Run
  let failed: Run
  let asset: Asset
  let assetBytes: Buffer

  const fetcher = (extra: Partial<MediaFetcherOptions> = {}) =>
    new MediaFetcher({
      client: api.client,
      mirror: dbs.mirror,
      media,
      orgId: sandbox.orgId,
      ...extra,
    })

  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock: () => Date.now() + clockOffset })
    api = service(sandbox)
    const home = tempFolder()
    dbs = openDatabases(home)
    noted = notingFetch()
    media = new MediaStore({
      dir: join(home, 'media'),
      maxBytes: 256 * MiB,
      isPinned: ledgerPins(dbs.ledger),
      fetch: noted.fetch,
      recentUseMs: 0,
    })
    ;[wide, small, animation, caption, failed] = await Promise.all([
      api.run('atelier/text-to-image', {
        prompt: 'a teal harbour',
        width: 512,
        height: 320,
        num_images: 2,
      }),
      api.run('atelier/text-to-image', { prompt: 'a red kite', width: 96, height: 64 }),
      api.run('atelier/text-to-video', {
        prompt: 'gold leaves',
        width: 64,
        height: 64,
        fps: 4,
        duration_seconds: 0.5,
      }),
      api.run('atelier/caption', {
        image: `data:image/png;base64,${(await png(16, 16, 3)).toString('base64')}`,
      }),
      api.run('atelier/flaky', { prompt: 'never', failure_rate: 1 }),
    ])
    expect([wide, small, animation, caption].map((r) => r.status_code)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ])
    expect(failed.status_code).toBe('failed')
    assetBytes = await png(640, 480, 7)
    asset = await api.upload(assetBytes, 'harbour.png')
    await api.sync(dbs)
  }, 60_000)

  afterAll(async () => {
    await media.close()
    dbs.close()
    await sandbox.close()
  })

  it('stores every output under its sha256, with the bytes the service serves and WebP thumbnails', async () => {
    const progress: MediaProgress[] = []
    const report = await fetcher().pass({ onProgress: (p) => progress.push(p) })
    expect(report).toMatchObject({ state: 'ok', skipped: 0, refreshed: 0, failed: [] })
    // Two wide images, the small one, the animation, the asset; the caption made no file.
    expect(report.downloaded).toBe(5)
    expect(report.records).toBe(5)
    expect(progress.at(-1)).toEqual({ done: 5, total: 5, bytes: report.bytes })
    expect(progress.map((p) => p.done)).toEqual(
      [...progress.map((p) => p.done)].sort((a, b) => a - b),
    )

    let bytes = 0
    for (const run of [wide, small]) {
      const refs = media.forRun(run.id)
      expect(refs.map((r) => [r.role, r.sha256, r.contentType, r.stored])).toEqual(
        imagesOf(run).map((image, i) => [`images.${i}`, image.sha256, 'image/png', true]),
      )
      for (const ref of refs) {
        const stored = readFileSync(media.path(ref.sha256))
        expect(sha256(stored)).toBe(ref.sha256)
        expect(stored.equals(await api.freshBytes(run.id, ref.sha256))).toBe(true)
        bytes += stored.length
      }
    }
    const [first, second] = media.forRun(wide.id)
    expect(first?.sha256).not.toBe(second?.sha256)
    expect(await thumbnailSize(media, first?.thumbnailSha256 ?? null)).toEqual({
      format: 'webp',
      width: 256,
      height: 160,
    })
    // Never enlarged.
    expect(await thumbnailSize(media, media.forRun(small.id)[0]?.thumbnailSha256 ?? null)).toEqual({
      format: 'webp',
      width: 96,
      height: 64,
    })

    // The sandbox's video is an animated WebP: sharp reads its first frame.
    const [clip] = media.forRun(animation.id)
    expect(clip).toMatchObject({
      role: 'video',
      sha256: videoOf(animation).sha256,
      contentType: 'image/webp',
    })
    expect(
      readFileSync(media.path(clip?.sha256 ?? '')).equals(
        await api.freshBytes(animation.id, clip?.sha256 ?? ''),
      ),
    ).toBe(true)
    expect(await thumbnailSize(media, clip?.thumbnailSha256 ?? null)).toEqual({
      format: 'webp',
      width: 64,
      height: 64,
    })

    expect(media.forRun(caption.id)).toEqual([])
    expect(media.fetchRecord({ kind: 'run-output', id: caption.id })?.state).toBe('done')
    expect(media.fetchRecord({ kind: 'run-output', id: failed.id })).toBeNull()

    const [content] = media.forAsset(asset.id)
    expect(content).toMatchObject({
      role: 'content',
      sha256: asset.sha256,
      contentType: 'image/png',
      stored: true,
    })
    expect(readFileSync(media.path(asset.sha256)).equals(assetBytes)).toBe(true)
    expect(dbs.mirror.assets.thumbnailSha256(asset.id)).toBe(content?.thumbnailSha256)
    expect(await thumbnailSize(media, content?.thumbnailSha256 ?? null)).toEqual({
      format: 'webp',
      width: 256,
      height: 192,
    })
    bytes += assetBytes.length + readFileSync(media.path(clip?.sha256 ?? '')).length
    expect(report.bytes).toBe(bytes)
  })

  it('records the thumbnail on the asset without touching its record or its search entry', () => {
    const row = dbs.mirror.db
      .prepare('SELECT updated_ms, json FROM assets WHERE id = ?')
      .get(asset.id) as { updated_ms: number; json: string }
    expect(row.updated_ms).toBe(Date.parse(asset.updated_at))
    expect(JSON.parse(row.json)).toMatchObject({ id: asset.id, updated_at: asset.updated_at })
    const hits = dbs.mirror.db
      .prepare("SELECT count(*) FROM assets_fts WHERE assets_fts MATCH 'harbour'")
      .pluck()
      .get()
    expect(hits).toBe(1)
  })

  it('downloads nothing at the second pass, and puts back a thumbnail the mirror forgot', async () => {
    const before = noted.seen.length
    expect(await fetcher().pass()).toMatchObject({
      state: 'ok',
      downloaded: 0,
      records: 0,
      failed: [],
    })
    const thumbnail = dbs.mirror.assets.thumbnailSha256(asset.id)
    dbs.mirror.assets.setThumbnail(asset.id, null)
    expect(await fetcher().pass()).toMatchObject({ downloaded: 0, records: 0 })
    expect(dbs.mirror.assets.thumbnailSha256(asset.id)).toBe(thumbnail)
    expect(noted.seen.length).toBe(before)
  })

  it('goes on past a failed download and tries it again at the next pass', async () => {
    const [broken, fine] = await Promise.all([
      api.run('atelier/text-to-image', { prompt: 'a broken bridge', width: 64, height: 64 }),
      api.run('atelier/text-to-image', { prompt: 'a fine day', width: 64, height: 64 }),
    ])
    await api.sync(dbs)
    const brokenSha = imagesOf(broken)[0]?.sha256 ?? ''
    const faults = await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ pathPrefix: `/_storage/blobs/${brokenSha}`, status: 500, times: 1 }] },
    })
    expect(faults.status).toBe(200)

    const report = await fetcher().pass()
    expect(report).toMatchObject({ state: 'ok', downloaded: 1, records: 2 })
    expect(report.failed).toEqual([
      {
        owner: { kind: 'run-output', id: broken.id },
        url: `${sandbox.url}/_storage/blobs/${brokenSha}`,
        code: 'DOWNLOAD_FAILED',
        message: expect.stringContaining('500'),
      },
    ])
    expect(media.forRun(fine.id)).toHaveLength(1)
    expect(media.fetchRecord({ kind: 'run-output', id: broken.id })).toMatchObject({
      state: 'failed',
      attempts: 1,
      retryAt: 0,
      lastCode: 'DOWNLOAD_FAILED',
    })

    const again = await fetcher().pass()
    expect(again).toMatchObject({ state: 'ok', downloaded: 1, records: 1, failed: [] })
    expect(media.forRun(broken.id)[0]).toMatchObject({ sha256: brokenSha, stored: true })
    expect(media.fetchRecord({ kind: 'run-output', id: broken.id })?.state).toBe('done')
  })

  it('reads a record again when its URLs have expired, and keeps the fresh one in the mirror', async () => {
    const late = await api.run('atelier/text-to-image', {
      prompt: 'a late ferry',
      width: 64,
      height: 64,
    })
    const lateAsset = await api.upload(await png(80, 60, 11), 'ferry.png')
    await api.sync(dbs)
    const staleUrl = imagesOf(late)[0]?.url
    const staleExpiry = dbs.mirror.assets.get(lateAsset.id)?.url_expires_at ?? ''
    // The service's clock moves past the URLs' hour; ours does not, so they are tried first.
    clockOffset = 2 * HOUR

    const report = await fetcher().pass()
    expect(report).toMatchObject({ state: 'ok', downloaded: 2, refreshed: 2, failed: [] })
    const sha = imagesOf(late)[0]?.sha256 ?? ''
    expect(noted.statusesOf(sha)).toEqual([403, 200])
    expect(noted.statusesOf(lateAsset.sha256)).toEqual([403, 200])
    expect(media.forRun(late.id)[0]).toMatchObject({ sha256: sha, stored: true })
    expect(dbs.mirror.assets.thumbnailSha256(lateAsset.id)).not.toBeNull()
    const mirrored = dbs.mirror.runs.get(late.id)
    expect(mirrored && imagesOf(mirrored)[0]?.url).not.toBe(staleUrl)
    expect(Date.parse(dbs.mirror.assets.get(lateAsset.id)?.url_expires_at ?? '')).toBeGreaterThan(
      Date.parse(staleExpiry),
    )

    // A URL the record says has expired is not even tried.
    const later = await api.run('atelier/text-to-image', {
      prompt: 'a later tram',
      width: 64,
      height: 64,
    })
    await api.sync(dbs)
    const ahead = await fetcher({ clock: () => Date.now() + 4 * HOUR }).pass()
    expect(ahead).toMatchObject({ state: 'ok', downloaded: 1, refreshed: 1, failed: [] })
    expect(noted.statusesOf(imagesOf(later)[0]?.sha256 ?? '')).toEqual([200])
  })

  it('never evicts what the ledger still needs, even far over the cap', async () => {
    const { intents, uploads } = dbs.ledger
    const scope = { profile: PROFILE, orgId: sandbox.orgId, targetTypeCode: 'model' as const }
    // The executor still has to read this run's output.
    const waiting = intents.record({
      ...scope,
      targetRef: 'atelier/text-to-image',
      inputsHash: 'a',
      request: {},
    })
    intents.markSending(waiting.id)
    intents.markDispatched(waiting.id, wide.id)
    // A run about to start names the small image as its input.
    const smallSha = imagesOf(small)[0]?.sha256 ?? ''
    const naming = intents.record({
      ...scope,
      targetRef: 'atelier/image-to-image',
      inputsHash: 'b',
      request: { input: { image: `https://storage.invalid/blobs/${smallSha}.png` } },
    })
    // A flow run whose first node made the animation and whose second has not run yet.
    const node1 = intents.record({
      ...scope,
      flowRunId: 'flow-run-1',
      nodeId: 'n1',
      targetRef: 'atelier/text-to-video',
      inputsHash: 'c',
      request: {},
    })
    intents.markDispatched(node1.id, animation.id)
    intents.finish(node1.id, 'succeeded')
    const node2 = intents.record({
      ...scope,
      flowRunId: 'flow-run-1',
      nodeId: 'n2',
      targetRef: 'atelier/upscale',
      inputsHash: 'd',
      request: {},
    })
    // An upload that still has to send the asset's bytes.
    const manifest = uploads.createManifest({
      profile: PROFILE,
      orgId: sandbox.orgId,
      rootPath: '/photos',
    })
    uploads.addFiles(manifest.id, [
      { relativePath: 'harbour.png', sizeBytes: assetBytes.length, mtimeMs: 1 },
    ])
    const listed = uploads.files(manifest.id).items[0]
    uploads.setHash(listed?.seq ?? 0, asset.sha256, 'image/png')

    const pinned = [
      ...imagesOf(wide).map((image) => image.sha256),
      smallSha,
      videoOf(animation).sha256,
      asset.sha256,
    ]
    const before = await media.usage()
    expect(before.entries).toBeGreaterThan(pinned.length)
    const evicted = await media.setMaxBytes(1)
    expect(evicted.overCap).toBe(true)
    const after = await media.usage()
    expect(after.entries).toBe(pinned.length)
    expect(after.pinnedBytes).toBe(after.bytes)
    for (const sha of pinned) expect(media.has(sha), sha).toBe(true)
    // Thumbnails are never pinned: the evicted one is no longer offered.
    expect(media.forRun(small.id)[0]).toMatchObject({ stored: true, thumbnailSha256: null })
    expect(media.forRun(caption.id)).toEqual([])

    // Once the ledger lets go, so does the store.
    intents.finish(waiting.id, 'succeeded')
    intents.finish(naming.id, 'abandoned')
    intents.finish(node2.id, 'succeeded')
    uploads.finishFile(listed?.seq ?? 0, 'confirmed', asset.id)
    await media.setMaxBytes(1)
    expect((await media.usage()).entries).toBe(0)
    expect(media.forRun(wide.id).map((ref) => ref.stored)).toEqual([false, false])

    // A pass does not bring back what the cap evicted; asking for a run does.
    await media.setMaxBytes(256 * MiB)
    expect(await fetcher().pass()).toMatchObject({ downloaded: 0, records: 0 })
    const back = await fetcher().fetchRun(wide.id)
    expect(back).toMatchObject({ state: 'ok', downloaded: 2, failed: [] })
    expect(media.forRun(wide.id).every((ref) => ref.stored && ref.thumbnailSha256 !== null)).toBe(
      true,
    )
    const assetBack = await fetcher().fetchAsset(asset.id)
    expect(assetBack).toMatchObject({ state: 'ok', downloaded: 1 })
    expect(media.has(dbs.mirror.assets.thumbnailSha256(asset.id) ?? '')).toBe(true)
  })

  it('stops at once when asked to', async () => {
    const controller = new AbortController()
    controller.abort()
    expect(await fetcher().pass({ signal: controller.signal })).toMatchObject({
      state: 'aborted',
      downloaded: 0,
    })
  })
})

describe('MediaFetcher offline', () => {
  it('ends the pass as offline when the service is gone, and keeps what was stored', async () => {
    const sandbox = await startTestSandbox()
    let closed = false
    const home = tempFolder()
    const dbs = openDatabases(home)
    const media = new MediaStore({ dir: join(home, 'media'), maxBytes: 64 * MiB })
    try {
      const api = service(sandbox)
      const older = await api.run('atelier/text-to-image', {
        prompt: 'an old mill',
        width: 64,
        height: 64,
      })
      const newer = await api.run('atelier/text-to-image', {
        prompt: 'a new mill',
        width: 64,
        height: 64,
      })
      await api.sync(dbs)
      const fetcher = new MediaFetcher({
        client: api.client,
        mirror: dbs.mirror,
        media,
        orgId: sandbox.orgId,
      })
      // Newest first, one run a pass.
      expect(await fetcher.pass({ limit: 1 })).toMatchObject({ state: 'ok', downloaded: 1 })
      const kept = imagesOf(newer)[0]?.sha256 ?? ''
      expect(media.forRun(newer.id)[0]).toMatchObject({ sha256: kept, stored: true })

      await sandbox.close()
      closed = true
      const report = await fetcher.pass()
      expect(report).toMatchObject({ state: 'offline', downloaded: 0, failed: [] })
      expect(report.message).toContain('cannot be reached')
      expect(media.has(kept)).toBe(true)
      expect(sha256(readFileSync(media.path(kept)))).toBe(kept)
      expect(media.forRun(newer.id)[0]?.thumbnailSha256).not.toBeNull()
      // Nothing is marked failed for the network: the next pass takes the older run up again.
      expect(media.fetchRecord({ kind: 'run-output', id: older.id })).toBeNull()
      expect(await fetcher.fetchRun(older.id)).toMatchObject({ state: 'offline' })
    } finally {
      await media.close()
      dbs.close()
      if (!closed) await sandbox.close()
    }
  }, 30_000)
})

import { createHash, randomBytes } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import sharp from 'sharp'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import {
  MediaStore,
  MediaStoreError,
  type MediaStoreErrorCode,
  type MediaStoreOptions,
  previewOf,
} from '../../src-main/media-store'
import {
  animatedFrameBox,
  MAX_ANIMATED_FRAMES,
  MAX_ANIMATED_PIXELS,
} from '../../src-main/media-store/thumbnails'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

const HOUR = 60 * 60 * 1000
const MiB = 1024 * 1024

type FileOutput = { url: string; sha256: string; content_type: string; size_bytes: number }

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

const folders: string[] = []
const stores: MediaStore[] = []

function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'atelier-media-'))
  folders.push(dir)
  return dir
}

function openStore(options: Partial<MediaStoreOptions> & { dir?: string } = {}): MediaStore {
  const store = new MediaStore({
    dir: options.dir ?? tempFolder(),
    maxBytes: 256 * MiB,
    ...options,
  })
  stores.push(store)
  return store
}

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** The error a promise rejects with, checked to be a MediaStoreError with this code. */
async function failure(promise: Promise<unknown>, code: MediaStoreErrorCode) {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(MediaStoreError)
  expect((error as MediaStoreError).code, (error as Error).message).toBe(code)
  return error as MediaStoreError
}

/** Every file under the store's shard folders (not the index, not tmp). */
function storedFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => /^[0-9a-f]{2}$/.test(name))
    .flatMap((shard) => readdirSync(join(dir, shard)))
    .sort()
}

const tempsOf = (dir: string) => readdirSync(join(dir, 'tmp'))

/** A tiny HTTP server on 127.0.0.1 for the failures a sandbox does not make on purpose. */
async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

function countingFetch() {
  const counter = {
    calls: 0,
    fetch: ((input, init) => {
      counter.calls += 1
      return fetch(input, init)
    }) as typeof fetch,
  }
  return counter
}

describe('outputs of sandbox runs', () => {
  let sandbox: TestSandbox
  /** Added to the sandbox's time: moving it ahead makes presigned URLs expire. */
  let clockOffset = 0

  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock: () => Date.now() + clockOffset })
  })

  afterAll(async () => {
    await sandbox.close()
  })

  async function finishedRun(slug: string, input: Record<string, unknown>): Promise<Run> {
    const created = await sandbox.call('POST', `/v1/models/${slug}/runs`, { body: { input } })
    expect(created.status, created.text).toBe(201)
    const { id } = created.body as Run
    const deadline = Date.now() + 15_000
    for (;;) {
      const run = (await sandbox.call('GET', `/v1/runs/${id}`)).body as Run
      if (run.status_code === 'succeeded') return run
      if (['failed', 'canceled'].includes(run.status_code) || Date.now() > deadline) {
        throw new Error(`run ${id} is ${run.status_code}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
  }

  const firstImage = (run: Run) => (run.output?.images as FileOutput[])[0] as FileOutput

  let fox: Run
  beforeAll(async () => {
    fox = await finishedRun('atelier/text-to-image', {
      prompt: 'a red fox',
      width: 128,
      height: 128,
    })
  })

  it('downloads an output into the content-addressed store, once', async () => {
    const counter = countingFetch()
    const dir = tempFolder()
    const store = openStore({ dir, fetch: counter.fetch })
    const image = firstImage(fox)

    const first = await store.download(image.url, { kind: 'output', source: `run:${fox.id}` })
    const bytes = readFileSync(first.path)
    expect(sha256Of(bytes)).toBe(first.sha256)
    expect(first).toEqual({
      sha256: image.sha256,
      size: image.size_bytes,
      contentType: 'image/png',
      path: join(dir, image.sha256.slice(0, 2), image.sha256),
    })
    expect(store.stat(first.sha256)).toMatchObject({ kind: 'output', source: `run:${fox.id}` })

    // The same bytes again (another read of the run mints another URL): stored once.
    const again = await store.download(firstImage(await getRun(fox.id)).url)
    expect(again).toEqual(first)
    expect(storedFiles(dir)).toEqual([image.sha256])
    expect(counter.calls).toBe(2)

    // With the hash the record promises, a stored copy needs no network at all.
    const known = await store.download(image.url, { expectedSha256: image.sha256 })
    expect(known).toEqual(first)
    expect(counter.calls).toBe(2)
    expect(await store.usage()).toMatchObject({ entries: 1, bytes: image.size_bytes })
    expect(tempsOf(dir)).toEqual([])
  })

  it('shares one transfer between concurrent downloads of the same URL or hash', async () => {
    const counter = countingFetch()
    const store = openStore({ fetch: counter.fetch })
    const image = firstImage(fox)
    const byUrl = await Promise.all([1, 2, 3].map(() => store.download(image.url)))
    expect(new Set(byUrl.map((stored) => stored.path)).size).toBe(1)
    expect(counter.calls).toBe(1)

    const other = openStore({ fetch: counter.fetch })
    const fresh = firstImage(await getRun(fox.id)).url
    const byHash = await Promise.all([
      other.download(image.url, { expectedSha256: image.sha256 }),
      other.download(fresh, { expectedSha256: image.sha256 }),
    ])
    expect(byHash[0]).toEqual(byHash[1])
    expect(counter.calls).toBe(2)
  })

  it('makes a WebP thumbnail with sharp, once, with the pixels of the image', async () => {
    const store = openStore()
    const image = await store.download(firstImage(fox).url)

    const thumbnail = await store.thumbnail(image.sha256, { size: 64 })
    const meta = await sharp(thumbnail.path).metadata()
    expect(meta).toMatchObject({ format: 'webp', width: 64, height: 64 })
    expect(thumbnail.contentType).toBe('image/webp')
    expect(store.stat(thumbnail.sha256)).toMatchObject({ kind: 'thumbnail', source: image.sha256 })

    // The same picture, smaller: the average colour survives the resize.
    const [source, small] = await Promise.all([
      sharp(image.path).stats(),
      sharp(thumbnail.path).stats(),
    ])
    for (const channel of [0, 1, 2]) {
      expect(
        Math.abs((small.channels[channel]?.mean ?? 0) - (source.channels[channel]?.mean ?? 255)),
      ).toBeLessThan(8)
    }

    // Made once: the link is remembered, even by a store opened later on the same folder.
    expect(await store.thumbnail(image.sha256, { size: 64 })).toEqual(thumbnail)
    const defaultSize = await store.thumbnail(image.sha256)
    const full = await sharp(defaultSize.path).metadata()
    expect(Math.max(full.width, full.height)).toBeLessThanOrEqual(256)
    expect(full.width).toBe(128) // never enlarged past the 128 px source

    const reopened = openStore({ dir: store.dir })
    await store.close()
    expect(await reopened.thumbnail(image.sha256, { size: 64 })).toEqual(thumbnail)
  })

  it('thumbnails the first frame of an animated output', async () => {
    const store = openStore()
    const run = await finishedRun('atelier/text-to-video', { prompt: 'a red fox running' })
    const video = run.output?.video as FileOutput
    const stored = await store.download(video.url, { expectedSha256: video.sha256 })
    expect((await sharp(stored.path, { animated: true }).metadata()).pages).toBeGreaterThan(1)

    const thumbnail = await store.thumbnail(stored.sha256, { size: 100 })
    const meta = await sharp(thumbnail.path, { animated: true }).metadata()
    expect(meta).toMatchObject({ format: 'webp', width: 100, height: 100 })
    expect(meta.pages ?? 1).toBe(1)
  })

  it('previews an animated output (GIF or WebP) as an animated WebP', async () => {
    const store = openStore()
    for (const format of ['webp', 'gif']) {
      const run = await finishedRun('atelier/text-to-video', {
        prompt: 'a kite over dunes',
        fps: 6,
        format,
      })
      const video = run.output?.video as FileOutput & { frames: number }
      expect(video.content_type).toBe(`image/${format}`)

      // The window's way: fetched by URL into the store, then previewed as a data URL.
      const preview = await previewOf(store, { sha256: video.sha256, url: video.url, size: 128 })
      expect(preview.dataUrl).toMatch(/^data:image\/webp;base64,/)
      const bytes = Buffer.from(preview.dataUrl.split(',')[1] ?? '', 'base64')
      const meta = await sharp(bytes, { animated: true }).metadata()
      expect(meta).toMatchObject({ format: 'webp', width: 128, pageHeight: 128, loop: 0 })
      expect(meta.pages).toBe(video.frames)
      expect(meta.pages).toBeGreaterThan(1)

      // Kept apart from the still thumbnail of the same size, which stays one frame.
      const still = await store.thumbnail(video.sha256, { size: 128 })
      expect((await sharp(still.path, { animated: true }).metadata()).pages ?? 1).toBe(1)
      const again = await previewOf(store, { sha256: video.sha256, size: 128 })
      expect(again.dataUrl).toBe(preview.dataUrl)
    }
  })

  it('answers URL_EXPIRED for an expired or tampered presigned URL, and keeps nothing', async () => {
    const dir = tempFolder()
    const store = openStore({ dir })
    const image = firstImage(fox)
    clockOffset = 2 * HOUR
    try {
      const expired = await failure(store.download(image.url), 'URL_EXPIRED')
      expect(expired.status).toBe(403)
      expect(expired.message).toContain('fresh URL')
      // The signature is a credential: it never reaches the error.
      expect(JSON.stringify(expired)).not.toContain('signature=')
      expect(expired.url).toBe(image.url.split('?')[0])

      const fresh = firstImage(await getRun(fox.id)).url
      const tampered = fresh.replace(/signature=[0-9a-f]/, (match) =>
        match.endsWith('0') ? 'signature=1' : 'signature=0',
      )
      await failure(store.download(tampered), 'URL_EXPIRED')
      expect(await store.usage()).toMatchObject({ entries: 0, bytes: 0 })
      expect(storedFiles(dir)).toEqual([])

      // The remedy the error names: refetch the record, download its fresh URL.
      expect((await store.download(fresh)).sha256).toBe(image.sha256)
    } finally {
      clockOffset = 0
    }
  })

  it('answers CHECKSUM_MISMATCH when the bytes are not the promised ones, keeping nothing', async () => {
    const dir = tempFolder()
    const store = openStore({ dir })
    const wrong = 'ab'.repeat(32)
    const error = await failure(
      store.download(firstImage(fox).url, { expectedSha256: wrong }),
      'CHECKSUM_MISMATCH',
    )
    expect(error.sha256).toBe(wrong)
    expect(store.has(firstImage(fox).sha256)).toBe(false)
    expect(await store.usage()).toMatchObject({ entries: 0, bytes: 0 })
    expect(storedFiles(dir)).toEqual([])
    expect(tempsOf(dir)).toEqual([])
  })

  async function getRun(id: string): Promise<Run> {
    return (await sandbox.call('GET', `/v1/runs/${id}`)).body as Run
  }
})

describe('downloads that go wrong', () => {
  let server: Awaited<ReturnType<typeof serve>>
  const payload = randomBytes(64 * 1024)
  let requests = 0

  beforeAll(async () => {
    server = await serve((request, response) => {
      requests += 1
      const path = (request.url ?? '').split('?')[0]
      if (path === '/file') {
        response.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(payload)
      } else if (path === '/cut') {
        // Promises the whole payload, sends a tenth, drops the connection.
        response.writeHead(200, { 'Content-Length': payload.length })
        response.write(payload.subarray(0, payload.length / 10), () => {
          response.destroy()
        })
      } else if (path === '/unavailable') {
        response.writeHead(503, { 'Content-Type': 'application/json' })
        response.end(JSON.stringify({ code: 'SERVICE_UNAVAILABLE', message: 'later' }))
      } else if (path === '/chunked') {
        // No Content-Length: the limit must hold while streaming.
        response.writeHead(200)
        response.write(payload)
        response.end(payload)
      } else if (path === '/slow') {
        response.writeHead(200, { 'Content-Length': payload.length })
        response.write(payload.subarray(0, 1024))
        setTimeout(() => response.end(payload.subarray(1024)), 300)
      } else {
        response.writeHead(404).end()
      }
    })
  })

  afterAll(async () => {
    await server.close()
  })

  it('answers DOWNLOAD_FAILED for a network failure, a cut body and a 5xx', async () => {
    const dir = tempFolder()
    const store = openStore({ dir })
    const closed = await serve(() => undefined)
    await closed.close()
    const unreachable = await failure(store.download(`${closed.url}/x`), 'DOWNLOAD_FAILED')
    expect(unreachable.retryable).toBe(true)

    const cut = await failure(store.download(`${server.url}/cut`), 'DOWNLOAD_FAILED')
    expect(cut.retryable).toBe(true)

    const unavailable = await failure(
      store.download(`${server.url}/unavailable`),
      'DOWNLOAD_FAILED',
    )
    expect(unavailable).toMatchObject({ status: 503, retryable: true })
    expect(unavailable.message).toContain('SERVICE_UNAVAILABLE')

    const missing = await failure(store.download(`${server.url}/gone`), 'DOWNLOAD_FAILED')
    expect(missing).toMatchObject({ status: 404, retryable: false })

    await failure(store.download('file:///etc/passwd'), 'INVALID_ARGUMENT')
    expect(storedFiles(dir)).toEqual([])
    expect(tempsOf(dir)).toEqual([])
  })

  it('answers TOO_LARGE over the limit, declared or streamed, keeping nothing', async () => {
    const dir = tempFolder()
    const store = openStore({ dir })
    await failure(store.download(`${server.url}/file`, { maxBytes: 1000 }), 'TOO_LARGE')
    await failure(store.download(`${server.url}/chunked`, { maxBytes: 100_000 }), 'TOO_LARGE')
    // The store's own cap is the default limit: a file it could never keep is refused.
    const small = openStore({ dir: tempFolder(), maxBytes: 10_000 })
    await failure(small.download(`${server.url}/file`), 'TOO_LARGE')
    expect(storedFiles(dir)).toEqual([])
    expect(tempsOf(dir)).toEqual([])
    const whole = await store.download(`${server.url}/chunked`)
    expect(whole.size).toBe(2 * payload.length)
  })

  it('lets one caller abort without cancelling a transfer another still waits for', async () => {
    const dir = tempFolder()
    const store = openStore({ dir })
    const before = requests
    const impatient = new AbortController()
    const first = store.download(`${server.url}/slow`, { signal: impatient.signal })
    const second = store.download(`${server.url}/slow`)
    setTimeout(() => {
      impatient.abort()
    }, 50)
    await failure(first, 'ABORTED')
    expect((await second).sha256).toBe(sha256Of(payload))
    expect(requests - before).toBe(1)

    // When every caller gives up, the transfer stops and its temp file goes.
    const alone = new AbortController()
    const gone = store.download(`${server.url}/slow?again`, { signal: alone.signal })
    setTimeout(() => {
      alone.abort()
    }, 50)
    await failure(gone, 'ABORTED')
    const deadline = Date.now() + 2000
    while (tempsOf(dir).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(tempsOf(dir)).toEqual([])
    expect(storedFiles(dir)).toEqual([sha256Of(payload)])
  })

  it('streams a 50 MiB body to disk without holding it in memory', async () => {
    const total = 50 * MiB
    const chunkSize = 64 * 1024
    // Made before the baseline and sent again and again, so the server adds nothing to it.
    const chunks = Array.from({ length: 16 }, (_, index) => Buffer.alloc(chunkSize, index * 13))
    const chunk = (index: number) => chunks[index % chunks.length] as Buffer
    const expected = createHash('sha256')
    for (let index = 0; index < total / chunkSize; index++) expected.update(chunk(index))

    const big = await serve((request, response) => {
      // The warm-up sends other bytes, so that it is not the same entry.
      let index = request.url === '/warm-up' ? 1 : 0
      const end = index + total / chunkSize
      response.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': total })
      const pump = () => {
        while (index < end) {
          if (!response.write(chunk(index++))) {
            response.once('drain', pump)
            return
          }
        }
        response.end()
      }
      pump()
    })
    const store = openStore()
    try {
      // What the download keeps alive, not what the process happens to hold: rss also moves
      // with the allocator's pools and with when V8 gets round to collecting spent buffers (a CI
      // run once saw 11 MiB of such noise). So whenever buffers grew by 4 MiB, they are
      // collected and what is left counted: a download holding the body would leave it all.
      await store.download(`${big.url}/warm-up`)
      collectGarbage()
      const baseline = process.memoryUsage().arrayBuffers
      let buffers = baseline
      let kept = 0
      const keptNow = () => {
        collectGarbage()
        buffers = process.memoryUsage().arrayBuffers
        kept = Math.max(kept, buffers - baseline)
      }
      const sampler = setInterval(() => {
        if (process.memoryUsage().arrayBuffers - buffers > 4 * MiB) keptNow()
      }, 5)
      const stored = await store.download(`${big.url}/video`).finally(() => {
        clearInterval(sampler)
      })
      keptNow()
      expect(stored).toMatchObject({ size: total, contentType: 'video/mp4' })
      expect(stored.sha256).toBe(expected.digest('hex'))
      expect(kept).toBeLessThan(total / 5)
    } finally {
      await big.close()
    }
  })
})

describe('local files', () => {
  it('stores bytes and streams, and refuses a thumbnail of what is not an image', async () => {
    const store = openStore()
    const text = Buffer.from('not a picture')
    const fromBytes = await store.put(text, 'text/plain', { kind: 'asset' })
    expect(fromBytes.sha256).toBe(sha256Of(text))
    await failure(store.thumbnail(fromBytes.sha256), 'NOT_AN_IMAGE')
    await failure(store.thumbnail('0'.repeat(64)), 'NOT_FOUND')
    await failure(store.thumbnail(fromBytes.sha256, { size: 0 }), 'INVALID_ARGUMENT')

    const parts = [randomBytes(1000), randomBytes(2000)]
    const fromStream = await store.put(Readable.from(parts), 'application/octet-stream')
    expect(fromStream.sha256).toBe(sha256Of(Buffer.concat(parts)))
    expect(readFileSync(fromStream.path)).toEqual(Buffer.concat(parts))

    const read: Buffer[] = []
    for await (const piece of store.open(fromBytes.sha256)) read.push(piece as Buffer)
    expect(Buffer.concat(read).toString()).toBe('not a picture')
    expect(() => store.path('f'.repeat(64))).toThrow(MediaStoreError)
  })

  it('turns a thumbnail upright from its EXIF orientation', async () => {
    const store = openStore()
    // 60×20 pixels stored sideways: orientation 6 means "rotate 90° clockwise to view".
    const sideways = await sharp({
      create: { width: 60, height: 20, channels: 3, background: { r: 10, g: 120, b: 200 } },
    })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer()
    const stored = await store.put(sideways, 'image/jpeg')
    const thumbnail = await store.thumbnail(stored.sha256, { size: 32 })
    expect(await sharp(thumbnail.path).metadata()).toMatchObject({ width: 11, height: 32 })
  })
})

describe('animated thumbnails', () => {
  /**
   * An animation of `frames` frames of width×height, each a flat colour of its own: red from
   * `shade` (by default rising from 0 to 255), blue its opposite. Frames must differ clearly, or
   * the WebP encoder merges them into one that lasts longer.
   */
  async function animation(
    format: 'webp' | 'gif',
    frames: number,
    width = 120,
    height = 80,
    shadeOf = (frame: number) => Math.round((frame / Math.max(1, frames - 1)) * 255),
  ): Promise<Buffer> {
    const frameBytes = width * height * 3
    const strip = Buffer.alloc(frameBytes * frames)
    for (let frame = 0; frame < frames; frame++) {
      const shade = shadeOf(frame)
      for (let at = frame * frameBytes; at < (frame + 1) * frameBytes; at += 3) {
        strip[at] = shade
        strip[at + 1] = 40
        strip[at + 2] = 255 - shade
      }
    }
    const image = sharp(strip, {
      raw: { width, height: height * frames, channels: 3, pageHeight: height },
    })
    const delay = Array.from({ length: frames }, () => 100)
    return format === 'gif'
      ? image.gif({ loop: 0, delay }).toBuffer()
      : image.webp({ loop: 0, delay, lossless: true }).toBuffer()
  }

  it('keeps an animated WebP or GIF moving when asked, made once, its still apart', async () => {
    for (const format of ['webp', 'gif'] as const) {
      const store = openStore()
      const stored = await store.put(await animation(format, 6), `image/${format}`)
      expect((await sharp(stored.path, { animated: true }).metadata()).pages).toBe(6)

      const moving = await store.thumbnail(stored.sha256, { size: 60, animated: true })
      expect(moving.contentType).toBe('image/webp')
      expect(store.stat(moving.sha256)).toMatchObject({ kind: 'thumbnail', source: stored.sha256 })
      const meta = await sharp(moving.path, { animated: true }).metadata()
      expect(meta).toMatchObject({ format: 'webp', pages: 6, width: 60, pageHeight: 40, loop: 0 })
      expect(meta.delay).toEqual([100, 100, 100, 100, 100, 100])
      // The frames are the source's, each its own colour: red rises, blue falls.
      const [first, last] = await Promise.all(
        [0, 5].map((page) => sharp(moving.path, { page }).stats()),
      )
      expect(first?.channels[0]?.mean ?? 255).toBeLessThan(30)
      expect(last?.channels[0]?.mean ?? 0).toBeGreaterThan(225)
      expect(first?.channels[2]?.mean ?? 0).toBeGreaterThan(225)

      // The still thumbnail of the same size is another entry, one frame.
      const still = await store.thumbnail(stored.sha256, { size: 60 })
      expect(still.sha256).not.toBe(moving.sha256)
      expect((await sharp(still.path, { animated: true }).metadata()).pages ?? 1).toBe(1)

      // Made once, and remembered by a store opened later on the same folder.
      expect(await store.thumbnail(stored.sha256, { size: 60, animated: true })).toEqual(moving)
      const reopened = openStore({ dir: store.dir })
      await store.close()
      expect(await reopened.thumbnail(stored.sha256, { size: 60, animated: true })).toEqual(moving)
      expect(await reopened.thumbnail(stored.sha256, { size: 60 })).toEqual(still)
    }
  })

  it('thumbnails a still image the same whether or not it is asked to move', async () => {
    const store = openStore()
    const png = await sharp({
      create: { width: 90, height: 30, channels: 3, background: { r: 200, g: 30, b: 60 } },
    })
      .png()
      .toBuffer()
    const stored = await store.put(png, 'image/png')
    const moving = await store.thumbnail(stored.sha256, { size: 45, animated: true })
    const still = await store.thumbnail(stored.sha256, { size: 45 })
    expect(moving.sha256).toBe(still.sha256)
    expect(await sharp(moving.path, { animated: true }).metadata()).toMatchObject({
      format: 'webp',
      width: 45,
      height: 15,
    })
    // Not an image at all: the same refusal as a still thumbnail's.
    const text = await store.put(Buffer.from('not a picture'), 'text/plain')
    await failure(store.thumbnail(text.sha256, { animated: true }), 'NOT_AN_IMAGE')
  })

  it('bounds an animated thumbnail: its first frames, its pixels', async () => {
    const store = openStore()
    const long = await store.put(
      await animation('webp', MAX_ANIMATED_FRAMES + 24, 32, 32, (frame) => (frame % 2) * 255),
      'image/webp',
    )
    const moving = await store.thumbnail(long.sha256, { size: 64, animated: true })
    const meta = await sharp(moving.path, { animated: true }).metadata()
    // Never enlarged past the 32 px frames; the first MAX_ANIMATED_FRAMES only.
    expect(meta).toMatchObject({ pages: MAX_ANIMATED_FRAMES, width: 32, pageHeight: 32 })

    // Frames that together pass the pixel budget are made smaller to fit it.
    expect(animatedFrameBox(256, 256, 8, 256)).toBe(256)
    expect(animatedFrameBox(128, 64, 8, 256)).toBe(128)
    const box = animatedFrameBox(1024, 1024, 96, 1024)
    expect(box).toBeLessThan(1024)
    expect(box * box * 96).toBeLessThanOrEqual(MAX_ANIMATED_PIXELS)
    expect((box + 2) * (box + 2) * 96).toBeGreaterThan(MAX_ANIMATED_PIXELS)
  })
})

describe('eviction', () => {
  let now = 1_700_000_000_000
  const clock = () => now
  /** Past the window in which a just-used entry is spared. */
  const later = () => {
    now += 10_000
  }
  const file = () => randomBytes(1000)

  it('evicts the least recently used entries first; a use saves an entry', async () => {
    const store = openStore({ maxBytes: 3500, clock })
    const a = await store.put(file(), 'application/octet-stream')
    later()
    const b = await store.put(file(), 'application/octet-stream')
    later()
    const c = await store.put(file(), 'application/octet-stream')
    later()
    expect(existsSync(store.path(a.sha256))).toBe(true) // a is now the most recently used
    later()
    await store.put(file(), 'application/octet-stream') // 4000 bytes: one must go
    expect([store.has(a.sha256), store.has(b.sha256), store.has(c.sha256)]).toEqual([
      true,
      false,
      true,
    ])
    expect(existsSync(b.path)).toBe(false)
    later()
    await store.put(file(), 'application/octet-stream')
    expect([store.has(a.sha256), store.has(c.sha256)]).toEqual([true, false])
    expect(await store.usage()).toEqual({
      bytes: 3000,
      entries: 3,
      pinnedBytes: 0,
      maxBytes: 3500,
      overCap: false,
    })
  })

  it('never evicts pinned entries, even over the cap, and says so', async () => {
    const pinned = new Set<string>()
    const store = openStore({ maxBytes: 10_000, clock, isPinned: (sha) => pinned.has(sha) })
    const a = await store.put(file(), 'application/octet-stream')
    later()
    const b = await store.put(file(), 'application/octet-stream')
    later()
    const c = await store.put(file(), 'application/octet-stream')
    pinned.add(a.sha256).add(b.sha256)
    later()

    const report = await store.setMaxBytes(1500)
    expect(report).toEqual({ evicted: 1, freedBytes: 1000, bytes: 2000, overCap: true })
    expect(store.has(c.sha256)).toBe(false)
    expect(await store.usage()).toEqual({
      bytes: 2000,
      entries: 2,
      pinnedBytes: 2000,
      maxBytes: 1500,
      overCap: true,
    })

    // A new write stays over the cap while it is fresh, goes once it is not.
    const d = await store.put(file(), 'application/octet-stream')
    expect(store.has(d.sha256)).toBe(true)
    later()
    expect(await store.evict()).toMatchObject({ evicted: 1, overCap: true })
    expect([store.has(a.sha256), store.has(b.sha256), store.has(d.sha256)]).toEqual([
      true,
      true,
      false,
    ])

    // Once the ledger lets go, the cap holds again.
    pinned.delete(b.sha256)
    expect(await store.evict()).toEqual({
      evicted: 1,
      freedBytes: 1000,
      bytes: 1000,
      overCap: false,
    })
    expect(store.has(a.sha256)).toBe(true)
  })

  it('spares entries that are being read or were just used', async () => {
    const store = openStore({ maxBytes: 10_000, clock })
    const a = await store.put(file(), 'application/octet-stream')
    const b = await store.put(file(), 'application/octet-stream')
    // Both were used a moment ago: whoever got their paths may still be reading.
    expect(await store.setMaxBytes(0)).toMatchObject({ evicted: 0, overCap: true })

    const reading = store.open(a.sha256)
    await new Promise<void>((resolve) => reading.once('readable', resolve))
    later()
    expect(await store.evict()).toMatchObject({ evicted: 1, bytes: 1000 })
    expect([store.has(a.sha256), store.has(b.sha256)]).toEqual([true, false])

    reading.destroy()
    await new Promise<void>((resolve) => reading.once('close', resolve))
    later()
    expect(await store.evict()).toMatchObject({ evicted: 1, bytes: 0, overCap: false })
  })
})

describe('crash recovery', () => {
  it('removes crashed temp files and reconciles the index with the files at open', async () => {
    const dir = tempFolder()
    const first = openStore({ dir })
    const kept = await first.put(randomBytes(500), 'application/octet-stream')
    const lost = await first.put(randomBytes(700), 'application/octet-stream')
    await first.close()

    // What a crash leaves: half-written temps, a row whose file never landed, a file whose row
    // never landed, and something that is no entry at all.
    writeFileSync(join(dir, 'tmp', 'crashed.part'), randomBytes(100))
    writeFileSync(join(dir, 'tmp', `${process.pid}-download-dead.part`), randomBytes(100))
    rmSync(lost.path)
    const png = await sharp({
      create: { width: 8, height: 8, channels: 3, background: { r: 0, g: 0, b: 0 } },
    })
      .png()
      .toBuffer()
    const orphan = sha256Of(png)
    mkdirSync(join(dir, orphan.slice(0, 2)), { recursive: true })
    writeFileSync(join(dir, orphan.slice(0, 2), orphan), png)
    mkdirSync(join(dir, '00'), { recursive: true })
    writeFileSync(join(dir, '00', 'notes.txt'), 'stray')

    const reopened = openStore({ dir })
    expect(reopened.recovered).toEqual({
      tempsRemoved: 2,
      filesAdopted: 1,
      rowsDropped: 1,
      strayRemoved: 1,
    })
    expect(tempsOf(dir)).toEqual([])
    expect(reopened.has(kept.sha256)).toBe(true)
    expect(reopened.has(lost.sha256)).toBe(false)
    expect(reopened.stat(orphan)).toMatchObject({ size: png.length, contentType: 'image/png' })
    expect(await reopened.usage()).toMatchObject({ entries: 2, bytes: 500 + png.length })
    // The lost file can be stored again.
    const again = await reopened.put(readFileSync(kept.path), 'application/octet-stream')
    expect(again.sha256).toBe(kept.sha256)
  })

  it('sets a damaged index aside and rebuilds it from the files', async () => {
    const dir = tempFolder()
    const first = openStore({ dir })
    const kept = await first.put(randomBytes(300), 'application/octet-stream')
    await first.close()
    for (const suffix of ['-wal', '-shm']) rmSync(join(dir, `index.db${suffix}`), { force: true })
    writeFileSync(join(dir, 'index.db'), randomBytes(4096))

    const reopened = openStore({ dir })
    expect(reopened.recovered.filesAdopted).toBe(1)
    expect(reopened.has(kept.sha256)).toBe(true)
    expect(readdirSync(dir).some((name) => name.startsWith('index.db.damaged-'))).toBe(true)
  })
})

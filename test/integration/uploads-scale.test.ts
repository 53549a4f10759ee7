import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { crc32, deflateSync } from 'node:zlib'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabases, type Databases } from '../../src-main/db'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { startFolderUpload, type UploadProgress } from '../../src-main/uploads'
import { startSandboxProcess, type SandboxProcess } from '../helpers/sandbox-process'

/**
 * A folder of FILES small PNGs uploads whole, with memory that does not grow with the files
 * sent: the manifest's rows live in the ledger (SQLite); what the run adds per file sent is the
 * claim of its sha256 (for identical files) and an asset id on its progress entry.
 *
 * The sandbox runs in a process of its own, as the service does for the app. On the test's event
 * loop it took as much of the time as the upload did (16 ms a file between the two, one core
 * busy, the other mostly idle: 10,000 files did not finish in 2 minutes, so this test sent
 * 1,500), and its memory was in what is measured here. What it does per file was cut down too,
 * by profiles of 2,000 to 3,000 files (CPU time a file, sandbox process): 8.8 ms at first, 6.6 ms
 * once an image's thumbnail is made when first requested instead of at confirmation (see
 * src-main/sandbox/media/thumbnails.ts), 4.3 ms once a one-part upload is linked into the blob
 * store instead of copied and inspected from the bytes read to hash it, 3.4 to 3.8 ms once a
 * small part is written and read back in one call each. The upload's process spends 4.8 to
 * 5.4 ms a file; on this machine's two cores 10,000 files take about 50 s.
 */
const FILES = 10_000
const SIDE = 20
const SAMPLE_EVERY = 100

// A full collection before each sample, so what is measured is what the upload holds.
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

/**
 * What the upload can hold: heapUsed without the code spaces (the machine code V8 compiles as the
 * run warms up grows too, 0.7 MiB over this test, but it is not anything the upload holds), plus
 * the bytes of ArrayBuffers, which live outside V8's heap: a file's bytes kept in a Buffer weigh
 * a hundred bytes in the heap but kilobytes there.
 */
function heldBytes(): number {
  const heap = getHeapSpaceStatistics()
    .filter((space) => !space.space_name.startsWith('code'))
    .reduce((sum, space) => sum + space.space_used_size, 0)
  return heap + process.memoryUsage().arrayBuffers
}

let sandbox: SandboxProcess
let client: ServiceClient
let scratch: string
let databases: Databases

beforeAll(async () => {
  // As `atelier sandbox` runs it: answers are not checked against the contract (other tests do).
  sandbox = await startSandboxProcess({ latencyMs: 0, startTimeoutMs: 60_000 })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.key,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  scratch = mkdtempSync(join(tmpdir(), 'atelier-uploads-scale-'))
  databases = openDatabases(join(scratch, 'home'))
}, 90_000)

afterAll(async () => {
  databases.close()
  rmSync(scratch, { recursive: true, force: true })
  await sandbox.stop()
}, 60_000)

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/**
 * A valid SIDE×SIDE RGB PNG whose pixels come from `seed` (xorshift), so every file is distinct,
 * about 1.3 KiB (noise barely compresses), and decodes: built by hand because sharp would take
 * seconds for ten thousand of them.
 */
function noisePng(seed: number): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(SIDE, 0)
  header.writeUInt32BE(SIDE, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const rows = Buffer.alloc(SIDE * (1 + SIDE * 3))
  let state = (seed + 1) * 2_654_435_761
  for (let i = 0; i < rows.length; i++) {
    // Byte 0 of each row is its filter type: none.
    if (i % (1 + SIDE * 3) === 0) continue
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    rows[i] = state & 0xff
  }
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

describe(`a folder of ${FILES.toLocaleString('en-US')} small files`, () => {
  it('uploads completely, with flat memory', { timeout: 300_000 }, async () => {
    const root = join(scratch, 'many')
    const sample = noisePng(0)
    // The hand-made bytes are a PNG that decodes, not only one that sniffs as PNG.
    const meta = await sharp(sample).metadata()
    expect([meta.format, meta.width, meta.height]).toEqual(['png', SIDE, SIDE])
    let totalBytes = 0
    for (let i = 0; i < FILES; i++) {
      // 100 per sub-folder, as a camera or an export would leave them.
      const dir = join(root, `batch-${String(Math.floor(i / 100)).padStart(3, '0')}`)
      if (i % 100 === 0) mkdirSync(dir, { recursive: true })
      const bytes = noisePng(i)
      totalBytes += bytes.length
      writeFileSync(join(dir, `img-${String(i).padStart(5, '0')}.png`), bytes)
    }

    const heap: { files: number; bytes: number }[] = []
    let finished = 0
    let last: UploadProgress | null = null
    const started = performance.now()
    const upload = startFolderUpload({
      service: client,
      uploads: databases.ledger.uploads,
      profile: 'default',
      orgId: sandbox.orgId,
      root,
      // As the CLI and the app do: a progress observer is always there.
      onProgress: (progress) => {
        last = progress
      },
      onFile: (file) => {
        if (file.state !== 'done') return
        finished++
        if (finished % SAMPLE_EVERY !== 0) return

        collectGarbage()
        heap.push({ files: finished, bytes: heldBytes() })
      },
    })
    const summary = await upload.done
    const elapsedMs = performance.now() - started

    expect(summary.failures).toEqual([])
    expect(summary.state).toBe('finished')
    expect(summary.files).toEqual({
      total: FILES,
      uploaded: FILES,
      duplicates: 0,
      failed: 0,
      left: 0,
      already: 0,
    })
    expect(summary.bytes).toEqual({ total: totalBytes, sent: totalBytes })
    expect(last).toMatchObject({ phase: 'finished', files: { total: FILES, done: FILES } })

    // The service holds every file as a ready image asset.
    let assets = 0
    let ready = 0
    for await (const asset of client.list('/v1/assets', { params: { query: { limit: 500 } } })) {
      assets++
      if (asset.media_type === 'image' && asset.status_code === 'ready') ready++
    }
    expect([assets, ready]).toEqual([FILES, FILES])
    const manifest = databases.ledger.uploads.getManifest(summary.manifestId)
    expect(manifest?.state).toBe('finished')
    expect(databases.ledger.uploads.progress(summary.manifestId)).toEqual({
      confirmed: { files: FILES, bytes: totalBytes },
    })

    // Flat: what is held in the last quarter of the files against the first quarter, medians of
    // the samples (the very first ones still hold start-up garbage). What legitimately grows per
    // file sent is its claim (a 64-character sha256 and a settled promise in a Map) and its
    // progress entry's asset id: 0.3 KiB a file over these 10,000 (0.5 to 0.6 KiB over 2,000,
    // while the caches warm up). The bound is 2 KiB a file between the two medians: keeping each
    // file's bytes (a Buffer that pins a slab of Buffer's 8 KiB pool: 5 KiB a file when tried), a
    // response or a part stream's 64 KiB buffer per file goes past it.
    expect(heap.length).toBe(FILES / SAMPLE_EVERY)
    const quarter = Math.floor(heap.length / 4)
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b)
      return sorted[Math.floor(sorted.length / 2)] ?? 0
    }
    const first = median(heap.slice(0, quarter).map((s) => s.bytes))
    const lastQuarter = median(heap.slice(-quarter).map((s) => s.bytes))
    const grew = lastQuarter - first
    const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`
    console.log(
      `${FILES} files (${mib(totalBytes)}) in ${(elapsedMs / 1000).toFixed(1)} s; held after GC: first quarter ${mib(first)}, last quarter ${mib(lastQuarter)}, grew ${mib(grew)}; samples ${heap.map((s) => (s.bytes / 1024 / 1024).toFixed(1)).join(' ')}`,
    )
    // The medians sit an eighth of the way in from each end.
    const apart = (FILES * 3) / 4
    expect(grew).toBeLessThan(apart * 2 * 1024)
  })
})

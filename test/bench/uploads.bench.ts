import { spawn } from 'node:child_process'
import { createHash, randomFillSync } from 'node:crypto'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { open, readFile } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import { afterAll, bench, describe } from 'vitest'
import type { Asset, AssetUpload } from '../../src-shared/api'
import { openDatabases } from '../../src-main/db'
import { createServiceClient } from '../../src-main/service'
import {
  DEFAULT_FILE_CONCURRENCY,
  DEFAULT_PARTS_IN_FLIGHT,
  startFolderUpload,
  type UploadProgress,
} from '../../src-main/uploads'

/**
 * Folder uploads against the sandbox on loopback, each figure a ratio against the same requests
 * sent by a raw loop in the same run (nothing here is a timed assertion):
 *
 * - SMALL.files files of 64 KiB: files/s of `startFolderUpload` (scan, sniff, hash, ledger,
 *   declare, PUT, confirm) ÷ files/s of a raw loop sending the same three requests with plain
 *   fetch (sha256 computed beforehand, the file read whole), DEFAULT_FILE_CONCURRENCY files at a
 *   time for both. Client CPU per file is printed too: the sandbox is the same for both, so it
 *   dampens the ratio, while CPU shows the client's own cost.
 * - LARGE.files files of LARGE.bytes: bytes/s of `startFolderUpload` ÷ bytes/s of a raw loop
 *   doing the same declarations, the same 8 MiB part PUTs (each part read into a buffer) at the
 *   same parts in flight, and the same confirmations. Declare and confirm are timed for both, so
 *   the upload's hashing (the raw side knows the sha256) counts against it; the raw PUTs alone
 *   are printed as well.
 * - The peak RSS growth of this process during the large uploads (sampled every 50 ms, after a
 *   full GC before), against parts in flight × part size + 32 MiB. The first run comes before
 *   any raw run; a run right after a raw one reads low, its buffers having grown RSS already.
 *
 * Each round runs the raw loop and the upload back to back, alternating which goes first, so
 * other work on this shared machine weighs on both alike; the figures are the best of the rounds
 * and each round's own ratio. The sandbox runs in its own process (`atelier sandbox`), a fresh one
 * with a fresh data folder for every run, so no upload is a duplicate and no run pays for the
 * assets of the one before. The small files are deleted before the large ones are written, which
 * keeps the disk used under 3.5 GiB at full size.
 * Files are media by their bytes (a BMP header, then random bytes), which the sandbox sizes from
 * the header without decoding. UPLOAD_BENCH_SCALE (default 1) scales the count of small files and
 * the size of the large ones, for trying the bench out.
 */

const SCALE = Number(process.env.UPLOAD_BENCH_SCALE ?? '1')
const KiB = 1024
const MiB = 1024 * KiB
const PART_SIZE = 8 * MiB
const CONCURRENCY = DEFAULT_FILE_CONCURRENCY
const PARTS_IN_FLIGHT = DEFAULT_PARTS_IN_FLIGHT
const SMALL = { files: Math.max(16, Math.round(2_000 * SCALE)), bytes: 64 * KiB }
const LARGE = { files: 4, bytes: Math.max(1, Math.round(256 * SCALE)) * MiB }
const ITERATIONS = { small: 3, large: 3 }
const RSS_EVERY_MS = 50
const RSS_BOUND = PARTS_IN_FLIGHT * PART_SIZE + 32 * MiB

const root = join(import.meta.dirname, '..', '..')
const scratch = mkdtempSync(join(tmpdir(), 'atelier-uploads-bench-'))

// Source files, plus the sandbox's copy of them: its parts and the file assembled from them can
// all exist at once while the large files are confirmed.
const needed = SMALL.files * SMALL.bytes * 2 + LARGE.files * LARGE.bytes * 3
const free = (() => {
  const stats = statfsSync(scratch)
  return stats.bavail * stats.bsize
})()
if (free < needed + 512 * MiB) {
  rmSync(scratch, { recursive: true, force: true })
  throw new Error(
    `The uploads bench needs about ${Math.ceil(needed / MiB)} MiB in ${tmpdir()}, which has ${Math.floor(free / MiB)} MiB free. Free some space or set UPLOAD_BENCH_SCALE below 1.`,
  )
}

v8.setFlagsFromString('--expose-gc')
const collectGarbage = vm.runInNewContext('gc') as () => void

interface LocalFile {
  path: string
  name: string
  size: number
  sha256: string
}

/** A 24-bit BMP header for a file of `size` bytes: enough for both sides to call it an image. */
function bmpHeader(size: number): Buffer {
  const header = Buffer.alloc(54)
  const width = 256
  const height = Math.max(1, Math.floor((size - 54) / (width * 3)))
  header.write('BM', 0, 'latin1')
  header.writeUInt32LE(size, 2)
  header.writeUInt32LE(54, 10)
  header.writeUInt32LE(40, 14)
  header.writeInt32LE(width, 18)
  header.writeInt32LE(height, 22)
  header.writeUInt16LE(1, 26)
  header.writeUInt16LE(24, 28)
  return header
}

/** A file of `size` bytes: the BMP header, then random bytes, written and hashed in 8 MiB chunks. */
function writeMediaFile(path: string, size: number): LocalFile {
  const hash = createHash('sha256')
  const fd = openSync(path, 'w')
  try {
    const header = bmpHeader(size)
    writeSync(fd, header)
    hash.update(header)
    const chunk = Buffer.allocUnsafe(Math.min(8 * MiB, size))
    for (let left = size - header.length; left > 0;) {
      const bytes = randomFillSync(chunk.subarray(0, Math.min(left, chunk.length)))
      writeSync(fd, bytes)
      hash.update(bytes)
      left -= bytes.length
    }
  } finally {
    closeSync(fd)
  }
  return { path, name: path.slice(path.lastIndexOf('/') + 1), size, sha256: hash.digest('hex') }
}

function writeFolder(
  name: string,
  count: number,
  size: number,
): { dir: string; files: LocalFile[] } {
  const dir = join(scratch, name)
  mkdirSync(dir)
  const files = Array.from({ length: count }, (_, i) =>
    writeMediaFile(join(dir, `${name}-${String(i).padStart(5, '0')}.bmp`), size),
  )
  return { dir, files }
}

interface Remote {
  url: string
  orgId: string
  key: string
  stop: () => Promise<void>
}

/** `atelier sandbox` on a fresh data folder, in its own process; ready when it prints its line. */
async function serve(): Promise<Remote> {
  const data = mkdtempSync(join(scratch, 'sandbox-'))
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'atelier.mjs'), 'sandbox', '--data', data, '--latency-ms', '0'],
    { cwd: root },
  )
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve()
    })
  })
  const line = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => {
      reject(new Error(`no sandbox after 120 s: ${errors}`))
    }, 120_000)
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const newline = out.indexOf('\n')
      if (newline >= 0) {
        clearTimeout(timer)
        resolve(out.slice(0, newline))
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the sandbox exited (${code}): ${errors}`))
    })
  })
  const ready = JSON.parse(line) as { url: string; orgId: string; keys: { admin: string } }
  return {
    url: ready.url,
    orgId: ready.orgId,
    key: ready.keys.admin,
    stop: async () => {
      child.kill('SIGTERM')
      await exited
      rmSync(data, { recursive: true, force: true })
    },
  }
}

/** The raw side's API calls: plain fetch, JSON in and out, an error on any unexpected status. */
async function api<T>(remote: Remote, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${remote.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${remote.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (response.status !== 201) {
    throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`)
  }
  return (await response.json()) as T
}

async function putPart(url: string, bytes: Buffer): Promise<string> {
  const response = await fetch(url, {
    method: 'PUT',
    body: bytes,
    headers: { 'Content-Type': 'application/octet-stream' },
  })
  await response.arrayBuffer()
  const etag = response.headers.get('ETag')
  if (!response.ok || !etag) throw new Error(`a part PUT answered ${response.status}`)
  return etag
}

function declare(remote: Remote, file: LocalFile, partSize?: number): Promise<AssetUpload> {
  return api<AssetUpload>(remote, '/v1/asset-uploads', {
    filename: file.name,
    content_type: 'image/bmp',
    size_bytes: file.size,
    sha256: file.sha256,
    folder_id: null,
    ...(partSize === undefined ? {} : { part_size: partSize }),
  })
}

async function confirm(remote: Remote, upload: AssetUpload, etags: string[]): Promise<Asset> {
  const asset = await api<Asset>(remote, `/v1/asset-uploads/${upload.id}/confirmations`, {
    parts: etags.map((etag, index) => ({ part_number: index + 1, etag })),
  })
  if (asset.sha256 !== upload.sha256) throw new Error(`asset ${asset.id} has other bytes`)
  return asset
}

interface Timing {
  ms: number
  /** Client CPU (user + system) over the timed part. */
  cpuMs: number
}

async function timed(work: () => Promise<void>): Promise<Timing> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  await work()
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { ms, cpuMs: (used.user + used.system) / 1000 }
}

/** Every small file: declare, PUT, confirm, CONCURRENCY files at a time. */
async function rawSmall(remote: Remote, files: readonly LocalFile[]): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]
      if (!file) return
      const bytes = await readFile(file.path)
      const upload = await declare(remote, file)
      if (upload.status_code !== 'pending' || upload.part_count !== 1) {
        throw new Error(`${file.name}: ${upload.status_code}, ${upload.part_count} part(s)`)
      }
      const etag = await putPart(upload.parts[0]?.url ?? '', bytes)
      await confirm(remote, upload, [etag])
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

/** The large files: declared together, their parts PUT PARTS_IN_FLIGHT at a time, confirmed. */
async function rawLarge(remote: Remote, files: readonly LocalFile[]): Promise<{ putMs: number }> {
  const uploads = await Promise.all(files.map((file) => declare(remote, file, PART_SIZE)))
  const jobs = uploads.flatMap((upload, index) =>
    upload.parts.map((part) => ({ index, part, upload })),
  )
  const etags = uploads.map((upload) => new Array<string>(upload.part_count).fill(''))
  const handles = await Promise.all(files.map((file) => open(file.path, 'r')))
  const started = performance.now()
  try {
    let next = 0
    const worker = async () => {
      while (next < jobs.length) {
        const job = jobs[next++]
        const handle = handles[job?.index ?? -1]
        if (!job || !handle) return
        const offset = (job.part.part_number - 1) * job.upload.part_size
        const size = Math.min(job.upload.part_size, job.upload.size_bytes - offset)
        const bytes = Buffer.allocUnsafe(size)
        const { bytesRead } = await handle.read(bytes, 0, size, offset)
        if (bytesRead !== size) throw new Error(`read ${bytesRead} of ${size} bytes`)
        const list = etags[job.index]
        if (list) list[job.part.part_number - 1] = await putPart(job.part.url, bytes)
      }
    }
    await Promise.all(Array.from({ length: PARTS_IN_FLIGHT }, worker))
  } finally {
    await Promise.all(handles.map((handle) => handle.close()))
  }
  const putMs = performance.now() - started
  await Promise.all(uploads.map((upload, index) => confirm(remote, upload, etags[index] ?? [])))
  return { putMs }
}

interface ToolRun extends Timing {
  /** Peak RSS minus RSS before, sampled every RSS_EVERY_MS. */
  rssGrowth: number
  /** ArrayBuffers (Buffers: file chunks, sockets' data) at the RSS peak, minus before. */
  buffersGrowth: number
  /** From the start until the last file got past hashing. */
  hashedMs: number
}

/** `startFolderUpload` of `dir` into a fresh ledger, as the app calls it (with a progress observer). */
async function toolRun(
  remote: Remote,
  dir: string,
  count: number,
  bytes: number,
): Promise<ToolRun> {
  const home = mkdtempSync(join(scratch, 'home-'))
  const databases = openDatabases(home)
  const service = createServiceClient({ baseUrl: remote.url, apiKey: remote.key })
  collectGarbage()
  const before = process.memoryUsage()
  const peak = { rss: before.rss, arrayBuffers: before.arrayBuffers }
  const sample = () => {
    const now = process.memoryUsage()
    if (now.rss > peak.rss) Object.assign(peak, { rss: now.rss, arrayBuffers: now.arrayBuffers })
  }
  const sampler = setInterval(sample, RSS_EVERY_MS)
  let last: UploadProgress | null = null
  let hashedAt = 0
  let started = 0
  try {
    const timing = await timed(async () => {
      started = performance.now()
      const upload = startFolderUpload({
        service,
        uploads: databases.ledger.uploads,
        profile: 'bench',
        orgId: remote.orgId,
        root: dir,
        concurrency: CONCURRENCY,
        partsInFlight: PARTS_IN_FLIGHT,
        partSize: PART_SIZE,
        onProgress: (progress) => {
          last = progress
        },
        onFile: (file) => {
          if (file.state === 'uploading') hashedAt = performance.now()
        },
      })
      const summary = await upload.done
      if (summary.state !== 'finished' || summary.files.uploaded !== count) {
        throw new Error(`upload ${summary.state}: ${JSON.stringify(summary.files)}`)
      }
      if (summary.bytes.sent !== count * bytes) {
        throw new Error(`sent ${summary.bytes.sent} bytes of ${count * bytes}`)
      }
    })
    sample()
    const phase = (last as UploadProgress | null)?.phase
    if (phase !== 'finished') throw new Error(`the last progress said ${String(phase)}`)
    return {
      ...timing,
      rssGrowth: peak.rss - before.rss,
      buffersGrowth: peak.arrayBuffers - before.arrayBuffers,
      hashedMs: hashedAt - started,
    }
  } finally {
    clearInterval(sampler)
    databases.close()
    rmSync(home, { recursive: true, force: true })
  }
}

const small = writeFolder('small', SMALL.files, SMALL.bytes)
let large: { dir: string; files: LocalFile[] } | null = null
/** Written once the small files are done with and removed, to keep the disk used down. */
function largeFolder(): { dir: string; files: LocalFile[] } {
  if (!large) {
    rmSync(small.dir, { recursive: true, force: true })
    large = writeFolder('large', LARGE.files, LARGE.bytes)
  }
  return large
}

const results = {
  smallRaw: [] as Timing[],
  smallTool: [] as ToolRun[],
  largeRaw: [] as (Timing & { putMs: number })[],
  largeTool: [] as ToolRun[],
}
const loadBefore = loadavg()[0] ?? 0

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
  const best = <T extends Timing>(runs: T[]): T =>
    runs.reduce((a, b) => (b.ms < a.ms ? b : a), runs[0] as T)
  /** Each round's own ratio (its raw time over its upload time), to show the spread. */
  const pairs = (raw: Timing[], tool: Timing[]) =>
    tool.map((run, i) => ((raw[i]?.ms ?? Number.NaN) / run.ms).toFixed(2)).join(', ')
  const n = (value: number) => Math.round(value).toLocaleString('en-US')
  const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`
  const perFile = (run: Timing) => (run.cpuMs / SMALL.files).toFixed(2)
  const lines = ['']
  if (results.smallRaw.length > 0 && results.smallTool.length > 0) {
    const raw = best(results.smallRaw)
    const tool = best(results.smallTool)
    const rawRate = (SMALL.files / raw.ms) * 1000
    const toolRate = (SMALL.files / tool.ms) * 1000
    lines.push(
      `${n(SMALL.files)} files of 64 KiB, ${CONCURRENCY} files at a time (sandbox in its own process, fresh for each run), best of ${ITERATIONS.small}:`,
      `  raw declare + PUT + confirm:  ${n(rawRate)} files/s, client CPU ${perFile(raw)} ms/file`,
      `  startFolderUpload:            ${n(toolRate)} files/s, client CPU ${perFile(tool)} ms/file`,
      `  startFolderUpload / raw = ${(toolRate / rawRate).toFixed(2)}   (target ≥ 0.80; each round: ${pairs(results.smallRaw, results.smallTool)})`,
    )
  }
  if (results.largeRaw.length > 0 && results.largeTool.length > 0) {
    const raw = best(results.largeRaw)
    const tool = best(results.largeTool)
    const total = LARGE.files * LARGE.bytes
    const rate = (ms: number) => total / MiB / (ms / 1000)
    const growth = results.largeTool.map((r) => r.rssGrowth)
    const first = results.largeTool[0]
    lines.push(
      `${LARGE.files} files of ${mib(LARGE.bytes)}, ${mib(PART_SIZE)} parts, ${PARTS_IN_FLIGHT} parts in flight, declare and confirm timed for both, best of ${ITERATIONS.large}:`,
      `  raw declare + PUTs + confirm: ${rate(raw.ms).toFixed(0)} MiB/s (the PUTs alone: ${rate(raw.putMs).toFixed(0)} MiB/s), client CPU ${(raw.cpuMs / 1000).toFixed(1)} s`,
      `  startFolderUpload:            ${rate(tool.ms).toFixed(0)} MiB/s, client CPU ${(tool.cpuMs / 1000).toFixed(1)} s; hashing took the first ${(tool.hashedMs / 1000).toFixed(1)} s of ${(tool.ms / 1000).toFixed(1)} s`,
      `  startFolderUpload / raw = ${(rate(tool.ms) / rate(raw.ms)).toFixed(2)}   (target ≥ 0.85; each round: ${pairs(results.largeRaw, results.largeTool)})`,
      `  peak RSS growth during the upload: first run +${mib(first?.rssGrowth ?? 0)} (ArrayBuffers at the peak +${mib(first?.buffersGrowth ?? 0)}), most +${mib(Math.max(...growth))} (each run: ${growth.map((g) => (g / MiB).toFixed(0)).join(', ')} MiB); bound ${PARTS_IN_FLIGHT} × ${mib(PART_SIZE)} + 32 MiB = ${mib(RSS_BOUND)}`,
    )
  }
  lines.push(
    `load average before and after: ${loadBefore.toFixed(1)}, ${(loadavg()[0] ?? 0).toFixed(1)} (on ${availableParallelism()} cores)`,
    '',
  )
  console.log(lines.join('\n'))
})

const once = { time: 0, warmupTime: 0, warmupIterations: 0 }

/**
 * The raw loop and the upload back to back, each on a fresh sandbox, the upload first in the
 * first, third... round and second in the others: other work on the machine then weighs on both
 * alike.
 */
async function pair(round: number, raw: () => Promise<void>, tool: () => Promise<void>) {
  const runs = round % 2 === 0 ? [tool, raw] : [raw, tool]
  for (const run of runs) await run()
}

const rounds = { small: 0, large: 0 }

describe(`folder upload, ${SMALL.files.toLocaleString('en-US')} files of 64 KiB`, () => {
  bench(
    'raw declare + PUT + confirm, then startFolderUpload (order alternating)',
    // Declared async: tinybench calls a plain function once more to find out whether it is.
    async () => {
      await pair(
        rounds.small++,
        async () => {
          const remote = await serve()
          try {
            results.smallRaw.push(await timed(() => rawSmall(remote, small.files)))
          } finally {
            await remote.stop()
          }
        },
        async () => {
          const remote = await serve()
          try {
            results.smallTool.push(await toolRun(remote, small.dir, SMALL.files, SMALL.bytes))
          } finally {
            await remote.stop()
          }
        },
      )
    },
    { ...once, iterations: ITERATIONS.small },
  )
})

describe(`folder upload, ${LARGE.files} files of ${LARGE.bytes / MiB} MiB`, () => {
  // The upload goes first in the first round: its RSS is measured before any raw run held parts.
  bench(
    'raw declare + part PUTs + confirm, then startFolderUpload (order alternating)',
    async () => {
      const { dir, files } = largeFolder()
      await pair(
        rounds.large++,
        async () => {
          const remote = await serve()
          try {
            let putMs = 0
            const timing = await timed(async () => {
              putMs = (await rawLarge(remote, files)).putMs
            })
            results.largeRaw.push({ ...timing, putMs })
          } finally {
            await remote.stop()
          }
        },
        async () => {
          const remote = await serve()
          try {
            results.largeTool.push(await toolRun(remote, dir, LARGE.files, LARGE.bytes))
          } finally {
            await remote.stop()
          }
        },
      )
    },
    { ...once, iterations: ITERATIONS.large },
  )
})

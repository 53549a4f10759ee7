import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createReadStream, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { closeSync, openSync, writeSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import v8 from 'node:v8'
import vm from 'node:vm'
import { afterAll, bench, describe } from 'vitest'
import type { Evaluation, Run, components } from '../../src-shared/api'
import { openDatabases, type Mirror } from '../../src-main/db'
import { startSandbox } from '../../src-main/sandbox'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine, type SyncCollection, type SyncProgress } from '../../src-main/sync'

type Asset = components['schemas']['Asset']

/**
 * The initial sync of 100,000 runs + 20,000 evaluations + 20,000 assets from the sandbox on
 * loopback, against its two parts measured alone in the same run on the same pages:
 *
 * - raw page fetches: the client walks the very lists the sync reads (same params), keeping
 *   nothing;
 * - raw upserts: the same rows, captured beforehand as pages in an NDJSON file (read back line
 *   by line, so never all in memory), written with the repositories' upsertPage into a fresh
 *   mirror; only the upserts are timed;
 * - the sync: `SyncEngine.syncAll` of those collections into a fresh mirror.
 *
 * The target is sync ≥ 0.8 × min(fetches, upserts): the sync overlaps fetching the next page
 * with writing the current one. The sandbox runs in its own process (`atelier sandbox`), as a
 * service would, so the two can overlap at all. Memory, in syncs of their own (not timed):
 * heapUsed and rss every 10 pages, each right after a full garbage collection so that what is
 * measured is what the sync holds, not garbage not yet collected; the figure is the most minus
 * the value after the first collection's first pages, for the full size and for a quarter of it
 * (flat: it does not grow with the size).
 *
 * The seeded sandbox folders are kept in the OS temp folder, keyed by the sizes and a stamp
 * (bump it when seeding changes), since seeding 100,000 runs takes a while. SYNC_BENCH_SCALE
 * (default 1) shrinks every size, for trying the bench out.
 */

const SCALE = Number(process.env.SYNC_BENCH_SCALE ?? '1')
const STAMP = 'v1'
const COLLECTIONS = ['assets', 'runs', 'evaluations'] as const satisfies readonly SyncCollection[]
const PATHS: Record<(typeof COLLECTIONS)[number], '/v1/assets' | '/v1/runs' | '/v1/evaluations'> = {
  assets: '/v1/assets',
  runs: '/v1/runs',
  evaluations: '/v1/evaluations',
}
const QUERY = { sort_by: 'updated_at:asc', limit: 500 }
const ITERATIONS = 2

interface Sizes {
  runs: number
  evaluations: number
  assets: number
}

const FULL: Sizes = {
  runs: Math.round(100_000 * SCALE),
  evaluations: Math.round(20_000 * SCALE),
  assets: Math.round(20_000 * SCALE),
}
const QUARTER: Sizes = {
  runs: Math.round(FULL.runs / 4),
  evaluations: Math.round(FULL.evaluations / 4),
  assets: Math.round(FULL.assets / 4),
}

const root = join(import.meta.dirname, '..', '..')
const scratch = mkdtempSync(join(tmpdir(), 'atelier-sync-bench-'))

/** A sandbox data folder seeded with `sizes`, made once and kept for later runs. */
async function seededFolder(sizes: Sizes): Promise<string> {
  const dir = join(
    tmpdir(),
    `atelier-sync-bench-${sizes.runs}-${sizes.evaluations}-${sizes.assets}-${STAMP}`,
  )
  const ready = join(dir, 'seeded')
  if (existsSync(ready)) return dir
  rmSync(dir, { recursive: true, force: true })
  const sandbox = await startSandbox({ dataDir: dir, latencyMs: 0 })
  try {
    await seedHistory(sandbox.services, sandbox.orgId, sizes.runs, [], {
      evaluations: sizes.evaluations,
      assets: sizes.assets,
    })
  } finally {
    await sandbox.close()
  }
  writeFileSync(ready, `${JSON.stringify(sizes)}\n`)
  return dir
}

interface Remote {
  url: string
  orgId: string
  client: ServiceClient
  stop: () => Promise<void>
}

/** `atelier sandbox` on a seeded folder, in its own process; ready when it prints its line. */
async function serve(dir: string): Promise<Remote> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [join(root, 'bin', 'atelier.mjs'), 'sandbox', '--data', dir, '--latency-ms', '0'],
    { cwd: root },
  )
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
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
    child.on('exit', (code) => {
      reject(new Error(`the sandbox exited (${code}): ${errors}`))
    })
  })
  const ready = JSON.parse(line) as { url: string; orgId: string; keys: { admin: string } }
  return {
    url: ready.url,
    orgId: ready.orgId,
    client: createServiceClient({ baseUrl: ready.url, apiKey: ready.keys.admin }),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => {
          resolve()
        })
        child.kill('SIGTERM')
      }),
  }
}

function freshMirror(): { mirror: Mirror; close: () => void } {
  const home = mkdtempSync(join(scratch, 'home-'))
  const dbs = openDatabases(home)
  return {
    mirror: dbs.mirror,
    close: () => {
      dbs.close()
      rmSync(home, { recursive: true, force: true })
    },
  }
}

/** Every page of the measured lists, one NDJSON line each, for the upsert baseline. */
async function capture(client: ServiceClient, file: string): Promise<number> {
  const fd = openSync(file, 'w')
  let records = 0
  try {
    for (const collection of COLLECTIONS) {
      for await (const page of client.pages(PATHS[collection], { params: { query: QUERY } })) {
        writeSync(fd, `${JSON.stringify({ collection, items: page.items })}\n`)
        records += page.items.length
      }
    }
  } finally {
    closeSync(fd)
  }
  return records
}

interface Memory {
  heap: number
  rss: number
}

// A full collection before each sample; the flag is V8's own, switched on for this process.
v8.setFlagsFromString('--expose-gc')
const collectGarbage = vm.runInNewContext('gc') as () => void
const SAMPLE_EVERY = 10

/**
 * The sync of the measured collections into a fresh mirror. With `sampleMemory`, what it holds
 * every SAMPLE_EVERY pages: the most, minus the value after the first collection's first pages
 * (when statements, buffers and caches are all in use).
 */
async function syncOnce(
  remote: Remote,
  sampleMemory = false,
): Promise<{ ms: number; records: number; grew: Memory }> {
  const { mirror, close } = freshMirror()
  const at: { baseline: Memory | null } = { baseline: null }
  const most: Memory = { heap: 0, rss: 0 }
  let pages = 0
  try {
    const started = performance.now()
    const result = await new SyncEngine({
      client: remote.client,
      mirror,
      profileName: 'bench',
      orgId: remote.orgId,
      ...(sampleMemory
        ? {
            onProgress: (p: SyncProgress) => {
              if (p.phase !== 'page' || pages++ % SAMPLE_EVERY !== 1) return
              collectGarbage()
              const { heapUsed: heap, rss } = process.memoryUsage()
              at.baseline ??= { heap, rss }
              most.heap = Math.max(most.heap, heap)
              most.rss = Math.max(most.rss, rss)
            },
          }
        : {}),
    }).syncAll({ collections: COLLECTIONS })
    const ms = performance.now() - started
    if (result.state !== 'ok') throw new Error(`sync ${result.state}: ${result.message ?? ''}`)
    const records = result.collections.reduce((sum, c) => sum + c.fetched, 0)
    const base: Memory = at.baseline ?? { heap: most.heap, rss: most.rss }
    return { ms, records, grew: { heap: most.heap - base.heap, rss: most.rss - base.rss } }
  } finally {
    close()
  }
}

const full = await serve(await seededFolder(FULL))
const quarterFolder = await seededFolder(QUARTER)
const pagesFile = join(scratch, 'pages.ndjson')
const captured = await capture(full.client, pagesFile)

const times = { fetch: [] as number[], upsert: [] as number[], sync: [] as number[] }
// The sync overlaps two processes' work, so it suffers most from a machine busy with others.
const loadBefore = loadavg()[0] ?? 0
const memory = { full: [] as Memory[], quarter: [] as Memory[] }

afterAll(async () => {
  await full.stop()
  rmSync(scratch, { recursive: true, force: true })
  const best = (values: number[]) => Math.min(...values)
  const rate = (ms: number) => Math.round((captured / ms) * 1000)
  const n = (value: number) => value.toLocaleString('en-US')
  const fetchRate = rate(best(times.fetch))
  const upsertRate = rate(best(times.upsert))
  const syncRate = rate(best(times.sync))
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
  const grew = (samples: Memory[]) =>
    `heapUsed +${mib(Math.max(...samples.map((m) => m.heap)))}, rss +${mib(Math.max(...samples.map((m) => m.rss)))}`
  console.log(
    [
      '',
      `Initial sync of ${n(FULL.runs)} runs + ${n(FULL.evaluations)} evaluations + ${n(FULL.assets)} assets (${n(captured)} records, sandbox in its own process on loopback), best of ${ITERATIONS}:`,
      `  raw page fetches:  ${n(fetchRate)} records/s`,
      `  raw upserts:       ${n(upsertRate)} records/s`,
      `  sync:              ${n(syncRate)} records/s`,
      `  sync / min(fetches, upserts) = ${(syncRate / Math.min(fetchRate, upsertRate)).toFixed(2)}   (target ≥ 0.80)`,
      `  load average before and after: ${loadBefore.toFixed(1)}, ${(loadavg()[0] ?? 0).toFixed(1)} (on ${availableParallelism()} cores)`,
      `Memory held by the sync (after a full GC, every ${SAMPLE_EVERY} pages), most minus after the first pages: ${grew(memory.full)}; at a quarter of the size: ${grew(memory.quarter)}`,
      '',
    ].join('\n'),
  )
})

const once = { time: 0, iterations: ITERATIONS, warmupTime: 0, warmupIterations: 0 }

describe(`initial sync, ${FULL.runs.toLocaleString('en-US')} runs`, () => {
  bench(
    'raw page fetches (same pages, discarded)',
    async () => {
      const started = performance.now()
      let records = 0
      for (const collection of COLLECTIONS) {
        for await (const page of full.client.pages(PATHS[collection], {
          params: { query: QUERY },
        })) {
          records += page.items.length
        }
      }
      times.fetch.push(performance.now() - started)
      if (records !== captured) throw new Error(`fetched ${records}, captured ${captured}`)
    },
    once,
  )

  bench(
    'raw upserts (same rows, upsertPage into a fresh mirror)',
    async () => {
      const { mirror, close } = freshMirror()
      const orgId = full.orgId
      let ms = 0
      let records = 0
      try {
        const lines = createInterface({ input: createReadStream(pagesFile), crlfDelay: Infinity })
        for await (const line of lines) {
          const page = JSON.parse(line) as { collection: string; items: unknown[] }
          const started = performance.now()
          if (page.collection === 'runs') mirror.runs.upsertPage(page.items as Run[])
          else if (page.collection === 'assets') mirror.assets.upsertPage(page.items as Asset[])
          else mirror.evaluations.upsertPage(page.items as Evaluation[], { orgId })
          ms += performance.now() - started
          records += page.items.length
        }
      } finally {
        close()
      }
      times.upsert.push(ms)
      if (records !== captured) throw new Error(`upserted ${records}, captured ${captured}`)
    },
    once,
  )

  bench(
    'sync (SyncEngine.syncAll into a fresh mirror)',
    async () => {
      const { ms, records } = await syncOnce(full)
      times.sync.push(ms)
      if (records !== captured) throw new Error(`synced ${records}, captured ${captured}`)
    },
    once,
  )

  bench(
    'memory: the sync at full size and at a quarter of it (not timed)',
    async () => {
      memory.full.push((await syncOnce(full, true)).grew)
      const quarter = await serve(quarterFolder)
      try {
        memory.quarter.push((await syncOnce(quarter, true)).grew)
      } finally {
        await quarter.stop()
      }
    },
    { ...once, iterations: 1 },
  )
})

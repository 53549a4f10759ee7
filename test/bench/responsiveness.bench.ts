import { AsyncLocalStorage } from 'node:async_hooks'
import { setMaxListeners } from 'node:events'
import { randomFillSync } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { writeFileSync, writeSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, bench, describe } from 'vitest'
import { observeTransactions, type TransactionTiming } from '../../src-main/db/connection'
import { openDatabases } from '../../src-main/db'
import {
  BuiltinRunner,
  mirrorDurations,
  mirrorModels,
  onlineCatalog,
  RemoteRunner,
  runFlow,
} from '../../src-main/executor'
import { MediaStore } from '../../src-main/media-store'
import { startSandbox } from '../../src-main/sandbox'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient } from '../../src-main/service'
import { ledgerPins, SyncEngine, type PageWrites } from '../../src-main/sync'
import { startFolderUpload } from '../../src-main/uploads'
import { randomFlow } from '../helpers/bench-flow'
import { startCpuProfile, summarizeProfile, type ProfileSummary } from '../helpers/cpu-profile'
import { startSandboxProcess, type SandboxProcess } from '../helpers/sandbox-process'

/**
 * Issue 9: does the main process stay fluid while it works? This process stands for it: the
 * same services the core runs, over one pair of databases, do three things at once:
 *
 * - a first sync of a 100,000-run history (plus the evaluations and assets the sandbox seeds
 *   with it) from a sandbox in its own process, every collection and the run-details pass;
 * - a 500-node flow run (250 model nodes at the sandbox's nominal 300 ms, 250 prompt joins) on
 *   a second sandbox process, with the app's runners and default concurrency;
 * - a folder upload of 2,000 files of 64 KiB to that second sandbox.
 *
 * Figures, over the time the three run (and over the part where all three overlap):
 * - the event-loop delay, `monitorEventLoopDelay({ resolution: 1 })`: p50, p99, max, and the
 *   same monitor over an idle period of the same length right after (the sandboxes up, nothing
 *   asked of them) as the baseline. Node counts the 1 ms timer period itself in each sample;
 * - every SQLite transaction on this thread (`observeTransactions` of src-main/db): duration
 *   p50, p99, max and how many took over 8 ms, for all, per job and per kind;
 * - each job's own throughput (records/s, nodes/s, files/s), so a fix that only slows the work
 *   down shows;
 * - the event-loop utilization and the process's CPU time, and the load average, since this
 *   machine is shared and a busy one delays timers by itself.
 *
 * RESPONSIVENESS_SCALE (default 1) scales the three sizes, for a quick run.
 * RESPONSIVENESS_PAGE_WRITES=main-thread writes the sync's pages on the main thread, as before
 * the page writer thread (src-main/sync/writer), for the comparison.
 * RESPONSIVENESS_CPU_PROFILE=<folder>: the combined run is CPU-profiled (the profile is written
 * there, to open in DevTools) and its top main-thread costs are printed; the profiler's own
 * cost then weighs on the other figures.
 * The seeded sandbox folder is kept in the OS temp folder (seeding takes a while), keyed by its
 * size and a stamp to bump when seeding changes.
 */

const SCALE = Number(process.env.RESPONSIVENESS_SCALE ?? '1')
const PROFILE_DIR = process.env.RESPONSIVENESS_CPU_PROFILE
const PAGE_WRITES: PageWrites =
  process.env.RESPONSIVENESS_PAGE_WRITES === 'main-thread' ? 'main-thread' : 'worker'
const STAMP = 'v1'
const SIZES = {
  runs: Math.max(500, Math.round(100_000 * SCALE)),
  nodes: Math.max(20, Math.round(500 * SCALE)),
  files: Math.max(16, Math.round(2_000 * SCALE)),
}
const FILE_BYTES = 64 * 1024
/** The model latency of the flow's sandbox: a quick real text-to-image model. */
const LATENCY_MS = 300
/** Past this the jobs are aborted and the bench fails: it must end, whatever happens. */
const DEADLINE_MS = 10 * 60_000
const SLOW_MS = 8

type Job = 'sync' | 'flow' | 'upload'
const JOBS: readonly Job[] = ['sync', 'flow', 'upload']

const scratch = mkdtempSync(join(tmpdir(), 'atelier-responsiveness-'))

/** A sandbox data folder holding the history, made once and kept for later runs. */
async function seededFolder(runs: number): Promise<string> {
  const dir = join(tmpdir(), `atelier-responsiveness-bench-${runs}-${STAMP}`)
  const ready = join(dir, 'seeded')
  if (existsSync(ready)) return dir
  rmSync(dir, { recursive: true, force: true })
  const sandbox = await startSandbox({ dataDir: dir, latencyMs: 0 })
  try {
    await seedHistory(sandbox.services, sandbox.orgId, runs)
  } finally {
    await sandbox.close()
  }
  writeFileSync(ready, `${JSON.stringify({ runs })}\n`)
  return dir
}

/** `count` media files of FILE_BYTES (a BMP header, then random bytes). */
function mediaFolder(count: number): string {
  const dir = join(scratch, 'upload')
  mkdirSync(dir)
  const bytes = Buffer.alloc(FILE_BYTES)
  for (let i = 0; i < count; i++) {
    randomFillSync(bytes)
    bytes.write('BM', 0, 'latin1')
    bytes.writeUInt32LE(FILE_BYTES, 2)
    bytes.writeUInt32LE(54, 10)
    bytes.writeUInt32LE(40, 14)
    bytes.writeInt32LE(256, 18)
    bytes.writeInt32LE(Math.floor((FILE_BYTES - 54) / (256 * 3)), 22)
    bytes.writeUInt16LE(1, 26)
    bytes.writeUInt16LE(24, 28)
    const fd = openSync(join(dir, `file-${String(i).padStart(5, '0')}.bmp`), 'w')
    try {
      writeSync(fd, bytes)
    } finally {
      closeSync(fd)
    }
  }
  return dir
}

interface Delay {
  p50: number
  p99: number
  max: number
}

const delayOf = (histogram: IntervalHistogram): Delay => ({
  p50: histogram.percentile(50) / 1e6,
  p99: histogram.percentile(99) / 1e6,
  max: histogram.max / 1e6,
})

interface Recorded extends TransactionTiming {
  job: Job | 'other'
}

interface JobFigures {
  ms: number
  /** Records, nodes or files done. */
  done: number
  unit: string
  note: string
}

interface Figures {
  windowMs: number
  busy: Delay
  overlap: Delay
  overlapMs: number
  idle: Delay
  utilization: number
  cpuMs: number
  load: [number, number]
  jobs: Record<Job, JobFigures>
  transactions: Recorded[]
  profile: ProfileSummary | null
}

const jobOf = new AsyncLocalStorage<Job>()

/** One combined run: fresh databases and a fresh second sandbox, the seeded one read again. */
async function combinedRun(seeded: string, uploadDir: string, profile: boolean): Promise<Figures> {
  const home = mkdtempSync(join(scratch, 'home-'))
  const remotes: SandboxProcess[] = []
  const recorded: Recorded[] = []
  let recording = false
  observeTransactions((timing) => {
    if (recording) recorded.push({ ...timing, job: jobOf.getStore() ?? 'other' })
  })
  const dbs = openDatabases(home)
  const media = new MediaStore({
    dir: join(home, 'media'),
    maxBytes: 512 * 1024 * 1024,
    isPinned: ledgerPins(dbs.ledger),
  })
  const deadline = new AbortController()
  // Every request of the three jobs listens to it at once.
  setMaxListeners(0, deadline.signal)
  const timer = setTimeout(() => {
    deadline.abort(new Error(`The combined run took over ${DEADLINE_MS / 60_000} min.`))
  }, DEADLINE_MS)
  try {
    const history = await startSandboxProcess({ dataDir: seeded, latencyMs: 0 })
    remotes.push(history)
    const work = await startSandboxProcess({ latencyMs: LATENCY_MS })
    remotes.push(work)
    const historyClient = createServiceClient({ baseUrl: history.url, apiKey: history.key })
    const workClient = createServiceClient({ baseUrl: work.url, apiKey: work.key })

    // Not measured: what the flow's runners read from the mirror (the editor has it by then).
    await new SyncEngine({
      client: workClient,
      mirror: dbs.mirror,
      profileName: 'flows',
      orgId: work.orgId,
      detailsLimit: 0,
    }).syncAll({ collections: ['catalogs', 'models'] })
    const model = dbs.mirror.models.withSlug({ orgId: work.orgId }, 'atelier/text-to-image')
    if (!model) throw new Error('The sandbox has no atelier/text-to-image.')
    const flow = randomFlow(SIZES.nodes, model.id)
    const remote = new RemoteRunner({
      client: workClient,
      ledger: dbs.ledger,
      profile: 'flows',
      orgId: work.orgId,
      models: mirrorModels(dbs.mirror, work.orgId),
      durations: mirrorDurations(dbs.mirror, work.orgId),
    })
    const runners = {
      model: remote,
      wfengine_workflow: remote,
      builtin: new BuiltinRunner({ media, service: workClient }),
    }

    const syncJob = async (): Promise<Omit<JobFigures, 'ms'>> => {
      let pagesWent = 'the main thread (no page called for the writer)'
      const result = await new SyncEngine({
        client: historyClient,
        mirror: dbs.mirror,
        profileName: 'sync',
        orgId: history.orgId,
        pageWrites: PAGE_WRITES,
        onPageWriter: ({ where, fallback }) => {
          pagesWent =
            where === 'worker'
              ? 'the page writer thread'
              : `the main thread (${fallback ?? 'asked for'})`
        },
      }).syncAll({ signal: deadline.signal })
      if (result.state !== 'ok') throw new Error(`sync ${result.state}: ${result.message ?? ''}`)
      const of = (name: string) => result.collections.find((c) => c.collection === name)
      const records = result.collections
        .filter((c) => c.collection !== 'run-details')
        .reduce((sum, c) => sum + c.fetched, 0)
      return {
        done: records,
        unit: 'records',
        note: `${n(of('runs')?.fetched ?? 0)} runs, ${n(of('evaluations')?.fetched ?? 0)} evaluations, ${n(of('assets')?.fetched ?? 0)} assets; ${n(of('run-details')?.fetched ?? 0)} run-detail records; pages written by ${pagesWent}`,
      }
    }
    const flowJob = async (): Promise<Omit<JobFigures, 'ms'>> => {
      const result = await runFlow({
        flow,
        runners,
        catalog: onlineCatalog({ mirror: dbs.mirror, client: workClient, orgId: work.orgId }),
        ledger: dbs.ledger,
        client: workClient,
        profile: 'flows',
        orgId: work.orgId,
        signal: deadline.signal,
      })
      if (result.state !== 'succeeded') throw new Error(`flow ${result.state}`)
      return {
        done: flow.nodes.length,
        unit: 'nodes',
        note: `${result.totals.dispatched} dispatched, default concurrency`,
      }
    }
    const uploadJob = async (): Promise<Omit<JobFigures, 'ms'>> => {
      const upload = startFolderUpload({
        service: workClient,
        uploads: dbs.ledger.uploads,
        profile: 'uploads',
        orgId: work.orgId,
        root: uploadDir,
      })
      const onAbort = () => {
        upload.cancel()
      }
      deadline.signal.addEventListener('abort', onAbort)
      try {
        const summary = await upload.done
        if (summary.state !== 'finished' || summary.files.uploaded !== SIZES.files) {
          throw new Error(`upload ${summary.state}: ${JSON.stringify(summary.files)}`)
        }
        return { done: summary.files.uploaded, unit: 'files', note: '64 KiB each' }
      } finally {
        deadline.signal.removeEventListener('abort', onAbort)
      }
    }

    const busy = monitorEventLoopDelay({ resolution: 1 })
    const overlap = monitorEventLoopDelay({ resolution: 1 })
    const profiler = profile ? await startCpuProfile() : null
    const loadBefore = loadavg()[0] ?? 0
    const cpuBefore = process.cpuUsage()
    const eluBefore = performance.eventLoopUtilization()
    busy.enable()
    overlap.enable()
    recording = true
    const started = performance.now()
    let overlapMs = 0
    const timedJob = (job: Job, work: () => Promise<Omit<JobFigures, 'ms'>>) =>
      jobOf.run(job, async (): Promise<JobFigures> => {
        try {
          const figures = await work()
          return { ...figures, ms: performance.now() - started }
        } finally {
          if (overlapMs === 0) {
            overlapMs = performance.now() - started
            overlap.disable()
          }
        }
      })
    const settled = await Promise.allSettled([
      timedJob('sync', syncJob),
      timedJob('flow', flowJob),
      timedJob('upload', uploadJob),
    ])
    const windowMs = performance.now() - started
    recording = false
    busy.disable()
    const utilization = performance.eventLoopUtilization(eluBefore).utilization
    const cpu = process.cpuUsage(cpuBefore)
    const loadAfter = loadavg()[0] ?? 0
    const cpuProfile = profiler ? await profiler.stop() : null
    const failed = settled.find((s) => s.status === 'rejected')
    if (failed) throw failed.reason
    const [sync, flowFigures, upload] = settled.map(
      (s) => (s as PromiseFulfilledResult<JobFigures>).value,
    )

    if (cpuProfile && PROFILE_DIR) {
      mkdirSync(PROFILE_DIR, { recursive: true })
      writeFileSync(
        join(
          PROFILE_DIR,
          `responsiveness-${new Date().toISOString().replace(/[:.]/g, '')}.cpuprofile`,
        ),
        JSON.stringify(cpuProfile),
      )
    }

    // The baseline: as long, with nothing to do. Its own monitor, started fresh.
    const idle = monitorEventLoopDelay({ resolution: 1 })
    idle.enable()
    await delay(windowMs)
    idle.disable()

    return {
      windowMs,
      busy: delayOf(busy),
      overlap: delayOf(overlap),
      overlapMs,
      idle: delayOf(idle),
      utilization,
      cpuMs: (cpu.user + cpu.system) / 1000,
      load: [loadBefore, loadAfter],
      jobs: {
        sync: sync as JobFigures,
        flow: flowFigures as JobFigures,
        upload: upload as JobFigures,
      },
      transactions: recorded,
      profile: cpuProfile ? summarizeProfile(cpuProfile, 20) : null,
    }
  } finally {
    clearTimeout(timer)
    recording = false
    observeTransactions(null)
    await media.close()
    dbs.close()
    for (const remote of remotes) await remote.stop()
    rmSync(home, { recursive: true, force: true })
  }
}

const n = (value: number) => Math.round(value).toLocaleString('en-US')
const ms = (value: number) => `${value.toFixed(1)} ms`

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

/** count, p50, p99, max, how many over SLOW_MS, and the total time held. */
function stats(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b)
  const slow = sorted.filter((v) => v > SLOW_MS).length
  const total = sorted.reduce((sum, v) => sum + v, 0)
  return `${n(sorted.length).padStart(6)} × p50 ${ms(quantile(sorted, 0.5)).padStart(8)}, p99 ${ms(quantile(sorted, 0.99)).padStart(8)}, max ${ms(sorted.at(-1) ?? Number.NaN).padStart(8)}, > ${SLOW_MS} ms: ${String(slow).padStart(4)}, total ${ms(total)}`
}

/**
 * What kind of work a transaction was: a transaction function by where it was made, a lone
 * statement by its database and whether it reads or writes.
 */
function kindOf(record: Recorded): string {
  if (record.kind === 'transaction') return `${record.job} · ${record.label}`
  const reads = /^\s*(SELECT|WITH)\b/i.test(record.label)
  return `${record.job} · ${record.file} ${reads ? 'reads' : 'writes'} (single statements)`
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const item of items) {
    const k = key(item)
    const group = groups.get(k)
    if (group) group.push(item)
    else groups.set(k, [item])
  }
  return groups
}

function report(figures: Figures, run: number): string[] {
  const { busy, overlap, idle } = figures
  const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}×`
  const lines = [
    `Run ${run}: ${n(SIZES.runs)}-run history sync + ${SIZES.nodes}-node flow run + upload of ${n(SIZES.files)} files, at once, in one process (sandboxes in their own)`,
    `  window ${(figures.windowMs / 1000).toFixed(1)} s (all three running: the first ${(figures.overlapMs / 1000).toFixed(1)} s); load average ${figures.load[0].toFixed(1)} → ${figures.load[1].toFixed(1)} on ${availableParallelism()} cores`,
    `  event-loop delay, whole window:   p50 ${ms(busy.p50)}, p99 ${ms(busy.p99)}, max ${ms(busy.max)}   (target p99 ≤ 10 ms)`,
    `  event-loop delay, all three:      p50 ${ms(overlap.p50)}, p99 ${ms(overlap.p99)}, max ${ms(overlap.max)}`,
    `  event-loop delay, idle baseline:  p50 ${ms(idle.p50)}, p99 ${ms(idle.p99)}, max ${ms(idle.max)}`,
    `  whole window ÷ idle:              p50 ${ratio(busy.p50, idle.p50)}, p99 ${ratio(busy.p99, idle.p99)}, max ${ratio(busy.max, idle.max)}`,
    `  event-loop utilization ${(figures.utilization * 100).toFixed(0)} %, process CPU (every thread, the page writer included) ${(figures.cpuMs / 1000).toFixed(1)} s (${((figures.cpuMs / figures.windowMs) * 100).toFixed(0)} % of one core)`,
    '  throughput of each job (from the common start to its own end):',
  ]
  for (const job of JOBS) {
    const { done, unit, ms: took, note } = figures.jobs[job]
    lines.push(
      `    ${job.padEnd(7)} ${n((done / took) * 1000).padStart(7)} ${unit}/s  (${n(done)} ${unit} in ${(took / 1000).toFixed(1)} s; ${note})`,
    )
  }
  const all = figures.transactions
  lines.push(
    `  SQLite transactions on the main thread (target: none > ${SLOW_MS} ms):`,
    `    all            ${stats(all.map((t) => t.ms))}`,
  )
  for (const [job, records] of groupBy(all, (t) => t.job)) {
    lines.push(`    ${job.padEnd(14)} ${stats(records.map((t) => t.ms))}`)
  }
  lines.push('    by kind, slowest first:')
  const kinds = [...groupBy(all, kindOf)].sort(
    (a, b) => Math.max(...b[1].map((t) => t.ms)) - Math.max(...a[1].map((t) => t.ms)),
  )
  for (const [kind, records] of kinds.slice(0, 16)) {
    lines.push(`      ${kind}`, `        ${stats(records.map((t) => t.ms))}`)
  }
  const statements = [
    ...groupBy(
      all.filter((t) => t.kind === 'statement'),
      (t) => `${t.job} · ${t.file}: ${t.label}`,
    ),
  ]
    .sort((a, b) => Math.max(...b[1].map((t) => t.ms)) - Math.max(...a[1].map((t) => t.ms)))
    .slice(0, 6)
  if (statements.length > 0) lines.push('    single statements, slowest first:')
  for (const [what, records] of statements) {
    lines.push(`      ${what}`, `        ${stats(records.map((t) => t.ms))}`)
  }
  if (figures.profile) {
    const { profile } = figures
    const busyMs = profile.totalMs - profile.idleMs
    lines.push(
      `  CPU profile of this thread: ${(busyMs / 1000).toFixed(1)} s busy of ${(profile.totalMs / 1000).toFixed(1)} s sampled`,
      '    self time by function:',
      ...profile.functions.map(
        (c) =>
          `      ${ms(c.ms).padStart(10)} ${(c.share * 100).toFixed(1).padStart(5)} %  ${c.name}`,
      ),
      '    time with the place on the stack:',
      ...profile.places.map(
        (c) =>
          `      ${ms(c.ms).padStart(10)} ${(c.share * 100).toFixed(1).padStart(5)} %  ${c.name}`,
      ),
    )
  }
  return lines
}

const seeded = await seededFolder(SIZES.runs)
const uploadDir = mediaFolder(SIZES.files)
const output: string[] = []
let runs = 0

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
  console.log(['', ...output, ''].join('\n'))
})

describe('responsiveness of the main process', () => {
  bench(
    `sync of ${n(SIZES.runs)} runs + ${SIZES.nodes}-node flow run + ${n(SIZES.files)}-file upload, at once`,
    async () => {
      const run = ++runs
      output.push(...report(await combinedRun(seeded, uploadDir, PROFILE_DIR !== undefined), run))
    },
    { time: 0, iterations: 1, warmupTime: 0, warmupIterations: 0 },
  )
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench, describe } from 'vitest'
import type { Run } from '../../src-shared/api'
import { openConnection, openDatabases, type Databases } from '../../src-main/db'

/**
 * How fast the mirror takes a page of runs: `RunsRepository.upsertPage` (one transaction of
 * 500 records; the unique id, five list indexes and the search index written with each row)
 * against a baseline of plain INSERTs of the same JSON, 500 per transaction, into a table with
 * no index and no search. Both are real files, in WAL with synchronous=NORMAL, and both pay
 * JSON.stringify. The target is 50,000 runs/s.
 *
 * Each iteration writes a page never written before, so "new runs" measures inserts; the
 * "re-sync" case writes pages already stored, as a sync re-reading its boundary does. Each case
 * times only its own writes; the summary at the end prints runs/s (over all pages, WAL
 * checkpoints included, and for the median page) and the ratio to the baseline. vitest's own
 * table and "x faster than" line compare the same cases.
 */

const PAGE = 500
const PAGES = 60
const ITERATIONS = 50
const BASE = Date.UTC(2026, 0, 1)
const ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb23'

const WORDS = (
  'a red fox in the snow at dawn lighthouse over a stormy sea portrait of an old sailor ' +
  'watercolor city street at night neon rain cat asleep on a windowsill mountain lake ' +
  'reflections golden hour forest path with fog still life of lemons and a blue jug'
).split(' ')

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0').slice(-width)
const uuid = (n: number) =>
  `${hex(n >>> 16, 8)}-${hex(n & 0xffff, 4)}-7${hex(n, 3)}-8${hex(n * 7, 3)}-${hex(n * 2654435761, 12)}`

function sentence(seed: number, length: number): string {
  const words: string[] = []
  for (let i = 0; i < length; i++) words.push(WORDS[(seed * 31 + i * 17) % WORDS.length] ?? '')
  return words.join(' ')
}

/** A run shaped like the sandbox's: prompt and settings in, one image out with a presigned URL. */
function run(n: number): Run {
  const created = BASE + n * 1_000
  const sha = hex(n * 2654435761, 16).repeat(4)
  return {
    id: uuid(n),
    org_id: ORG,
    target_type_code: 'model',
    source_code: 'api',
    model_id: uuid(1_000_000 + (n % 7)),
    model_slug: `atelier/model-${n % 7}`,
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: n % 10 === 0 ? uuid(2_000_000 + Math.floor(n / 10)) : null,
    parent_run_id: null,
    status_code: n % 11 === 0 ? 'failed' : 'succeeded',
    input: {
      prompt: sentence(n, 8 + (n % 9)),
      negative_prompt: n % 3 === 0 ? 'blurry, low quality' : undefined,
      width: 512,
      height: 512,
      seed: n,
      style: ['photo', 'watercolor', 'ink'][n % 3],
    },
    output: {
      images: [
        {
          content_type: 'image/png',
          sha256: sha,
          size_bytes: 40_000 + n,
          width: 512,
          height: 512,
          url: `http://127.0.0.1:8787/_storage/blobs/${sha}?ct=image%2Fpng&expires=1795243996&signature=${sha}`,
          expires_at: iso(created + 3_600_000),
        },
      ],
      seed: n,
    },
    metadata: { campaign: 'Autumn lookbook', round: n % 4 },
    callback_url: null,
    idempotency_key: null,
    progress: 1,
    cost: '0.0050',
    estimated_cost: '0.0050',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    duration_ms: 900 + (n % 300),
    created_at: iso(created),
    queued_at: iso(created),
    started_at: iso(created + 300),
    completed_at: iso(created + 1_200),
    updated_at: iso(created + 1_200),
  }
}

const pages: Run[][] = Array.from({ length: PAGES }, (_, p) =>
  Array.from({ length: PAGE }, (_, i) => run(p * PAGE + i)),
)

const dir = mkdtempSync(join(tmpdir(), 'atelier-mirror-bench-'))
const mirrorHome = join(dir, 'mirror')
let dbs: Databases = openDatabases(mirrorHome)
const baseline = openConnection(join(dir, 'baseline.sqlite'), 'NORMAL')
baseline.exec('CREATE TABLE plain (json TEXT NOT NULL) STRICT')
const plainInsert = baseline.prepare('INSERT INTO plain (json) VALUES (?)')
const plainPage = baseline.transaction((records: readonly Run[]) => {
  for (const record of records) plainInsert.run(JSON.stringify(record))
})

/** Per case: every page's own time, so the summary can give both the total and the typical page. */
const times = { upsert: [] as number[], plain: [] as number[], resync: [] as number[] }

function timed(into: number[], write: () => void): void {
  const start = performance.now()
  write()
  into.push(performance.now() - start)
}

let nextUpsert = 0
let nextPlain = 0
let nextResync = 0
const take = (n: number) => pages[n % PAGES] ?? []

/** Runs per second over every page written (WAL checkpoints included), and for the median page. */
function rates(pageMs: number[]): { overall: number; median: number } {
  const sorted = [...pageMs].sort((a, b) => a - b)
  const total = pageMs.reduce((sum, ms) => sum + ms, 0)
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
  return {
    overall: Math.round((pageMs.length * PAGE * 1000) / total),
    median: Math.round((PAGE * 1000) / median),
  }
}

afterAll(() => {
  const upsert = rates(times.upsert)
  const resync = rates(times.resync)
  const plain = rates(times.plain)
  const n = (value: number) => value.toLocaleString('en')
  console.log(
    [
      '',
      `Runs per second, ${PAGE} per transaction (overall, checkpoints included | median page):`,
      `  mirror upsert, new runs:        ${n(upsert.overall)} | ${n(upsert.median)}   (target 50,000)`,
      `  mirror upsert, re-sync:         ${n(resync.overall)} | ${n(resync.median)}`,
      `  baseline plain INSERT of JSON:  ${n(plain.overall)} | ${n(plain.median)}`,
      `  mirror / baseline: ${(upsert.overall / plain.overall).toFixed(2)} overall, ${(upsert.median / plain.median).toFixed(2)} median page`,
      `  ${n(dbs.mirror.runs.count(ORG))} runs in the mirror`,
      '',
    ].join('\n'),
  )
  dbs.close()
  baseline.close()
  rmSync(dir, { recursive: true, force: true })
})

const options = { time: 0, iterations: ITERATIONS, warmupTime: 0, warmupIterations: 2 }

describe(`write a page of ${PAGE} new runs`, () => {
  bench(
    'mirror: RunsRepository.upsertPage',
    () => {
      const page = take(nextUpsert++)
      timed(times.upsert, () => {
        dbs.mirror.runs.upsertPage(page)
      })
    },
    options,
  )
  bench(
    'baseline: plain INSERT of the JSON, no index, no search',
    () => {
      const page = take(nextPlain++)
      timed(times.plain, () => {
        plainPage(page)
      })
    },
    options,
  )
})

describe(`write a page of ${PAGE} runs already stored (re-sync)`, () => {
  bench(
    'mirror: RunsRepository.upsertPage',
    () => {
      const page = take(nextResync++)
      timed(times.resync, () => {
        dbs.mirror.runs.upsertPage(page)
      })
    },
    {
      ...options,
      setup: () => {
        // Reopened, as a later start would meet the pages it stored.
        dbs.close()
        dbs = openDatabases(mirrorHome)
      },
    },
  )
})

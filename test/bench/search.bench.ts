import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench, describe } from 'vitest'
import type { Asset, AssetFolder, Evaluation, Model, Run, RunLog } from '../../src-shared/api'
import type { SearchQueryInput, SearchResult } from '../../src-shared/domain/search'
import {
  latestVersion,
  MIRROR_MIGRATIONS,
  openDatabases,
  type Databases,
  type SearchKind as IndexKind,
} from '../../src-main/db'
import { MirrorSearch } from '../../src-main/search'

/**
 * Offline search over a mirror of SEARCH_BENCH_ROWS searchable rows (default 1,000,000): 70%
 * runs, 10% log lines, 4% evaluations with two judges and one issue each (16%), 4% assets, in
 * 200 folders, and 8 models. Texts are drawn from 4,000 made-up words with a Zipf spread, so
 * the most common word is in most prompts and the rarest in a few hundred rows. Every row goes
 * through the real repositories' upsertPage. The mirror is built once and kept in the OS temp
 * folder for the next run, as long as its row count and schema version match.
 *
 * Measured, each with a baseline in the same run:
 * - ranked search (common, medium and rare words, two words, every kind, with filters) against
 *   ranking every match by bm25: `SearchIndex.find`, or the same statement with the filters;
 * - filtered list pages, 50 records (status + model, verdict, a date range, deep pages through
 *   the cursor) against the same page read with LIMIT/OFFSET.
 * The summary prints p50 and p95 in ms, the p95 ratio to the baseline, and whether the targets
 * (ranked p95 ≤ 20 ms, list page p95 ≤ 2 ms) are met. While developing:
 * SEARCH_BENCH_ROWS=100000 npx vitest bench --run test/bench/search.bench.ts
 */

const ROWS = Number(process.env.SEARCH_BENCH_ROWS ?? 1_000_000)
/** Bump when the generated data changes, so a kept mirror is rebuilt. */
const GENERATOR = 2
const ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb23'
const END = Date.UTC(2026, 0, 1)
const SPAN = 730 * 24 * 60 * 60 * 1000
const PAGE = 500
const LIST_LIMIT = 50
const TARGET = { ranked: 20, list: 2 }
const WARMUP = 2

// ---------------------------------------------------------------------------------------------
// Data: deterministic, so a kept mirror and a rebuilt one are the same.

let seed = 20260101
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const SYLLABLES = 'ka lo mi ren sa tu vel no dra fi gor py zen bel sho tra qui mar dil op'.split(
  ' ',
)
const VOCABULARY: string[] = []
for (let i = 0; VOCABULARY.length < 4000; i++) {
  const at = (n: number) => SYLLABLES[n % SYLLABLES.length] ?? ''
  VOCABULARY.push(at(i) + at(Math.floor(i / 20)) + (i >= 400 ? at(Math.floor(i / 400)) : ''))
}
const CUMULATIVE: number[] = []
{
  const total = VOCABULARY.reduce((sum, _, rank) => sum + 1 / (rank + 1), 0)
  let sum = 0
  for (let rank = 0; rank < VOCABULARY.length; rank++)
    CUMULATIVE.push((sum += 1 / (rank + 1) / total))
}
function word(): string {
  const x = random()
  let low = 0
  let high = CUMULATIVE.length - 1
  while (low < high) {
    const mid = (low + high) >> 1
    if ((CUMULATIVE[mid] ?? 1) < x) low = mid + 1
    else high = mid
  }
  return VOCABULARY[low] ?? ''
}
const sentence = (length: number) => Array.from({ length }, word).join(' ')

const iso = (ms: number) => new Date(ms).toISOString()
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0').slice(-width)
const uuid = (space: number, n: number) =>
  `${hex(space, 8)}-${hex(n >>> 16, 4)}-7${hex(n, 3)}-8${hex(n >>> 12, 3)}-${hex(Math.imul(n, 2654435761) >>> 0, 12)}`

const MODELS = [
  'text-to-image',
  'image-to-image',
  'upscale',
  'remove-background',
  'caption',
  'text-to-video',
  'slow-render',
  'flaky',
].map((name) => `atelier/${name}`)
const STATUSES = ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']
  .concat(['succeeded', 'succeeded', 'failed', 'canceled', 'running'])
  .map((s) => s as Run['status_code'])

const share = {
  runs: Math.round(ROWS * 0.7),
  logs: Math.round(ROWS * 0.1),
  evaluations: Math.round(ROWS * 0.04),
  assets: Math.round(ROWS * 0.04),
}
const createdOf = (n: number, of: number) => END - SPAN + Math.floor((n / of) * SPAN)

function run(n: number): Run {
  const created = createdOf(n, share.runs)
  const model = Math.floor(random() * MODELS.length)
  return {
    id: uuid(1, n),
    org_id: ORG,
    target_type_code: 'model',
    source_code: 'api',
    model_id: uuid(9, model),
    model_slug: MODELS[model] ?? '',
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: STATUSES[Math.floor(random() * STATUSES.length)] ?? 'succeeded',
    input: {
      prompt: sentence(6 + (n % 9)),
      width: 512,
      height: 512,
      seed: n,
      ...(n % 5 === 0 ? { negative_prompt: sentence(3) } : {}),
    },
    output: null,
    metadata: {},
    callback_url: null,
    idempotency_key: null,
    progress: 1,
    cost: '0.0050',
    estimated_cost: '0.0050',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    duration_ms: 1000,
    created_at: iso(created),
    queued_at: iso(created),
    started_at: iso(created),
    completed_at: iso(created + 1000),
    updated_at: iso(created + 1000),
  } as unknown as Run
}

function build(home: string): void {
  const dbs = openDatabases(home)
  const { mirror } = dbs
  const models = MODELS.map(
    (slug, i) =>
      ({
        id: uuid(9, i),
        org_id: null,
        slug,
        name: slug.split('/')[1]?.replaceAll('-', ' ') ?? slug,
        description: `A sandbox model: ${sentence(8)}`,
        category_code: 'image',
        status_code: 'active',
        created_at: iso(END - SPAN),
        updated_at: iso(END - SPAN),
        deleted_at: null,
      }) as unknown as Model,
  )
  mirror.models.upsertPage(models, { orgId: ORG })
  const folders: AssetFolder[] = Array.from({ length: 200 }, (_, i) => {
    const top = `${word()} ${word()}`
    const path = i < 20 ? `/${top}` : `/${top}/${word()} ${String(i)}`
    return {
      id: uuid(6, i),
      org_id: ORG,
      parent_id: null,
      name: path.split('/').at(-1) ?? '',
      path,
      created_at: iso(END - SPAN),
      updated_at: iso(END - SPAN),
      deleted_at: null,
    }
  })
  mirror.assetFolders.upsertPage(folders)

  for (let start = 0; start < share.runs; start += PAGE) {
    const page: Run[] = []
    for (let n = start; n < Math.min(share.runs, start + PAGE); n++) page.push(run(n))
    mirror.runs.upsertPage(page)
  }
  // Three lines each for a run out of every few, like the runs whose details were opened.
  const logged = Math.floor(share.logs / 3)
  const step = Math.max(1, Math.floor(share.runs / logged))
  for (let start = 0; start < logged; start += PAGE / 5) {
    const page: RunLog[] = []
    for (let k = start; k < Math.min(logged, start + PAGE / 5); k++) {
      const n = k * step
      const created = createdOf(n, share.runs)
      for (let line = 0; line < 3; line++) {
        page.push({
          id: uuid(2, n * 4 + line),
          run_id: uuid(1, n),
          node_run_id: null,
          level_code: 'info',
          message: `Step ${String(line)}: ${sentence(6)}`,
          data: null,
          created_at: iso(created + line),
        })
      }
    }
    mirror.runLogs.upsertPage(page)
  }
  const evaluationStep = Math.max(1, Math.floor(share.runs / share.evaluations))
  for (let start = 0; start < share.evaluations; start += PAGE) {
    const page: Evaluation[] = []
    for (let k = start; k < Math.min(share.evaluations, start + PAGE); k++) {
      const n = k * evaluationStep
      const created = iso(createdOf(n, share.runs) + 5000)
      const id = uuid(3, k)
      page.push({
        id,
        org_id: ORG,
        run_id: uuid(1, n),
        model_id: uuid(9, n % MODELS.length),
        status_code: 'completed',
        overall_passed: k % 3 !== 0,
        feedback_is_positive: k % 4 === 0 ? true : k % 4 === 1 ? false : null,
        weighted_pass_rate: 0.7,
        generation_prompt: sentence(8),
        created_at: created,
        updated_at: created,
        completed_at: created,
        cost: '0.0100',
        judges: [0, 1].map((j) => ({
          id: uuid(4, k * 2 + j),
          evaluation_id: id,
          name: j === 0 ? 'sharpness' : 'composition',
          category: 'technical',
          passed: j === 0,
          confidence: 0.8,
          weight: 1,
          reasoning: sentence(10),
          issues:
            j === 1
              ? [{ id: uuid(5, k), code: 'soft_focus', severity: 'low', description: sentence(7) }]
              : [],
        })),
      } as unknown as Evaluation)
    }
    mirror.evaluations.upsertPage(page)
  }
  for (let start = 0; start < share.assets; start += PAGE) {
    const page: Asset[] = []
    for (let k = start; k < Math.min(share.assets, start + PAGE); k++) {
      const created = iso(createdOf(k, share.assets))
      page.push({
        id: uuid(7, k),
        org_id: ORG,
        folder_id: k % 8 === 0 ? null : uuid(6, k % 200),
        name: `${word()}-${word()}-${String(k)}.${k % 10 === 0 ? 'webm' : 'png'}`,
        media_type: k % 10 === 0 ? 'video' : 'image',
        content_type: k % 10 === 0 ? 'video/webm' : 'image/png',
        size_bytes: 40_000 + k,
        sha256: hex(k, 8).repeat(8),
        width: 512,
        height: 512,
        duration_ms: null,
        url: null,
        url_expires_at: null,
        thumbnail_url: null,
        status_code: 'ready',
        metadata: {},
        created_at: created,
        updated_at: created,
        deleted_at: null,
      })
    }
    mirror.assets.upsertPage(page)
  }
  dbs.close()
}

/** The mirror kept from an earlier run when it is the same, else a new one. */
function mirrorHome(): { home: string; builtMs: number | null } {
  const home = join(tmpdir(), `atelier-search-bench-${String(ROWS)}`)
  const stamp = JSON.stringify({ rows: ROWS, schema: latestVersion(MIRROR_MIGRATIONS), GENERATOR })
  const stampFile = join(home, 'bench-stamp.json')
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    return { home, builtMs: null }
  }
  rmSync(home, { recursive: true, force: true })
  mkdirSync(home, { recursive: true })
  const started = performance.now()
  build(home)
  writeFileSync(stampFile, stamp)
  return { home, builtMs: performance.now() - started }
}

// ---------------------------------------------------------------------------------------------
// The cases.

const { home, builtMs } = mirrorHome()
const dbs: Databases = openDatabases(home)
const search = new MirrorSearch(dbs.mirror)
const find = (input: SearchQueryInput): SearchResult => search.search({ orgId: ORG }, input)
const db = dbs.mirror.db

const COMMON = VOCABULARY[0] ?? ''
const MEDIUM = VOCABULARY[99] ?? ''
const RARE = VOCABULARY[2999] ?? ''
const matches = (text: string) =>
  db.prepare('SELECT count(*) FROM runs_fts WHERE runs_fts MATCH ?').pluck().get(`"${text}"`)

const RUN_KINDS: IndexKind[] = ['run', 'run_log', 'model']
const ALL_KINDS: IndexKind[] = [
  'run',
  'run_log',
  'model',
  'evaluation',
  'evaluation_judge',
  'evaluation_issue',
  'asset',
  'asset_folder',
]
const oldFind = (text: string, kinds: IndexKind[]) =>
  dbs.mirror.search.find({ orgId: ORG, text, kinds, limit: 20 })

/** The baseline of a filtered ranked search: every match that passes the filters, by bm25. */
const everyFilteredMatch = db.prepare(
  `SELECT r.json, bm25(runs_fts, 1, 0.5) FROM runs_fts f JOIN runs r ON r.seq = f.rowid
   WHERE runs_fts MATCH ? AND r.org_id = ? AND r.status_code = ? AND r.model_slug = ?
   ORDER BY 2 LIMIT 20`,
)
const everyDatedMatch = db.prepare(
  `SELECT r.json, bm25(runs_fts, 1, 0.5) FROM runs_fts f JOIN runs r ON r.seq = f.rowid
   WHERE runs_fts MATCH ? AND r.org_id = ? AND r.created_ms >= ? AND r.created_ms < ?
   ORDER BY 2 LIMIT 20`,
)
const MONTH = { from: '2024-09-01', to: '2024-09-30' }
const monthMs = [Date.parse(MONTH.from), Date.parse(MONTH.to) + 24 * 60 * 60 * 1000] as const

/** The baseline of a list page: the same page with LIMIT/OFFSET, its records parsed. */
function offsetPage(table: string, where: string, values: unknown[], offset: number): unknown[] {
  return (
    db
      .prepare(
        `SELECT json FROM ${table} WHERE org_id = ? AND ${where}
         ORDER BY created_ms DESC, seq DESC LIMIT ? OFFSET ?`,
      )
      .pluck()
      .all(ORG, ...values, LIST_LIMIT, offset) as string[]
  ).map((json) => JSON.parse(json) as unknown)
}

/** The cursor of page `pages + 1` of a list, walked to once. */
function cursorAfter(input: SearchQueryInput, pages: number): string | null {
  let cursor: string | null = null
  for (let i = 0; i < pages; i++) {
    cursor = find({ ...input, limit: LIST_LIMIT, cursor }).next
    if (cursor === null) break
  }
  return cursor
}
const DEEP = Math.min(1000, Math.floor((share.runs * 0.7) / LIST_LIMIT) - 1)
const deepSucceeded = cursorAfter({ kind: 'runs', status: 'succeeded' }, DEEP)
const DEEP_FILTERED = Math.min(200, Math.floor(share.runs / 100 / LIST_LIMIT) - 1)
const deepFailedUpscale = cursorAfter(
  { kind: 'runs', status: 'failed', model: 'atelier/upscale' },
  DEEP_FILTERED,
)

interface Case {
  group: 'ranked' | 'list'
  name: string
  ours: () => unknown
  baseline: () => unknown
  /** The baseline can take seconds on a large mirror: fewer rounds of it. */
  baselineIterations?: number
}

const CASES: Case[] = [
  {
    group: 'ranked',
    name: `runs, common word (${String(matches(COMMON))} runs)`,
    ours: () => find({ text: COMMON, kind: 'runs' }),
    baseline: () => oldFind(COMMON, RUN_KINDS),
    baselineIterations: 5,
  },
  {
    group: 'ranked',
    name: `runs, medium word (${String(matches(MEDIUM))} runs)`,
    ours: () => find({ text: MEDIUM, kind: 'runs' }),
    baseline: () => oldFind(MEDIUM, RUN_KINDS),
  },
  {
    group: 'ranked',
    name: `runs, rare word (${String(matches(RARE))} runs)`,
    ours: () => find({ text: RARE, kind: 'runs' }),
    baseline: () => oldFind(RARE, RUN_KINDS),
  },
  {
    group: 'ranked',
    name: 'runs, two words: common + medium',
    ours: () => find({ text: `${COMMON} ${MEDIUM}`, kind: 'runs' }),
    baseline: () => oldFind(`${COMMON} ${MEDIUM}`, RUN_KINDS),
  },
  {
    group: 'ranked',
    name: 'runs, two words: medium + rare',
    ours: () => find({ text: `${MEDIUM} ${RARE}`, kind: 'runs' }),
    baseline: () => oldFind(`${MEDIUM} ${RARE}`, RUN_KINDS),
  },
  {
    group: 'ranked',
    name: 'every kind, common word',
    ours: () => find({ text: COMMON }),
    baseline: () => oldFind(COMMON, ALL_KINDS),
    baselineIterations: 5,
  },
  {
    group: 'ranked',
    name: 'every kind, medium word',
    ours: () => find({ text: MEDIUM }),
    baseline: () => oldFind(MEDIUM, ALL_KINDS),
  },
  {
    group: 'ranked',
    name: 'runs, common word + status + model',
    ours: () => find({ text: COMMON, kind: 'runs', status: 'failed', model: 'atelier/upscale' }),
    baseline: () => everyFilteredMatch.all(`"${COMMON}"*`, ORG, 'failed', 'atelier/upscale'),
    baselineIterations: 5,
  },
  {
    group: 'ranked',
    name: 'runs, medium word + one month',
    ours: () => find({ text: MEDIUM, kind: 'runs', ...MONTH }),
    baseline: () => everyDatedMatch.all(`"${MEDIUM}"*`, ORG, ...monthMs),
  },
  {
    group: 'list',
    name: 'runs, status + model, first page',
    ours: () => find({ kind: 'runs', status: 'failed', model: 'atelier/upscale', limit: 50 }),
    baseline: () =>
      offsetPage('runs', 'status_code = ? AND model_slug = ?', ['failed', 'atelier/upscale'], 0),
  },
  {
    group: 'list',
    name: 'evaluations, verdict failed, first page',
    ours: () => find({ kind: 'evaluations', verdict: 'failed', limit: 50 }),
    baseline: () => offsetPage('evaluations', 'overall_passed = 0', [], 0),
  },
  {
    group: 'list',
    name: 'runs, one month, first page',
    ours: () => find({ kind: 'runs', ...MONTH, limit: 50 }),
    baseline: () => offsetPage('runs', 'created_ms >= ? AND created_ms < ?', [...monthMs], 0),
  },
  {
    group: 'list',
    name: `runs, succeeded, page ${String(DEEP + 1)} (cursor)`,
    ours: () => find({ kind: 'runs', status: 'succeeded', limit: 50, cursor: deepSucceeded }),
    baseline: () => offsetPage('runs', 'status_code = ?', ['succeeded'], DEEP * LIST_LIMIT),
  },
  {
    group: 'list',
    name: `runs, status + model, page ${String(DEEP_FILTERED + 1)} (cursor)`,
    ours: () =>
      find({
        kind: 'runs',
        status: 'failed',
        model: 'atelier/upscale',
        limit: 50,
        cursor: deepFailedUpscale,
      }),
    baseline: () =>
      offsetPage(
        'runs',
        'status_code = ? AND model_slug = ?',
        ['failed', 'atelier/upscale'],
        DEEP_FILTERED * LIST_LIMIT,
      ),
  },
]

const times = new Map<Case, { ours: number[]; baseline: number[] }>()

function timed(into: number[], work: () => unknown): void {
  const start = performance.now()
  work()
  into.push(performance.now() - start)
}

/** The warm-up rounds come first; they are left out. */
function percentile(values: number[], p: number): number {
  const sorted = values.slice(WARMUP).sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(sorted.length * p) - 1)] ?? Number.NaN
}

afterAll(() => {
  const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1).padStart(7)
  const rows = CASES.map((c) => {
    const t = times.get(c) ?? { ours: [], baseline: [] }
    const ours95 = percentile(t.ours, 0.95)
    const base95 = percentile(t.baseline, 0.95)
    const target = TARGET[c.group]
    return `  ${c.name.padEnd(44)} ${ms(percentile(t.ours, 0.5))} ${ms(ours95)}   ${ms(percentile(t.baseline, 0.5))} ${ms(base95)}   ${(base95 / ours95).toFixed(1).padStart(7)}×   ${ours95 <= target ? 'met   ' : 'MISSED'} (≤ ${String(target)} ms)`
  })
  const counts = [
    'runs',
    'run_logs',
    'evaluations',
    'evaluation_judges',
    'evaluation_issues',
    'assets',
  ].map((table) => {
    const n = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number
    return { table, n }
  })
  const total = counts.reduce((sum, c) => sum + c.n, 0)
  console.log(
    [
      '',
      `Offline search over ${total.toLocaleString('en')} searchable rows (${counts.map((c) => `${c.table} ${c.n.toLocaleString('en')}`).join(', ')})`,
      builtMs === null
        ? `  mirror kept from an earlier run: ${home}`
        : `  mirror built in ${(builtMs / 1000).toFixed(1)} s: ${home}`,
      `  ${'case'.padEnd(44)} ${'ours p50'.padStart(7)} ${'p95'.padStart(7)}   ${'base p50'.padStart(7)} ${'p95'.padStart(7)}   p95 base/ours  target`,
      ...rows,
      '  ranked baseline: every match ranked by bm25 (SearchIndex.find, or the same statement with the filters);',
      `  list baseline: the same ${String(LIST_LIMIT)}-record page read with LIMIT/OFFSET. Times in ms.`,
      '',
    ].join('\n'),
  )
  dbs.close()
})

const OPTIONS = { time: 0, warmupTime: 0, warmupIterations: WARMUP }

for (const c of CASES) {
  const t = { ours: [] as number[], baseline: [] as number[] }
  times.set(c, t)
  describe(`${c.group}: ${c.name}`, () => {
    bench(
      'atelier search',
      () => {
        timed(t.ours, c.ours)
      },
      { ...OPTIONS, iterations: 60 },
    )
    bench(
      'baseline',
      () => {
        timed(t.baseline, c.baseline)
      },
      { ...OPTIONS, iterations: c.baselineIterations ?? 30 },
    )
  })
}

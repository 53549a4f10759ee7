import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  Asset,
  AssetFolder,
  Evaluation,
  EvaluationJudge,
  Flow,
  Model,
  NodeRun,
  ReferenceRecord,
  Run,
  RunCallbackDelivery,
  RunLog,
  Tombstone,
} from '../../src-shared/api'
import {
  openDatabases,
  SEARCH_KINDS,
  SNIPPET_CLOSE,
  SNIPPET_OPEN,
  type Databases,
  type Ledger,
  type Mirror,
  type SearchKind,
  withoutFlush,
} from '../../src-main/db'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const root = mkdtempSync(join(tmpdir(), 'atelier-db-repositories-'))
let homes = 0
const freshHome = () => {
  const dir = join(root, String(++homes))
  mkdirSync(dir)
  return dir
}
const open: Databases[] = []
/** Databases in a fresh home, closed in afterAll. */
function databases(clock?: () => number): Databases {
  const dbs = openDatabases(freshHome(), clock ? { clock } : {})
  open.push(dbs)
  return dbs
}

afterAll(() => {
  for (const dbs of open) dbs.close()
  rmSync(root, { recursive: true, force: true })
})

const FTS_TABLES = [
  'runs',
  'run_logs',
  'evaluations',
  'evaluation_judges',
  'evaluation_issues',
  'assets',
  'asset_folders',
  'models',
  'model_inputs',
  'flows',
]

/**
 * FTS5's own check that each index holds exactly what its table holds (rank 1 also compares
 * an external-content index with its content): no entry missing, none left behind.
 */
function expectSearchInStep(mirror: Mirror): void {
  for (const table of FTS_TABLES) {
    expect(() =>
      mirror.db
        .prepare(`INSERT INTO ${table}_fts (${table}_fts, rank) VALUES ('integrity-check', 1)`)
        .run(),
    ).not.toThrow()
  }
}

const found = (mirror: Mirror, orgId: string, text: string, kind: SearchKind) =>
  mirror.search.find({ orgId, text, kinds: [kind] }).map((hit) => hit.id)

// ---------------------------------------------------------------------------------------------
// Records built by hand, shaped exactly like the contract, for the cases a sandbox cannot stage.

const ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb23'
const OTHER_ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb99'
const BASE = Date.UTC(2026, 0, 1)
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')
const uuid = (prefix: string, n: number) =>
  `${prefix.padEnd(8, '0')}-0000-7000-8000-${String(n).padStart(12, '0')}`

function makeRun(n: number, fields: Partial<Run> = {}): Run {
  const at = iso(BASE + n * 60_000)
  return {
    id: uuid('aaaa', n),
    org_id: ORG,
    target_type_code: 'model',
    source_code: 'api',
    model_id: null,
    model_slug: 'atelier/text-to-image',
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: 'succeeded',
    input: { prompt: `study number ${n}`, width: 64, height: 64 },
    output: null,
    metadata: null,
    callback_url: null,
    idempotency_key: null,
    progress: 1,
    cost: '0.0050',
    estimated_cost: '0.0050',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    duration_ms: 900,
    created_at: at,
    queued_at: at,
    started_at: at,
    completed_at: at,
    updated_at: at,
    ...fields,
  }
}

function makeLog(run: Run, n: number, message: string): RunLog {
  return {
    id: uuid('bbbb', n),
    run_id: run.id,
    node_run_id: null,
    level_code: 'info',
    message,
    data: null,
    created_at: iso(BASE + n * 1_000),
  }
}

function makeJudge(evaluationId: string, n: number, reasoning: string): EvaluationJudge {
  const judgeId = uuid('dddd', n)
  return {
    id: judgeId,
    evaluation_id: evaluationId,
    name: `judge-${n}`,
    description: null,
    category: 'technical',
    passed: n % 2 === 0,
    confidence: 0.8,
    weight: 1,
    reasoning,
    evidence: [],
    sub_point_results: null,
    sub_points_evaluated: 1,
    created_at: iso(BASE),
    issues: [
      {
        id: uuid('eeee', n),
        judge_id: judgeId,
        evaluation_id: evaluationId,
        code: `issue_${n}`,
        severity: 'high',
        description: `issue found by judge ${n}: ${reasoning}`,
        region: null,
        created_at: iso(BASE),
      },
    ],
  }
}

function makeEvaluation(n: number, judges: EvaluationJudge[], updatedMs: number): Evaluation {
  const id = uuid('cccc', n)
  return {
    id,
    org_id: ORG,
    run_id: null,
    model_id: null,
    flow_id: null,
    wfengine_workflow_id: null,
    parent_evaluation_id: null,
    target_type_code: 'model',
    task_type: 'text_to_image',
    task_description: null,
    generation_prompt: `evaluated prompt ${n}`,
    generated_image_url: null,
    evaluation_instructions: null,
    override_reason: null,
    primary_action_code: null,
    feedback_reason: null,
    client_ref: null,
    callback_url: null,
    status_code: 'completed',
    source_code: 'api',
    failure_code: null,
    job_class_code: 'standard',
    input_attributes: null,
    check_summary: null,
    links: null,
    reference_images: null,
    overall_passed: true,
    feedback_is_positive: null,
    weighted_pass_rate: 0.9,
    top_issues: [],
    top_strengths: [],
    analysis_modules_executed: judges.length,
    attempt_number: 1,
    eval_duration_ms: 100,
    superseded_at: null,
    created_at: iso(BASE + n * 60_000),
    updated_at: iso(updatedMs),
    submitted_at: iso(BASE),
    completed_at: iso(BASE),
    cost: '0.0100',
    judges: judges.map((j) => ({
      ...j,
      evaluation_id: id,
      issues: j.issues?.map((i) => ({ ...i, evaluation_id: id })) ?? null,
    })),
    gate_failures: [],
    action: null,
  }
}

function makeFolder(n: number, path: string, parentId: string | null): AssetFolder {
  return {
    id: uuid('ffff', n),
    org_id: ORG,
    parent_id: parentId,
    name: path.split('/').at(-1) ?? path,
    path,
    created_at: iso(BASE),
    updated_at: iso(BASE),
    deleted_at: null,
  }
}

function makeAsset(
  n: number,
  name: string,
  folderId: string | null,
  fields: Partial<Asset> = {},
): Asset {
  const at = iso(BASE + n * 60_000)
  return {
    id: uuid('1111', n),
    org_id: ORG,
    folder_id: folderId,
    name,
    media_type: 'image',
    content_type: 'image/png',
    size_bytes: 1000 + n,
    sha256: String(n % 10).repeat(64),
    width: 64,
    height: 64,
    duration_ms: null,
    url: null,
    url_expires_at: null,
    thumbnail_url: null,
    status_code: 'ready',
    metadata: {},
    created_at: at,
    updated_at: at,
    deleted_at: null,
    ...fields,
  }
}

function makeFlow(n: number, orgId: string | null, name: string): Flow {
  return {
    id: uuid('2222', n),
    slug: `flow-${n}`,
    name,
    description: 'a flow for tests',
    cover_url: null,
    org_id: orgId,
    flow_type_code: null,
    category_code: null,
    visibility_code: 'private',
    source_visibility_code: null,
    status_code: 'active',
    version: 1,
    current_version_id: null,
    estimated_cost: null,
    context_variables: {},
    run_count: 0,
    avg_duration: null,
    cost_per_run: null,
    featured_at: null,
    created_by: null,
    created_at: iso(BASE),
    updated_at: iso(BASE + n * 1_000),
  }
}

// ---------------------------------------------------------------------------------------------
// Real records from a real sandbox over HTTP.

describe('real records from the sandbox', () => {
  let sandbox: TestSandbox
  let client: ServiceClient
  let callbacks: Server
  let runs: Run[]
  let dispatched: Run
  let logs: RunLog[]
  let nodeRuns: NodeRun[]
  let deliveries: RunCallbackDelivery[]
  let evaluations: Evaluation[]
  let assets: Asset[]
  let folders: AssetFolder[]
  let model: Model
  let variableTypes: ReferenceRecord[]
  let mirror: Mirror

  async function all<T>(
    path: '/v1/runs' | '/v1/evaluations' | '/v1/assets' | '/v1/asset-folders',
  ): Promise<T[]> {
    const items: T[] = []
    for await (const item of client.list(path, { params: { query: { limit: 500 } } })) {
      items.push(item as T)
    }
    return items
  }

  beforeAll(async () => {
    callbacks = createServer((request, response) => {
      request.resume()
      request.on('end', () => response.end('ok'))
    })
    await new Promise<void>((resolve) => callbacks.listen(0, '127.0.0.1', resolve))
    const { port } = callbacks.address() as AddressInfo

    sandbox = await startTestSandbox({ latencyMs: 5 })
    client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
    await seedHistory(sandbox.services, sandbox.orgId, 120)

    const started = await client.post('/v1/models/{provider}/{model}/runs', {
      params: { path: { provider: 'atelier', model: 'text-to-image' } },
      body: {
        input: { prompt: 'a lighthouse on a basalt cliff', width: 64, height: 64 },
        callback_url: `http://127.0.0.1:${port}/callback`,
      },
    })
    for (let i = 0; i < 200; i++) {
      deliveries = await client.get('/v1/runs/{run_id}/callback', {
        params: { path: { run_id: started.id } },
      })
      if (deliveries.some((d) => d.attempts.length > 0)) break
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    dispatched = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: started.id } } })
    logs = (
      await client.get('/v1/runs/{run_id}/logs', { params: { path: { run_id: started.id } } })
    ).items
    nodeRuns = (
      await client.get('/v1/runs/{run_id}/node-runs', { params: { path: { run_id: started.id } } })
    ).items

    runs = await all<Run>('/v1/runs')
    evaluations = await all<Evaluation>('/v1/evaluations')
    assets = await all<Asset>('/v1/assets')
    folders = await all<AssetFolder>('/v1/asset-folders')
    const models = await client.get('/v1/models', { params: { query: { limit: 50 } } })
    const listed = models.items.find((m) => m.slug === 'atelier/text-to-image')
    if (!listed) throw new Error('the sandbox has no atelier/text-to-image')
    model = await client.get('/v1/models/{model_id}', { params: { path: { model_id: listed.id } } })
    variableTypes = (await client.get('/v1/catalogs/variable-types')).items

    mirror = databases().mirror
  }, 120_000)

  afterAll(async () => {
    await sandbox.close()
    await new Promise((resolve) => callbacks.close(resolve))
  })

  it('fetched what the tests need', () => {
    expect(runs.length).toBeGreaterThanOrEqual(121)
    expect(evaluations.length).toBeGreaterThan(10)
    expect(assets.length).toBeGreaterThan(5)
    expect(folders.length).toBeGreaterThan(1)
    expect(logs.length).toBeGreaterThan(1)
    expect(nodeRuns.length).toBeGreaterThan(0)
    expect(deliveries[0]?.attempts.length).toBeGreaterThan(0)
    expect(model.inputs?.length).toBeGreaterThan(0)
    expect(dispatched.status_code).toBe('succeeded')
  })

  it('upserts pages of runs idempotently and gives each record back whole', () => {
    const pages = [runs.slice(0, 100), runs.slice(100)]
    expect(pages.map((page) => mirror.runs.upsertPage(page))).toEqual(pages.map((p) => p.length))
    expect(mirror.runs.count(sandbox.orgId)).toBe(runs.length)
    // The same pages again: same rows, nothing duplicated.
    for (const page of pages) mirror.runs.upsertPage(page)
    expect(mirror.runs.count(sandbox.orgId)).toBe(runs.length)
    for (const run of runs.slice(0, 20)) expect(mirror.runs.get(run.id)).toEqual(run)
    expect(mirror.runs.getMany([runs[0]?.id ?? '', 'missing'])).toEqual([runs[0]])
    expect(found(mirror, sandbox.orgId, 'basalt lighthouse', 'run')).toEqual([dispatched.id])
  })

  it('keeps node runs, logs and callback deliveries of a run, and finds a log line', () => {
    expect(mirror.nodeRuns.upsertPage(nodeRuns)).toBe(nodeRuns.length)
    expect(mirror.runLogs.upsertPage(logs)).toBe(logs.length)
    expect(mirror.runLogs.upsertPage(logs)).toBe(0)
    expect(mirror.callbackDeliveries.upsertPage(deliveries)).toBe(deliveries.length)
    expect(mirror.nodeRuns.listForRun(dispatched.id)).toEqual(nodeRuns)
    expect(mirror.runLogs.listForRun({ runId: dispatched.id, limit: 500 }).items).toEqual(logs)
    expect(mirror.callbackDeliveries.listForRun(dispatched.id)).toEqual(deliveries)
    const attempts = mirror.db
      .prepare('SELECT count(*) FROM delivery_attempts WHERE delivery_id = ?')
      .pluck()
      .get(deliveries[0]?.id)
    expect(attempts).toBe(deliveries[0]?.attempts.length)

    const line = logs.find((l) => l.message.includes('picked up'))
    expect(line).toBeDefined()
    const hits = mirror.search.find({
      orgId: sandbox.orgId,
      text: 'worker picked',
      kinds: ['run_log'],
    })
    expect(hits).toEqual([
      expect.objectContaining({ kind: 'run_log', id: line?.id, ownerId: dispatched.id }),
    ])
    expect(hits[0]?.snippet).toContain(`${SNIPPET_OPEN}picked${SNIPPET_CLOSE}`)
  })

  it('refuses children of a run it does not hold, rather than storing them without an organization', () => {
    const orphan = { ...logs[0], id: uuid('9999', 1), run_id: uuid('9999', 2) } as RunLog
    expect(() => mirror.runLogs.upsertPage([orphan])).toThrow(/not in the mirror; write the run/)
  })

  it('upserts real evaluations with their judges and issues, and finds a judge by its reasoning', () => {
    expect(mirror.evaluations.upsertPage(evaluations)).toBe(evaluations.length)
    expect(mirror.evaluations.upsertPage(evaluations)).toBe(evaluations.length)
    expect(mirror.evaluations.count(sandbox.orgId)).toBe(evaluations.length)
    const judged = evaluations.find((e) => (e.judges?.length ?? 0) > 2)
    if (!judged?.id) throw new Error('no evaluation with judges')
    expect(mirror.evaluations.get(judged.id)).toEqual(judged)
    const judgeRows = mirror.db
      .prepare('SELECT count(*) FROM evaluation_judges WHERE evaluation_id = ?')
      .pluck()
      .get(judged.id)
    expect(judgeRows).toBe(judged.judges?.length)

    // Two longer words of one real judge's reasoning.
    const wordsOf = (text: string | null) => (text ?? '').match(/\p{L}{6,}/gu)?.slice(0, 2) ?? []
    const judge = evaluations
      .flatMap((e) => e.judges ?? [])
      .find((j) => wordsOf(j.reasoning).length === 2)
    const words = wordsOf(judge?.reasoning ?? null)
    expect(words).toHaveLength(2)
    const hits = mirror.search.find({
      orgId: sandbox.orgId,
      text: words.join(' '),
      kinds: ['evaluation_judge'],
      limit: 500,
    })
    expect(hits.map((h) => h.id)).toContain(judge?.id)

    const failed = mirror.evaluations.list({ orgId: sandbox.orgId, passed: false, limit: 500 })
    expect(failed.items.map((e) => e.id).sort()).toEqual(
      evaluations
        .filter((e) => e.overall_passed === false)
        .map((e) => e.id)
        .sort(),
    )
  })

  it('upserts real assets and folders, lists a folder, and finds names and paths', () => {
    expect(mirror.assetFolders.upsertPage(folders)).toBe(folders.length)
    expect(mirror.assets.upsertPage(assets)).toBe(assets.length)
    const asset = assets[0]
    if (!asset) throw new Error('no asset')
    expect(mirror.assets.get(asset.id)).toEqual(asset)
    const inFolder = mirror.assets.list({
      orgId: sandbox.orgId,
      folderId: asset.folder_id,
      limit: 500,
    })
    expect(inFolder.items.map((a) => a.id).sort()).toEqual(
      assets
        .filter((a) => a.folder_id === asset.folder_id)
        .map((a) => a.id)
        .sort(),
    )
    expect(mirror.assets.withSha256(sandbox.orgId, asset.sha256).map((a) => a.id)).toContain(
      asset.id,
    )

    const word = asset.name.split(/[^\p{L}]+/u).find((w) => w.length > 3) ?? ''
    expect(found(mirror, sandbox.orgId, word, 'asset')).toContain(asset.id)
    const folder = folders.find((f) => f.parent_id !== null) ?? folders[0]
    if (!folder) throw new Error('no folder')
    expect(mirror.assetFolders.atPath(sandbox.orgId, folder.path)).toEqual(folder)
    const segment = folder.path.split('/').at(-1) ?? ''
    expect(found(mirror, sandbox.orgId, segment, 'asset_folder')).toContain(folder.id)
  })

  it('keeps a model with its inputs, outputs and pricing, and the catalogs', () => {
    const scope = { orgId: sandbox.orgId }
    expect(mirror.models.upsertPage([model], scope)).toBe(1)
    expect(mirror.models.inputs(scope, model.id)).toEqual(model.inputs)
    expect(mirror.models.outputs(scope, model.id)).toEqual(model.outputs)
    expect(mirror.models.pricing(scope, model.id)).toEqual(model.pricing)
    const { inputs: _i, outputs: _o, pricing: _p, ...bare } = model
    expect(mirror.models.get(scope, model.id)).toEqual(bare)
    expect(mirror.models.withSlug(scope, 'atelier/text-to-image')?.id).toBe(model.id)
    // A list item leaves the embedded lists out, and so leaves their rows alone.
    mirror.models.upsertPage([bare], scope)
    expect(mirror.models.inputs(scope, model.id)).toHaveLength(model.inputs?.length ?? -1)
    expect(found(mirror, sandbox.orgId, 'negative', 'model_input')).toEqual([
      model.inputs?.find((i) => i.name === 'negative_prompt')?.id,
    ])
    expect(found(mirror, sandbox.orgId, model.name, 'model')).toEqual([model.id])

    expect(mirror.catalogs.replace(scope, 'variable-types', variableTypes)).toBe(
      variableTypes.length,
    )
    expect(mirror.catalogs.list(scope, 'variable-types')).toEqual(variableTypes)
    mirror.catalogs.replace(scope, 'variable-types', variableTypes.slice(1))
    expect(mirror.catalogs.get(scope, 'variable-types', variableTypes[0]?.code ?? '')).toBeNull()
  })

  it('applies the tombstones the service reports after a real deletion', async () => {
    const asset = assets.at(-1)
    if (!asset) throw new Error('no asset')
    const word = asset.name.split(/[^\p{L}]+/u).find((w) => w.length > 3) ?? ''
    expect(found(mirror, sandbox.orgId, word, 'asset')).toContain(asset.id)
    await client.delete('/v1/assets/{asset_id}', { params: { path: { asset_id: asset.id } } })
    const tombstones = await client.get('/v1/tombstones', {
      params: { query: { q: 'collection=assets', sort_by: 'deleted_at:asc', limit: 500 } },
    })
    expect(tombstones.items.map((t) => t.record_id)).toContain(asset.id)
    expect(mirror.applyTombstonePage(tombstones.items)).toBe(1)
    expect(mirror.assets.get(asset.id)).toBeNull()
    expect(found(mirror, sandbox.orgId, word, 'asset')).not.toContain(asset.id)
    // Tombstones are re-read at the boundary of every sync: applying them again is harmless.
    expect(mirror.applyTombstonePage(tombstones.items)).toBe(0)
  })

  it('leaves every search index exactly in step with its table', () => {
    expectSearchInStep(mirror)
  })
})

// ---------------------------------------------------------------------------------------------

describe('runs', () => {
  it('page through a list with keysets, newest first, across ties, with every filter', () => {
    const { mirror } = databases()
    // Pairs share created_at, so the tie-breaker matters.
    const all = Array.from({ length: 23 }, (_, n) =>
      makeRun(n, {
        created_at: iso(BASE + Math.floor(n / 2) * 60_000),
        status_code: n % 3 === 0 ? 'failed' : 'succeeded',
        model_slug: n % 2 === 0 ? 'atelier/text-to-image' : 'atelier/upscale',
      }),
    )
    mirror.runs.upsertPage(all)
    const walk = (query: Omit<Parameters<Mirror['runs']['list']>[0], 'after'>) => {
      const seen: Run[] = []
      let after: string | null = null
      for (let pages = 0; pages < 50; pages++) {
        const page = mirror.runs.list({ ...query, after })
        seen.push(...page.items)
        if (page.next === null) return seen
        after = page.next
      }
      throw new Error('the list does not end')
    }
    const newest = [...all].sort(
      (a, b) =>
        Date.parse(b.created_at) - Date.parse(a.created_at) || all.indexOf(b) - all.indexOf(a),
    )
    expect(walk({ orgId: ORG, limit: 4 }).map((r) => r.id)).toEqual(newest.map((r) => r.id))
    expect(walk({ orgId: ORG, limit: 4, status: 'failed' }).map((r) => r.id)).toEqual(
      newest.filter((r) => r.status_code === 'failed').map((r) => r.id),
    )
    expect(walk({ orgId: ORG, limit: 3, model: 'atelier/upscale' }).map((r) => r.id)).toEqual(
      newest.filter((r) => r.model_slug === 'atelier/upscale').map((r) => r.id),
    )
    const from = iso(BASE + 3 * 60_000)
    const to = new Date(BASE + 7 * 60_000).toISOString()
    expect(walk({ orgId: ORG, limit: 2, from, to }).map((r) => r.id)).toEqual(
      newest
        .filter(
          (r) =>
            Date.parse(r.created_at) >= Date.parse(from) &&
            Date.parse(r.created_at) < Date.parse(to),
        )
        .map((r) => r.id),
    )
    expect(mirror.runs.list({ orgId: OTHER_ORG }).items).toEqual([])
    expect(() => mirror.runs.list({ orgId: ORG, after: 'not-a-cursor' })).toThrow(/not a cursor/)
  })

  it('never lets an older copy replace a newer one, and keeps search on the newer text', () => {
    const { mirror } = databases()
    const first = makeRun(1, { input: { prompt: 'a copper kettle' } })
    const newer = makeRun(1, {
      input: { prompt: 'a silver teapot', negative_prompt: 'blurry' },
      status_code: 'failed',
      updated_at: iso(BASE + 3_600_000),
    })
    mirror.runs.upsertPage([first])
    expect(found(mirror, ORG, 'kettle', 'run')).toEqual([first.id])
    expect(mirror.runs.upsertPage([newer])).toBe(1)
    expect(found(mirror, ORG, 'kettle', 'run')).toEqual([])
    expect(found(mirror, ORG, 'teapot', 'run')).toEqual([first.id])
    expect(found(mirror, ORG, 'blurry', 'run')).toEqual([first.id])
    // The list page read before the update arrives late: it changes nothing.
    expect(mirror.runs.upsertPage([first])).toBe(0)
    expect(mirror.runs.get(first.id)).toEqual(newer)
    expect(found(mirror, ORG, 'teapot', 'run')).toEqual([first.id])
    expectSearchInStep(mirror)
  })

  it('tombstones delete runs with their logs, and search stops finding them', () => {
    const { mirror } = databases()
    const kept = makeRun(1, { input: { prompt: 'an orchard in spring' } })
    const gone = makeRun(2, { input: { prompt: 'a harbour at dusk' } })
    mirror.runs.upsertPage([kept, gone])
    mirror.runLogs.upsertPage([makeLog(gone, 1, 'Rendering the harbour tile 3 of 4')])
    mirror.nodeRuns.upsertPage([
      {
        id: uuid('7777', 1),
        run_id: gone.id,
        flow_node_id: null,
        wfengine_node_id: null,
        status_code: 'succeeded',
        input: null,
        output: null,
        cost: null,
        failure_code: null,
        failure_stage: null,
        failure_message: null,
        started_at: null,
        completed_at: null,
        created_at: gone.created_at,
        updated_at: gone.updated_at,
      },
    ])
    expect(found(mirror, ORG, 'harbour', 'run')).toEqual([gone.id])
    expect(found(mirror, ORG, 'tile', 'run_log')).toHaveLength(1)

    const tombstones: Tombstone[] = [
      { id: uuid('8888', 1), collection: 'runs', record_id: gone.id, deleted_at: iso(BASE) },
      {
        id: uuid('8888', 2),
        collection: 'webhooks',
        record_id: uuid('8888', 3),
        deleted_at: iso(BASE),
      },
      {
        id: uuid('8888', 4),
        collection: 'runs',
        record_id: uuid('8888', 5),
        deleted_at: iso(BASE),
      },
    ]
    expect(mirror.applyTombstonePage(tombstones)).toBe(1)
    expect(mirror.runs.get(gone.id)).toBeNull()
    expect(mirror.runs.get(kept.id)).toEqual(kept)
    expect(mirror.nodeRuns.listForRun(gone.id)).toEqual([])
    expect(mirror.runLogs.listForRun({ runId: gone.id }).items).toEqual([])
    expect(found(mirror, ORG, 'harbour', 'run')).toEqual([])
    expect(found(mirror, ORG, 'tile', 'run_log')).toEqual([])
    expect(found(mirror, ORG, 'orchard', 'run')).toEqual([kept.id])
    expect(mirror.applyTombstones('runs', [gone.id])).toBe(0)
    expectSearchInStep(mirror)
  })

  it('pages through logs oldest first', () => {
    const { mirror } = databases()
    const run = makeRun(1)
    mirror.runs.upsertPage([run])
    const lines = Array.from({ length: 7 }, (_, n) => makeLog(run, n, `line ${n}`))
    mirror.runLogs.upsertPage([...lines].reverse())
    const first = mirror.runLogs.listForRun({ runId: run.id, limit: 4 })
    const second = mirror.runLogs.listForRun({ runId: run.id, limit: 4, after: first.next })
    expect([...first.items, ...second.items]).toEqual(lines)
    expect(second.next).toBeNull()
  })
})

describe('evaluations', () => {
  it('replace their judges and issues on upsert, in the table and in search', () => {
    const { mirror } = databases()
    const v1 = makeEvaluation(
      1,
      [makeJudge('', 1, 'the horizon is tilted'), makeJudge('', 2, 'colours are oversaturated')],
      BASE,
    )
    mirror.evaluations.upsertPage([v1])
    const rows = (id: string) =>
      mirror.db
        .prepare(
          `SELECT (SELECT count(*) FROM evaluation_judges WHERE evaluation_id = ?) AS judges,
                  (SELECT count(*) FROM evaluation_issues WHERE evaluation_id = ?) AS issues`,
        )
        .get(id, id)
    expect(rows(v1.id ?? '')).toEqual({ judges: 2, issues: 2 })
    expect(found(mirror, ORG, 'oversaturated', 'evaluation_judge')).toEqual([uuid('dddd', 2)])
    expect(found(mirror, ORG, 'issue_2', 'evaluation_issue')).toEqual([uuid('eeee', 2)])

    const v2 = makeEvaluation(1, [makeJudge('', 3, 'the subject is out of focus')], BASE + 60_000)
    expect(mirror.evaluations.upsertPage([v2])).toBe(1)
    expect(rows(v1.id ?? '')).toEqual({ judges: 1, issues: 1 })
    expect(mirror.evaluations.get(v1.id ?? '')).toEqual(v2)
    expect(found(mirror, ORG, 'oversaturated', 'evaluation_judge')).toEqual([])
    expect(found(mirror, ORG, 'tilted', 'evaluation_issue')).toEqual([])
    expect(found(mirror, ORG, 'focus', 'evaluation_judge')).toEqual([uuid('dddd', 3)])
    const hit = mirror.search.find({ orgId: ORG, text: 'focus', kinds: ['evaluation_issue'] })[0]
    expect(hit).toMatchObject({ kind: 'evaluation_issue', ownerId: v1.id })

    // An older copy changes nothing, judges included.
    expect(mirror.evaluations.upsertPage([v1])).toBe(0)
    expect(rows(v1.id ?? '')).toEqual({ judges: 1, issues: 1 })

    // A tombstone takes judges and issues with it, out of search too.
    expect(mirror.applyTombstones('evaluations', [v1.id ?? ''])).toBe(1)
    expect(rows(v1.id ?? '')).toEqual({ judges: 0, issues: 0 })
    expect(found(mirror, ORG, 'focus', 'evaluation_judge')).toEqual([])
    expectSearchInStep(mirror)
  })

  it('take the organization synced when theirs is null, and skip records without an id', () => {
    const { mirror } = databases()
    const anonymous = { ...makeEvaluation(2, [], BASE), org_id: null }
    const idless = { ...makeEvaluation(3, [], BASE), id: null }
    expect(() => mirror.evaluations.upsertPage([anonymous])).toThrow(/no org_id/)
    expect(mirror.evaluations.upsertPage([anonymous, idless], { orgId: OTHER_ORG })).toBe(1)
    expect(mirror.evaluations.count(OTHER_ORG)).toBe(1)
    expect(mirror.evaluations.list({ orgId: OTHER_ORG }).items).toEqual([anonymous])
  })
})

describe('assets and folders', () => {
  it('list a folder, keep our thumbnail across syncs, and drop what comes back deleted', () => {
    const { mirror } = databases()
    const top = makeFolder(1, '/Clients', null)
    const sub = makeFolder(2, '/Clients/Lumen', top.id)
    mirror.assetFolders.upsertPage([sub, top])
    expect(mirror.assetFolders.list({ orgId: ORG }).items).toEqual([top, sub])
    expect(mirror.assetFolders.list({ orgId: ORG, parentId: null }).items).toEqual([top])
    expect(mirror.assetFolders.list({ orgId: ORG, parentId: top.id }).items).toEqual([sub])
    const onePage = mirror.assetFolders.list({ orgId: ORG, limit: 1 })
    expect(mirror.assetFolders.list({ orgId: ORG, limit: 1, after: onePage.next }).items).toEqual([
      sub,
    ])

    const assets = [
      makeAsset(1, 'lumen-hero.png', sub.id),
      makeAsset(2, 'lumen-detail.png', sub.id),
      makeAsset(3, 'root-note.png', null),
    ]
    mirror.assets.upsertPage(assets)
    expect(mirror.assets.list({ orgId: ORG, folderId: sub.id }).items).toEqual([
      assets[1],
      assets[0],
    ])
    expect(mirror.assets.list({ orgId: ORG, folderId: null }).items).toEqual([assets[2]])
    expect(mirror.assets.list({ orgId: ORG, mediaType: 'video' }).items).toEqual([])

    const first = assets[0]
    if (!first) throw new Error('no asset')
    expect(mirror.assets.setThumbnail(first.id, 'a'.repeat(64))).toBe(true)
    mirror.assets.upsertPage([
      { ...first, name: 'lumen-cover.png', updated_at: iso(BASE + 3_600_000) },
    ])
    expect(mirror.assets.thumbnailSha256(first.id)).toBe('a'.repeat(64))
    expect(found(mirror, ORG, 'cover', 'asset')).toEqual([first.id])
    expect(found(mirror, ORG, 'hero', 'asset')).toEqual([])

    mirror.assets.upsertPage([
      { ...first, deleted_at: iso(BASE + 7_200_000), updated_at: iso(BASE + 7_200_000) },
    ])
    expect(mirror.assets.get(first.id)).toBeNull()
    expect(found(mirror, ORG, 'cover', 'asset')).toEqual([])
    expect(found(mirror, ORG, 'lumen', 'asset_folder')).toEqual([sub.id])
    expect(mirror.applyTombstones('asset_folders', [sub.id])).toBe(1)
    expect(found(mirror, ORG, 'lumen', 'asset_folder')).toEqual([])
    expectSearchInStep(mirror)
  })
})

describe('records several organizations can read', () => {
  it('are kept per organization and leave every view when deleted', () => {
    const { mirror } = databases()
    const shared = makeFlow(1, null, 'Poster maker')
    mirror.flows.upsertPage([shared], { orgId: ORG })
    mirror.flows.upsertPage([{ ...shared, name: 'Poster maker (team view)' }], { orgId: OTHER_ORG })
    expect(mirror.flows.get({ orgId: ORG }, shared.id)?.name).toBe('Poster maker')
    expect(mirror.flows.get({ orgId: OTHER_ORG }, shared.id)?.name).toBe('Poster maker (team view)')
    expect(found(mirror, OTHER_ORG, 'team', 'flow')).toEqual([shared.id])
    expect(found(mirror, ORG, 'team', 'flow')).toEqual([])
    const flows = [makeFlow(2, ORG, 'Banner'), makeFlow(3, ORG, 'Thumbnail')]
    mirror.flows.upsertPage(flows, { orgId: ORG })
    const firstPage = mirror.flows.list({ orgId: ORG }, { limit: 2 })
    expect(firstPage.items.map((f) => f.name)).toEqual(['Thumbnail', 'Banner'])
    expect(mirror.flows.list({ orgId: ORG }, { after: firstPage.next }).items).toEqual([shared])
    expect(mirror.applyTombstones('flows', [shared.id])).toBe(2)
    expect(mirror.flows.count({ orgId: OTHER_ORG })).toBe(0)
    expectSearchInStep(mirror)
  })
})

describe('search', () => {
  it('quotes what users type, matches the last word as a prefix, and never crosses organizations', () => {
    const { mirror } = databases()
    mirror.runs.upsertPage([
      makeRun(1, { input: { prompt: 'Crème brûlée on a "marble" table OR NEAR a window' } }),
      makeRun(2, { org_id: OTHER_ORG, input: { prompt: 'creme brulee for the other studio' } }),
    ])
    expect(found(mirror, ORG, 'creme brulee', 'run')).toEqual([uuid('aaaa', 1)])
    expect(found(mirror, ORG, 'marb', 'run')).toEqual([uuid('aaaa', 1)])
    expect(found(mirror, ORG, '"marble" OR NEAR(', 'run')).toEqual([uuid('aaaa', 1)])
    expect(found(mirror, OTHER_ORG, 'creme', 'run')).toEqual([uuid('aaaa', 2)])
    expect(mirror.search.find({ orgId: ORG, text: '  ** ' })).toEqual([])
    expect(SEARCH_KINDS).toHaveLength(FTS_TABLES.length)
  })
})

// ---------------------------------------------------------------------------------------------

describe('sync cursors', () => {
  it('move with their page in one transaction, or not at all', () => {
    let now = 1_000
    const { mirror } = databases(() => now)
    const key = { profile: 'default', orgId: ORG, collection: 'runs' }
    expect(mirror.syncCursors.get(key)).toBeNull()
    const page = [makeRun(1), makeRun(2)]
    mirror.transaction(() => {
      mirror.runs.upsertPage(page)
      mirror.syncCursors.set({
        ...key,
        updatedAt: page[1]?.updated_at ?? null,
        id: page[1]?.id ?? null,
        fullSync: true,
      })
    })
    expect(mirror.syncCursors.get(key)).toEqual({
      ...key,
      updatedAt: page[1]?.updated_at,
      id: page[1]?.id,
      lastSyncMs: 1_000,
      lastFullSyncMs: 1_000,
    })

    now = 2_000
    expect(() =>
      mirror.transaction(() => {
        mirror.runs.upsertPage([makeRun(3)])
        mirror.syncCursors.set({ ...key, updatedAt: 'later', id: 'x' })
        throw new Error('the connection dropped mid-page')
      }),
    ).toThrow(/dropped/)
    expect(mirror.runs.get(makeRun(3).id)).toBeNull()
    expect(mirror.syncCursors.get(key)?.updatedAt).toBe(page[1]?.updated_at)

    now = 3_000
    const moved = mirror.syncCursors.set({ ...key, updatedAt: 'u3', id: 'i3' })
    expect(moved).toMatchObject({ lastSyncMs: 3_000, lastFullSyncMs: 1_000 })
    mirror.syncCursors.set({ ...key, collection: 'evaluations', updatedAt: null, id: null })
    expect(mirror.syncCursors.list('default', ORG).map((c) => c.collection)).toEqual([
      'evaluations',
      'runs',
    ])
    expect(mirror.syncCursors.reset(key)).toBe(1)
    expect(mirror.syncCursors.reset({ profile: 'default', orgId: ORG })).toBe(1)
    expect(mirror.syncCursors.list('default', ORG)).toEqual([])
  })
})

describe('the outbox', () => {
  it('gives pending writes back in the order they were made, and moves them only from pending', () => {
    let now = 10
    const { ledger } = databases(() => now++)
    const scope = { profile: 'default', orgId: ORG }
    const other = { profile: 'default', orgId: OTHER_ORG }
    const a = ledger.outbox.enqueue({
      ...scope,
      kind: 'evaluation.feedback',
      subjectId: 'e1',
      payload: { is_positive: true },
    })
    const b = ledger.outbox.enqueue({
      ...other,
      kind: 'evaluation.feedback',
      subjectId: 'e2',
      payload: { is_positive: false },
    })
    const c = ledger.outbox.enqueue({
      ...scope,
      kind: 'flow.update',
      subjectId: 'f1',
      payload: { name: 'Banner' },
    })
    const d = ledger.outbox.enqueue({
      ...scope,
      kind: 'flow.update',
      subjectId: 'f1',
      payload: { name: 'Banner 2' },
    })
    expect([a.seq, b.seq, c.seq, d.seq]).toEqual(
      [...[a.seq, b.seq, c.seq, d.seq]].sort((x, y) => x - y),
    )
    expect(a).toMatchObject({
      state: 'pending',
      attempts: 0,
      lastError: null,
      sentMs: null,
      payload: { is_positive: true },
    })
    expect(new Set([a, b, c, d].map((e) => e.idempotencyKey)).size).toBe(4)

    expect(ledger.outbox.peekPending(scope, 10).map((e) => e.seq)).toEqual([a.seq, c.seq, d.seq])
    expect(ledger.outbox.peekPending(other).map((e) => e.seq)).toEqual([b.seq])

    // Offline: the head stays in place and counts the attempt.
    expect(ledger.outbox.noteFailure(a.seq, 'NETWORK_ERROR')).toBe(true)
    expect(ledger.outbox.peekPending(scope)[0]).toMatchObject({
      seq: a.seq,
      attempts: 1,
      lastError: 'NETWORK_ERROR',
    })

    expect(ledger.outbox.markSent(a.seq)).toBe(true)
    expect(ledger.outbox.get(a.seq)).toMatchObject({ state: 'sent', attempts: 2, lastError: null })
    expect(ledger.outbox.markRejected(c.seq, 'VALIDATION_FAILED: name is taken')).toBe(true)
    expect(ledger.outbox.peekPending(scope, 10).map((e) => e.seq)).toEqual([d.seq])
    // A late answer cannot move a finished entry.
    expect(ledger.outbox.markSent(c.seq)).toBe(false)
    expect(ledger.outbox.markRejected(a.seq, 'late')).toBe(false)
    expect(ledger.outbox.get(c.seq)).toMatchObject({
      state: 'rejected',
      lastError: 'VALIDATION_FAILED: name is taken',
    })
    expect(ledger.outbox.forSubject('f1').map((e) => e.seq)).toEqual([c.seq, d.seq])

    // The user fixes it and sends it again: back in its old place.
    expect(ledger.outbox.retry(c.seq)).toBe(true)
    expect(ledger.outbox.peekPending(scope, 10).map((e) => e.seq)).toEqual([c.seq, d.seq])

    const pageOne = ledger.outbox.list({ limit: 2 })
    const pageTwo = ledger.outbox.list({ limit: 2, after: pageOne.next })
    expect([...pageOne.items, ...pageTwo.items].map((e) => e.seq)).toEqual([
      a.seq,
      b.seq,
      c.seq,
      d.seq,
    ])
    expect(pageTwo.next).toBeNull()
    expect(ledger.outbox.list({ state: 'sent' }).items.map((e) => e.seq)).toEqual([a.seq])
    expect(ledger.outbox.list({ orgId: OTHER_ORG }).items.map((e) => e.seq)).toEqual([b.seq])

    expect(ledger.outbox.purgeSent(now + 1)).toBe(1)
    expect(ledger.outbox.get(a.seq)).toBeNull()
    // AUTOINCREMENT: a purged seq is never handed out again.
    const e = ledger.outbox.enqueue({ ...scope, kind: 'flow.update', payload: {} })
    expect(e.seq).toBeGreaterThan(d.seq)
    expect(() => ledger.outbox.list({ after: 'x' })).toThrow(/not a cursor/)
  })

  it('is durable across a restart', () => {
    const home = freshHome()
    const first = openDatabases(home)
    first.ledger.outbox.enqueue({ profile: 'p', orgId: ORG, kind: 'k', payload: [1, 2, 3] })
    first.close()
    const again = openDatabases(home)
    open.push(again)
    expect(again.ledger.outbox.peekPending({ profile: 'p', orgId: ORG })).toEqual([
      expect.objectContaining({ kind: 'k', payload: [1, 2, 3], state: 'pending' }),
    ])
  })
})

describe('run intents', () => {
  it('are committed before sending and move forward only', () => {
    let now = 100
    const { ledger } = databases(() => now++)
    const scope = { profile: 'default', orgId: ORG }
    const intent = ledger.intents.record({
      ...scope,
      flowRunId: 'flow-run-1',
      nodeId: 'node-a',
      targetTypeCode: 'model',
      targetRef: 'atelier/text-to-image',
      inputsHash: 'h1',
      request: { input: { prompt: 'a fox' }, metadata: { intent: 'x' } },
    })
    expect(intent).toMatchObject({
      state: 'prepared',
      attempts: 0,
      remoteRunId: null,
      request: { input: { prompt: 'a fox' } },
    })
    expect(ledger.intents.withIdempotencyKey(intent.idempotencyKey)?.id).toBe(intent.id)
    expect(ledger.intents.open(scope).map((i) => i.id)).toEqual([intent.id])

    expect(ledger.intents.markSending(intent.id)).toBe(true)
    expect(ledger.intents.markSending(intent.id)).toBe(true)
    expect(ledger.intents.get(intent.id)).toMatchObject({ state: 'sending', attempts: 2 })
    expect(ledger.intents.markDispatched(intent.id, 'remote-run-1')).toBe(true)
    expect(ledger.intents.markSending(intent.id)).toBe(false)
    expect(ledger.intents.succeeded(scope, 'atelier/text-to-image', 'h1')).toBeNull()
    expect(ledger.intents.finish(intent.id, 'succeeded')).toBe(true)
    expect(ledger.intents.get(intent.id)).toMatchObject({
      state: 'succeeded',
      remoteRunId: 'remote-run-1',
    })
    expect(ledger.intents.succeeded(scope, 'atelier/text-to-image', 'h1')?.id).toBe(intent.id)
    expect(ledger.intents.finish(intent.id, 'failed', { error: 'late' })).toBe(false)
    expect(ledger.intents.open(scope)).toEqual([])
    expect(ledger.intents.forNode('flow-run-1', 'node-a').map((i) => i.id)).toEqual([intent.id])
    expect(() =>
      ledger.intents.record({
        ...scope,
        targetTypeCode: 'model',
        targetRef: 'm',
        inputsHash: 'h',
        idempotencyKey: intent.idempotencyKey,
        request: {},
      }),
    ).toThrow(/UNIQUE/)
  })
})

describe('writes the ledger does not flush on their own', () => {
  it('commit with synchronous NORMAL, put FULL back, and join an open transaction', () => {
    const home = freshHome()
    const first = openDatabases(home)
    const { db } = first.ledger
    const level = () => db.pragma('synchronous', { simple: true }) as number
    const FULL = 2
    const NORMAL = 1
    expect(level()).toBe(FULL)
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT')
    const insert = db.prepare('INSERT INTO notes (text) VALUES (?)')
    let during = 0
    withoutFlush(db, () => {
      during = level()
      insert.run('relaxed')
    })
    expect(during).toBe(NORMAL)
    expect(level()).toBe(FULL)
    // A failing write puts FULL back too.
    expect(() =>
      withoutFlush(db, () => {
        throw new Error('nope')
      }),
    ).toThrow('nope')
    expect(level()).toBe(FULL)
    // Inside a transaction the level cannot change: the write joins it and its commit decides.
    first.ledger.transaction(() => {
      withoutFlush(db, () => {
        during = level()
        insert.run('joined')
      })
    })
    expect(during).toBe(FULL)
    first.close()
    // Committed all the same: kept when the connection closes (the process ends).
    const again = openDatabases(home)
    expect(again.ledger.db.prepare('SELECT text FROM notes ORDER BY id').pluck().all()).toEqual([
      'relaxed',
      'joined',
    ])
    again.close()
  })
})

describe('upload manifests', () => {
  it('remember files, hashes and finished parts, and start a changed file over', () => {
    let now = 1_000
    const { ledger } = databases(() => now++)
    const uploads: Ledger['uploads'] = ledger.uploads
    const manifest = uploads.createManifest({
      profile: 'default',
      orgId: ORG,
      rootPath: '/photos/shoot',
    })
    expect(manifest).toMatchObject({ state: 'scanning', targetFolderId: null, finishedMs: null })
    const listed = [
      { relativePath: 'a.jpg', sizeBytes: 10_000_000, mtimeMs: 1 },
      { relativePath: 'sub/b.jpg', sizeBytes: 2_000, mtimeMs: 2 },
    ]
    expect(uploads.addFiles(manifest.id, listed)).toBe(2)
    expect(uploads.addFiles(manifest.id, listed)).toBe(0)
    uploads.setManifestState(manifest.id, 'uploading')

    const [a, b] = uploads.files(manifest.id).items
    if (!a || !b) throw new Error('files missing')
    expect(uploads.setHash(a.seq, 'f'.repeat(64), 'image/jpeg')).toBe(true)
    uploads.startUpload(a.seq, {
      uploadId: 'up-1',
      expiresMs: 5_000,
      partSize: 8_388_608,
      partCount: 2,
      folderId: null,
    })
    uploads.recordPart(a.seq, { partNumber: 1, sizeBytes: 8_388_608, etag: '"e1"' })
    expect(uploads.finishedParts(a.seq)).toEqual([
      { partNumber: 1, sizeBytes: 8_388_608, etag: '"e1"' },
    ])
    expect(uploads.getFile(a.seq)).toMatchObject({
      state: 'uploading',
      uploadId: 'up-1',
      attempts: 1,
    })

    // The presigned upload expired: a new one starts from no parts.
    uploads.startUpload(a.seq, {
      uploadId: 'up-2',
      expiresMs: 9_000,
      partSize: 8_388_608,
      partCount: 2,
      folderId: null,
    })
    expect(uploads.finishedParts(a.seq)).toEqual([])
    uploads.recordPart(a.seq, { partNumber: 1, sizeBytes: 8_388_608, etag: '"e1b"' })

    // The file changed on disk: listed again, it starts over (no hash, no upload, no parts).
    expect(
      uploads.addFiles(manifest.id, [{ relativePath: 'a.jpg', sizeBytes: 10_000_001, mtimeMs: 3 }]),
    ).toBe(1)
    expect(uploads.getFile(a.seq)).toMatchObject({ state: 'pending', sha256: null, uploadId: null })
    expect(uploads.finishedParts(a.seq)).toEqual([])

    uploads.finishFile(b.seq, 'duplicate', 'asset-1')
    expect(uploads.files(manifest.id, { state: 'pending' }).items.map((f) => f.seq)).toEqual([
      a.seq,
    ])
    expect(uploads.progress(manifest.id)).toEqual({
      pending: { files: 1, bytes: 10_000_001 },
      duplicate: { files: 1, bytes: 2_000 },
    })
    expect(uploads.unfinished({ profile: 'default', orgId: ORG }).map((m) => m.id)).toEqual([
      manifest.id,
    ])
    uploads.setManifestState(manifest.id, 'finished')
    expect(uploads.getManifest(manifest.id)?.finishedMs).not.toBeNull()
    expect(uploads.unfinished({ profile: 'default', orgId: ORG })).toEqual([])
    const firstPage = uploads.files(manifest.id, { limit: 1 })
    expect(
      uploads.files(manifest.id, { limit: 1, after: firstPage.next }).items.map((f) => f.seq),
    ).toEqual([b.seq])
  })
})

import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { components, Evaluation, Run } from '../../src-shared/api'
import { seedHistory } from '../../src-main/sandbox/runs'
import { historyShares, type HistorySummary } from '../../src-main/sandbox/runs/history'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { contractErrors } from '../helpers/contract-schema'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

type Asset = components['schemas']['Asset']
type AssetFolder = components['schemas']['AssetFolder']
type AssetUpload = components['schemas']['AssetUpload']
type Page<T> = { items: T[]; next: string | null }

const RUNS = 2_000
const DAY = 24 * 60 * 60 * 1000

let sandbox: TestSandbox
let client: ServiceClient
let summary: HistorySummary
let evaluations: Evaluation[]
let assets: Asset[]
let folders: AssetFolder[]
let runs: Map<string, Run>

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

async function all<T>(path: '/v1/evaluations' | '/v1/assets' | '/v1/asset-folders' | '/v1/runs') {
  const items: T[] = []
  for await (const item of client.list(path, { params: { query: { limit: 500 } } })) {
    items.push(item as T)
    if (items.length > 10_000) throw new Error(`${path} does not end`)
  }
  return items
}

/** `q` through the raw API, every page: what the filter lets through. */
async function filtered<T>(path: string, q: string): Promise<T[]> {
  const items: T[] = []
  let pq: string | null = null
  for (let page = 0; page < 20; page++) {
    const cursor = pq ? `&pq=${encodeURIComponent(pq)}` : ''
    const response = await sandbox.call(
      'GET',
      `${path}?limit=500&q=${encodeURIComponent(q)}${cursor}`,
    )
    expect(response.status, response.text).toBe(200)
    const body = response.body as Page<T>
    items.push(...body.items)
    pq = body.next
    if (!pq) break
  }
  return items
}

/** Runs `task` over `items`, a few at a time (each one an HTTP call or two). */
async function eachOf<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    for (let item = items[next++]; item !== undefined; item = items[next++]) await task(item)
  }
  await Promise.all(Array.from({ length: 8 }, worker))
}

beforeAll(async () => {
  sandbox = await startTestSandbox()
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  summary = await seedHistory(sandbox.services, sandbox.orgId, RUNS)
  evaluations = await all<Evaluation>('/v1/evaluations')
  assets = await all<Asset>('/v1/assets')
  folders = await all<AssetFolder>('/v1/asset-folders')
  runs = new Map((await all<Run>('/v1/runs')).map((run) => [run.id, run]))
}, 120_000)

afterAll(async () => {
  await sandbox.close()
})

describe('--seed-runs history: counts', () => {
  it('adds one evaluation per 4 runs and one asset per 10, capped, as the help says', () => {
    expect(historyShares(RUNS)).toEqual({ evaluations: 500, assets: 200 })
    expect(historyShares(1_000_000)).toEqual({ evaluations: 25_000, assets: 5_000 })
    expect(historyShares(3)).toEqual({ evaluations: 0, assets: 0 })
    expect(summary).toMatchObject({ runs: RUNS, evaluations: 500, assets: 200 })
    expect(runs.size).toBe(RUNS)
    expect(evaluations).toHaveLength(500)
    expect(assets).toHaveLength(200)
    expect(folders).toHaveLength(summary.asset_folders)
    expect(folders.length).toBeGreaterThan(20)

    const help = spawnSync(
      process.execPath,
      [join(import.meta.dirname, '..', '..', 'bin', 'atelier.mjs'), 'sandbox', '--help'],
      { encoding: 'utf8', timeout: 30_000 },
    )
    const text = help.stdout.replace(/\s+/g, ' ')
    expect(text).toContain('one evaluation per 4 runs (at most 25,000')
    expect(text).toContain('one asset per 10 runs (at most 5,000')
  })
})

describe('--seed-runs history: evaluations', () => {
  it('reads back every one valid against the contract, in lists and one by one', async () => {
    for (const evaluation of evaluations)
      expect(contractErrors('Evaluation', evaluation)).toEqual([])
    // GET embeds the run, the model and the parent: the response check validates those too.
    await eachOf(evaluations, async (evaluation) => {
      const read = await client.get('/v1/evaluations/{evaluation_id}', {
        params: { path: { evaluation_id: evaluation.id ?? '' } },
      })
      expect(read.id).toBe(evaluation.id)
      expect(read.run?.id ?? null).toBe(evaluation.run_id)
      expect(read.parent_evaluation?.id ?? null).toBe(evaluation.parent_evaluation_id)
      if (evaluation.model_id) expect(read.model?.id).toBe(evaluation.model_id)
    })
  }, 60_000)

  it('are finished, mostly completed with a verdict from the judges', () => {
    const completed = evaluations.filter((e) => e.status_code === 'completed')
    const failed = evaluations.filter((e) => e.status_code === 'failed')
    expect(completed.length + failed.length).toBe(evaluations.length)
    expect(completed.length).toBeGreaterThan(evaluations.length * 0.75)
    for (const evaluation of completed) {
      expect(evaluation.judges?.length).toBe(evaluation.analysis_modules_executed)
      expect(evaluation.weighted_pass_rate).toBeGreaterThanOrEqual(0)
      expect(typeof evaluation.overall_passed).toBe('boolean')
      expect(evaluation.action?.code).toBe(evaluation.primary_action_code)
      expect(['0.0100', '0.0040']).toContain(evaluation.cost)
      expect(evaluation.failure_code).toBeNull()
      for (const judge of evaluation.judges ?? []) {
        expect(judge.evaluation_id).toBe(evaluation.id)
        expect(judge.created_at).toBe(evaluation.completed_at)
        for (const issue of judge.issues ?? []) {
          expect(issue).toMatchObject({ judge_id: judge.id, evaluation_id: evaluation.id })
        }
      }
      const summary = evaluation.check_summary as { judges_passed: number; judges_total: number }
      expect(summary.judges_total).toBe(evaluation.judges?.length)
    }
    // Every judge and issue has its own id, across the whole history.
    const ids = completed.flatMap((e) =>
      (e.judges ?? []).flatMap((j) => [j.id, ...(j.issues ?? []).map((i) => i.id)]),
    )
    expect(new Set(ids).size).toBe(ids.length)
    expect(completed.some((e) => e.overall_passed === true)).toBe(true)
    expect(completed.some((e) => e.overall_passed === false)).toBe(true)
    expect(completed.some((e) => (e.gate_failures ?? []).length > 0)).toBe(true)
    expect(completed.some((e) => e.job_class_code === 'quick')).toBe(true)
    expect(completed.some((e) => (e.reference_images ?? []).length > 0)).toBe(true)

    for (const code of ['invalid_media', 'dispatch_failed', 'processing_failed', 'timed_out']) {
      const withCode = failed.filter((e) => e.failure_code === code)
      expect(withCode.length, code).toBeGreaterThan(0)
      for (const evaluation of withCode) {
        expect(evaluation).toMatchObject({
          cost: '0.0000',
          judges: null,
          overall_passed: null,
          primary_action_code: 'resubmit',
          feedback_is_positive: null,
          check_summary: { failure_code: code },
        })
        expect(evaluation.top_issues).toEqual([
          (evaluation.check_summary as { failure_message: string }).failure_message,
        ])
      }
    }
  })

  it('has ratings, up and down, some with a reason, only on completed ones', () => {
    const rated = evaluations.filter((e) => e.feedback_is_positive !== null)
    expect(rated.some((e) => e.feedback_is_positive === true && e.feedback_reason)).toBe(true)
    expect(rated.some((e) => e.feedback_is_positive === false && e.feedback_reason)).toBe(true)
    expect(rated.some((e) => e.feedback_reason === null)).toBe(true)
    for (const evaluation of rated) expect(evaluation.status_code).toBe('completed')
    for (const evaluation of evaluations.filter((e) => e.feedback_is_positive === null)) {
      expect(evaluation.feedback_reason).toBeNull()
    }
  })

  it('chains re-evaluations consistently: attempts, parents superseded by their child', () => {
    const byId = new Map(evaluations.map((e) => [e.id, e]))
    const children = evaluations.filter((e) => e.parent_evaluation_id !== null)
    expect(children.length).toBeGreaterThan(5)
    expect(children.some((e) => e.attempt_number === 3)).toBe(true)
    for (const child of children) {
      const parent = byId.get(child.parent_evaluation_id)
      expect(parent, child.id ?? '').toBeDefined()
      if (!parent) continue
      expect(child.attempt_number).toBe((parent.attempt_number ?? 0) + 1)
      expect(parent.superseded_at).toBe(child.created_at)
      expect(parent.links?.superseded_by).toBe(`/v1/evaluations/${child.id ?? ''}`)
      expect(child.links?.parent_evaluation).toBe(`/v1/evaluations/${parent.id ?? ''}`)
      expect(Date.parse(child.created_at ?? '')).toBeGreaterThan(
        Date.parse(parent.completed_at ?? ''),
      )
      expect(Date.parse(parent.updated_at ?? '')).toBeGreaterThanOrEqual(
        Date.parse(child.created_at ?? ''),
      )
      expect(child).toMatchObject({
        run_id: parent.run_id,
        model_id: parent.model_id,
        generation_prompt: parent.generation_prompt,
        evaluation_instructions: parent.evaluation_instructions,
      })
    }
    const superseded = evaluations.filter((e) => e.superseded_at !== null)
    expect(superseded).toHaveLength(children.length)
    for (const evaluation of evaluations) {
      if (evaluation.parent_evaluation_id === null) expect(evaluation.attempt_number).toBe(1)
      if (evaluation.superseded_at === null) expect(evaluation.links?.superseded_by).toBeUndefined()
    }
  })

  it('is about the seeded runs (their output, model and prompt) or standalone, over 90 days', () => {
    const aboutRuns = evaluations.filter((e) => e.run_id !== null)
    expect(aboutRuns.length).toBeGreaterThan(evaluations.length * 0.5)
    expect(aboutRuns.length).toBeLessThan(evaluations.length)
    for (const evaluation of aboutRuns) {
      const run = runs.get(evaluation.run_id ?? '')
      expect(run?.status_code).toBe('succeeded')
      expect(evaluation.model_id).toBe(run?.model_id)
      expect(evaluation.target_type_code).toBe('model')
      const prompt = run?.input.prompt
      expect(evaluation.generation_prompt).toBe(typeof prompt === 'string' ? prompt : null)
      expect(Date.parse(evaluation.created_at ?? '')).toBeGreaterThan(
        Date.parse(run?.completed_at ?? ''),
      )
      const images = (run?.output?.images ?? []) as { sha256: string }[]
      if (evaluation.status_code === 'completed') {
        const image = (evaluation.check_summary as { image: { sha256: string } }).image
        expect(images.map((file) => file.sha256)).toContain(image.sha256)
      }
      expect(evaluation.generated_image_url).toContain(`/_storage/blobs/${images[0]?.sha256 ?? ''}`)
    }
    // Each run is evaluated once, re-evaluations aside.
    const originals = aboutRuns.filter((e) => e.attempt_number === 1).map((e) => e.run_id)
    expect(new Set(originals).size).toBe(originals.length)
    const standalone = evaluations.filter((e) => e.run_id === null)
    for (const evaluation of standalone) {
      expect(evaluation.model_id).toBeNull()
      expect(evaluation.generated_image_url).toMatch(/^https:\/\/[a-z.-]+\.invalid\//)
    }
    const times = evaluations.map((e) => Date.parse(e.created_at ?? ''))
    expect(Math.min(...times)).toBeGreaterThan(Date.now() - 91 * DAY)
    expect(Math.max(...times)).toBeLessThan(Date.now())
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(60 * DAY)
    for (const evaluation of evaluations) {
      const created = Date.parse(evaluation.created_at ?? '')
      const submitted = Date.parse(evaluation.submitted_at ?? '')
      const completed = Date.parse(evaluation.completed_at ?? '')
      expect(submitted).toBeGreaterThan(created)
      expect(completed - submitted).toBe(evaluation.eval_duration_ms)
      expect(Date.parse(evaluation.updated_at ?? '')).toBeGreaterThanOrEqual(completed)
    }
  })

  it('answers q filters as the records say', async () => {
    const passed = await filtered<Evaluation>('/v1/evaluations', 'overall_passed=true')
    expect(passed.map((e) => e.id).sort()).toEqual(
      evaluations
        .filter((e) => e.overall_passed === true)
        .map((e) => e.id)
        .sort(),
    )
    const timedOut = await filtered<Evaluation>(
      '/v1/evaluations',
      'status_code=failed and failure_code=timed_out',
    )
    expect(timedOut.length).toBe(evaluations.filter((e) => e.failure_code === 'timed_out').length)
    const rerated = await filtered<Evaluation>(
      '/v1/evaluations',
      'feedback_is_positive=false and attempt_number>1',
    )
    expect(
      rerated.every((e) => e.feedback_is_positive === false && (e.attempt_number ?? 0) > 1),
    ).toBe(true)
    const aRun = evaluations.find((e) => e.run_id)?.run_id ?? ''
    const ofRun = await client.get('/v1/evaluations', {
      params: { query: { q: `run_id=${aRun}`, sort_by: 'attempt_number:asc' } },
    })
    expect(ofRun.items.length).toBeGreaterThan(0)
    expect(ofRun.items.every((e) => e.run_id === aRun)).toBe(true)
    expect(ofRun.items[0]?.attempt_number).toBe(1)
  })

  it('are live records: a seeded one can be rated and re-evaluated', async () => {
    const target = evaluations.find(
      (e) => e.status_code === 'completed' && e.superseded_at === null && e.run_id,
    )
    const rated = await sandbox.call('PATCH', `/v1/evaluations/${target?.id ?? ''}/feedback`, {
      body: { is_positive: true, reason: 'Checked by hand.' },
    })
    expect(rated.status, rated.text).toBe(200)
    const image = await sharp({
      create: { width: 320, height: 320, channels: 3, background: '#c04020' },
    })
      .png()
      .toBuffer()
    const again = await sandbox.call('POST', '/v1/evaluations', {
      body: {
        parent_evaluation_id: target?.id,
        generated_image_url: `data:image/png;base64,${image.toString('base64')}`,
      },
    })
    expect(again.status, again.text).toBe(201)
    expect(again.body).toMatchObject({
      attempt_number: (target?.attempt_number ?? 0) + 1,
      run_id: target?.run_id,
    })
    const superseded = evaluations.find((e) => e.superseded_at !== null)
    const refused = await sandbox.call('POST', '/v1/evaluations', {
      body: {
        parent_evaluation_id: superseded?.id,
        generated_image_url: `data:image/png;base64,${image.toString('base64')}`,
      },
    })
    expect(refused.status).toBe(422)
  })
})

describe('--seed-runs history: media', () => {
  it('reads back every asset and folder valid against the contract', async () => {
    for (const asset of assets) expect(contractErrors('Asset', asset)).toEqual([])
    for (const folder of folders) expect(contractErrors('AssetFolder', folder)).toEqual([])
    await eachOf(folders, async (folder) => {
      const read = await client.get('/v1/asset-folders/{id}', {
        params: { path: { id: folder.id } },
      })
      expect(read).toEqual(folder)
    })
    await eachOf(assets, async (asset) => {
      const read = await client.get('/v1/assets/{asset_id}', {
        params: { path: { asset_id: asset.id } },
      })
      expect({ ...read, url: null, url_expires_at: null, thumbnail_url: null }).toEqual({
        ...asset,
        url: null,
        url_expires_at: null,
        thumbnail_url: null,
      })
    })
  }, 60_000)

  it('builds a folder tree a few levels deep, with unique sibling names', () => {
    const byId = new Map(folders.map((f) => [f.id, f]))
    for (const folder of folders) {
      const parent = folder.parent_id ? byId.get(folder.parent_id) : null
      expect(folder.path).toBe(`${parent ? parent.path : ''}/${folder.name}`)
      if (parent) expect(folder.created_at > parent.created_at).toBe(true)
    }
    const depth = Math.max(...folders.map((f) => f.path.split('/').length - 1))
    expect(depth).toBeGreaterThanOrEqual(4)
    const siblings = new Set(folders.map((f) => `${f.parent_id ?? ''}/${f.name.toLowerCase()}`))
    expect(siblings.size).toBe(folders.length)
  })

  it('spreads assets (images mostly, some videos) across the tree over 90 days', () => {
    const folderIds = new Map(folders.map((f) => [f.id, f]))
    const images = assets.filter((a) => a.media_type === 'image')
    const videos = assets.filter((a) => a.media_type === 'video')
    expect(images.length).toBeGreaterThan(assets.length * 0.7)
    expect(videos.length).toBeGreaterThan(0)
    expect(images.length + videos.length).toBe(assets.length)
    expect(assets.some((a) => a.folder_id === null)).toBe(true)
    expect(new Set(assets.map((a) => a.folder_id)).size).toBeGreaterThan(10)
    for (const asset of assets) {
      expect(asset.status_code).toBe('ready')
      const folder = asset.folder_id ? folderIds.get(asset.folder_id) : null
      if (asset.folder_id) expect(folder).toBeDefined()
      if (folder) expect(asset.created_at > folder.created_at).toBe(true)
      if (asset.media_type === 'image') {
        expect(asset.thumbnail_url).toBeTruthy()
        expect(asset.duration_ms).toBeNull()
      } else {
        expect(asset).toMatchObject({ content_type: 'video/webm', thumbnail_url: null })
        expect(asset.duration_ms).toBeGreaterThan(0)
      }
    }
    // One live asset per content, as uploads make them (the duplicate rule).
    expect(new Set(assets.map((a) => a.sha256)).size).toBe(assets.length)
    const times = assets.map((a) => Date.parse(a.created_at))
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(60 * DAY)
    expect(Math.min(...times)).toBeGreaterThan(Date.now() - 91 * DAY)
  })

  it('downloads real bytes whose sha256 matches, thumbnails included', async () => {
    await eachOf(assets, async (asset) => {
      const response = await fetch(asset.url ?? '')
      expect(response.status).toBe(200)
      const bytes = Buffer.from(await response.arrayBuffer())
      expect(bytes.length).toBe(asset.size_bytes)
      expect(sha256(bytes)).toBe(asset.sha256)
      if (asset.media_type === 'image') {
        const metadata = await sharp(bytes).metadata()
        expect([metadata.width, metadata.height]).toEqual([asset.width, asset.height])
        const thumbnail = await fetch(asset.thumbnail_url ?? '')
        expect(thumbnail.status).toBe(200)
        const small = await sharp(Buffer.from(await thumbnail.arrayBuffer())).metadata()
        expect(small.format).toBe('webp')
        expect(Math.max(small.width, small.height)).toBeLessThanOrEqual(256)
      } else {
        // A WebM (EBML) file, as its content type says.
        expect(bytes.subarray(0, 4).toString('hex')).toBe('1a45dfa3')
      }
    })
  }, 60_000)

  it('keeps the confirmed upload each asset came from', async () => {
    for (const asset of assets.slice(0, 20)) {
      const uploadId = asset.metadata.upload_id as string
      const upload = (await sandbox.call('GET', `/v1/asset-uploads/${uploadId}`))
        .body as AssetUpload
      expect(upload).toMatchObject({
        status_code: 'confirmed',
        asset_id: asset.id,
        sha256: asset.sha256,
        size_bytes: asset.size_bytes,
        folder_id: asset.folder_id,
        filename: asset.name,
        part_count: 1,
      })
      expect(upload.parts[0]?.received).toBe(true)
    }
    // Uploading a seeded asset's bytes again finds it: the seeded library is the real one.
    const [first] = assets
    const again = await sandbox.call('POST', '/v1/asset-uploads', {
      body: {
        filename: 'again.bin',
        content_type: first?.content_type,
        size_bytes: first?.size_bytes,
        sha256: first?.sha256,
      },
    })
    expect(again.status, again.text).toBe(200)
    expect(again.body).toMatchObject({ status_code: 'duplicate', duplicate_of_asset_id: first?.id })
  })

  it('answers q filters as the records say', async () => {
    const images = await filtered<Asset>('/v1/assets', 'media_type=image')
    expect(images).toHaveLength(assets.filter((a) => a.media_type === 'image').length)
    const videos = await client.get('/v1/assets', {
      params: { query: { q: 'media_type=video and content_type=video/webm', limit: 500 } },
    })
    expect(videos.items).toHaveLength(assets.filter((a) => a.media_type === 'video').length)
    const packshots = folders.find((f) => f.path.endsWith('/Packshots'))
    const inside = await filtered<Asset>('/v1/assets', `folder_id=${packshots?.id ?? ''}`)
    expect(inside.length).toBe(assets.filter((a) => a.folder_id === packshots?.id).length)
    const shoots = await filtered<AssetFolder>('/v1/asset-folders', 'name~Shoot')
    expect(shoots.length).toBeGreaterThan(0)
    expect(shoots.every((f) => f.path.startsWith('/Clients/Nordlys/Shoots'))).toBe(true)
  })
})

describe('--seed-runs history: isolation', () => {
  it('shows another organization none of it', async () => {
    const other = { key: sandbox.keys.otherOrg }
    for (const path of ['/v1/evaluations', '/v1/assets', '/v1/asset-folders']) {
      const response = await sandbox.call('GET', `${path}?limit=500`, other)
      expect(response.status).toBe(200)
      expect((response.body as Page<{ org_id: string }>).items).toEqual([])
    }
    const evaluation = evaluations[0]?.id ?? ''
    expect((await sandbox.call('GET', `/v1/evaluations/${evaluation}`, other)).status).toBe(404)
    expect((await sandbox.call('GET', `/v1/assets/${assets[0]?.id ?? ''}`, other)).status).toBe(404)
    const folder = folders[0]?.id ?? ''
    expect((await sandbox.call('GET', `/v1/asset-folders/${folder}`, other)).status).toBe(404)
    const upload = assets[0]?.metadata.upload_id as string
    expect((await sandbox.call('GET', `/v1/asset-uploads/${upload}`, other)).status).toBe(404)
  })
})

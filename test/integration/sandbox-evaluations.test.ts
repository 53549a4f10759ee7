import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Asset, Evaluation, EvaluationJudge, Run } from '../../src-shared/api'
import { startSandbox } from '../../src-main/sandbox'
import { MODEL_CATALOG } from '../../src-main/sandbox/models'
import { createServiceClient, ServiceError, type ServiceClient } from '../../src-main/service'
import { contractErrors } from '../helpers/contract-schema'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

let sandbox: TestSandbox
let images: Server
let imagesUrl: string
let client: ServiceClient
let scene: Buffer
const held = new Set<() => void>()

/** A small, sharp, well-exposed scene: a red ball in a blue sky above green grass. */
function sceneSvg(width: number, height: number): Buffer {
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${String(width)}" height="${String(height)}">
  <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
    <stop offset="0" stop-color="#3a6ea5"/><stop offset="1" stop-color="#c0d8ee"/>
  </linearGradient></defs>
  <rect width="100%" height="100%" fill="url(#sky)"/>
  <circle cx="${String(width * 0.4)}" cy="${String(height * 0.45)}" r="${String(height * 0.2)}" fill="#d23c3c"/>
  <rect x="${String(width * 0.55)}" y="${String(height * 0.5)}" width="${String(width * 0.2)}" height="${String(height * 0.25)}" fill="#f2c230"/>
  <path d="M0 ${String(height * 0.85)} L${String(width)} ${String(height * 0.8)} L${String(width)} ${String(height)} L0 ${String(height)} Z" fill="#2e7d32"/>
</svg>`)
}

const PROMPT = 'a red ball in a blue sky above green grass'

const dataUrl = (bytes: Buffer, type = 'image/png'): string =>
  `data:${type};base64,${bytes.toString('base64')}`

function solid(width: number, height: number, colour: string): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer()
}

async function submit(body: Record<string, unknown>, key?: string): Promise<Evaluation> {
  const response = await sandbox.call('POST', '/v1/evaluations', { body, key })
  expect(response.status, response.text).toBe(201)
  return response.body as Evaluation
}

/** Polls until the evaluation is completed or failed (at most ~8 s). */
async function settled(id: string, target: TestSandbox = sandbox): Promise<Evaluation> {
  for (let attempt = 0; attempt < 160; attempt++) {
    const response = await target.call('GET', `/v1/evaluations/${id}`)
    expect(response.status, response.text).toBe(200)
    const evaluation = response.body as Evaluation
    if (evaluation.status_code === 'completed' || evaluation.status_code === 'failed') {
      return evaluation
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`evaluation ${id} did not finish`)
}

async function balance(): Promise<string> {
  const response = await sandbox.call('GET', '/v1/billing/balance')
  return (response.body as { balance: string }).balance
}

const credits = (decimal: string): number => Math.round(Number(decimal) * 1_000_000)

async function insertAsset(
  bytes: Buffer,
  overrides: Partial<Asset> = {},
  orgId = sandbox.orgId,
): Promise<Asset> {
  const { sha256, size } = sandbox.services.blobs.put(bytes)
  const metadata = await sharp(bytes).metadata()
  const now = sandbox.services.store.now()
  const asset: Asset = {
    id: sandbox.services.store.newId(),
    org_id: orgId,
    folder_id: null,
    name: 'scene.png',
    media_type: 'image',
    content_type: 'image/png',
    size_bytes: size,
    sha256,
    width: metadata.width,
    height: metadata.height,
    duration_ms: null,
    url: null,
    url_expires_at: null,
    thumbnail_url: null,
    status_code: 'ready',
    metadata: {},
    created_at: now,
    updated_at: now,
    deleted_at: null,
    ...overrides,
  }
  expect(contractErrors('Asset', asset)).toEqual([])
  return sandbox.services.store.insert('assets', orgId, asset, null)
}

function insertRun(): Run {
  const model = MODEL_CATALOG[0]
  if (!model) throw new Error('the catalog is empty')
  const now = sandbox.services.store.now()
  const run: Run = {
    id: sandbox.services.store.newId(),
    org_id: sandbox.orgId,
    target_type_code: 'model',
    source_code: 'api',
    model_id: model.id,
    model_slug: model.slug.includes('/') ? model.slug : `atelier/${model.slug}`,
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: 'succeeded',
    input: { prompt: 'a lone red ball, vertical', width: 480, height: 640 },
    output: null,
    metadata: null,
    callback_url: null,
    idempotency_key: null,
    progress: 1,
    cost: '0.0100',
    estimated_cost: '0.0100',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    duration_ms: 40,
    created_at: now,
    queued_at: now,
    started_at: now,
    completed_at: now,
    updated_at: now,
  }
  expect(contractErrors('Run', run)).toEqual([])
  return sandbox.services.store.insert('runs', sandbox.orgId, run, null)
}

/** The verdict without what differs between two evaluations of the same image (ids, times). */
function verdictOf(evaluation: Evaluation): unknown {
  const judges = (evaluation.judges ?? []).map((judge) => ({
    ...judge,
    id: undefined,
    evaluation_id: undefined,
    created_at: undefined,
    issues: (judge.issues ?? []).map((issue) => ({
      ...issue,
      id: undefined,
      judge_id: undefined,
      evaluation_id: undefined,
      created_at: undefined,
    })),
  }))
  return {
    judges,
    overall_passed: evaluation.overall_passed,
    weighted_pass_rate: evaluation.weighted_pass_rate,
    top_issues: evaluation.top_issues,
    top_strengths: evaluation.top_strengths,
    check_summary: evaluation.check_summary,
    gate_failures: (evaluation.gate_failures ?? []).map((gate) => ({
      ...gate,
      judge_id: undefined,
    })),
    primary_action_code: evaluation.primary_action_code,
  }
}

function expectWellFormedJudge(judge: EvaluationJudge, evaluationId: string): void {
  expect(judge.id).toMatch(/^[0-9a-f-]{36}$/)
  expect(judge.evaluation_id).toBe(evaluationId)
  expect(judge.name).toEqual(expect.any(String))
  expect(judge.description).toEqual(expect.any(String))
  expect(judge.category).toEqual(expect.any(String))
  expect(typeof judge.passed).toBe('boolean')
  expect(judge.confidence).toBeGreaterThanOrEqual(0)
  expect(judge.confidence).toBeLessThanOrEqual(1)
  expect(judge.weight).toBeGreaterThanOrEqual(0)
  expect(judge.reasoning).toMatch(/\S.*[.!]$/)
  expect(Array.isArray(judge.evidence)).toBe(true)
  expect(judge.sub_points_evaluated).toBe(Object.keys(judge.sub_point_results ?? {}).length)
  expect(judge.evidence).toHaveLength(judge.sub_points_evaluated ?? -1)
  expect(judge.created_at).toMatch(/\+00:00$/)
  for (const issue of judge.issues ?? []) {
    expect(issue).toMatchObject({
      judge_id: judge.id,
      evaluation_id: evaluationId,
      code: expect.any(String),
      severity: expect.stringMatching(/^(low|medium|high)$/),
      description: expect.any(String),
    })
  }
}

beforeAll(async () => {
  sandbox = await startTestSandbox()
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  scene = await sharp(sceneSvg(640, 480)).png().toBuffer()
  images = createServer((request, response) => {
    switch (request.url) {
      case '/scene.png':
        response.writeHead(200, { 'content-type': 'image/png' }).end(scene)
        return
      case '/notes.txt':
        response.writeHead(200, { 'content-type': 'text/plain' }).end('Not an image at all.\n')
        return
      case '/slow.png':
        // Never answers on its own; released when the test server closes.
        held.add(() => response.destroy())
        return
      default:
        response.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve))
  imagesUrl = `http://127.0.0.1:${String((images.address() as AddressInfo).port)}`
})

afterAll(async () => {
  for (const release of held) release()
  images.closeAllConnections()
  await new Promise((resolve) => images.close(resolve))
  await sandbox.close()
})

describe('submitting an image', () => {
  it('judges a data: URL: pending at first, then completed with a full, contract-valid verdict', async () => {
    const before = await balance()
    const created = await submit({
      generated_image_url: dataUrl(scene),
      generation_prompt: PROMPT,
      client_ref: 'scene-data-url',
    })
    expect(created).toMatchObject({
      status_code: 'pending',
      source_code: 'api',
      job_class_code: 'standard',
      attempt_number: 1,
      cost: '0.0100',
      judges: null,
      overall_passed: null,
      org_id: sandbox.orgId,
      callback_url: null,
      links: { self: `/v1/evaluations/${created.id ?? ''}` },
    })
    expect(credits(before) - credits(await balance())).toBe(10_000)

    const done = await settled(created.id ?? '')
    expect(contractErrors('Evaluation', done)).toEqual([])
    expect(done).toMatchObject({
      status_code: 'completed',
      failure_code: null,
      overall_passed: true,
      weighted_pass_rate: 1,
      primary_action_code: 'accept',
      action: { code: 'accept' },
      gate_failures: [],
      top_issues: [],
      cost: '0.0100',
      run: null,
      model: null,
      parent_evaluation: null,
    })
    expect(done.submitted_at).not.toBeNull()
    expect(Date.parse(done.completed_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(done.submitted_at ?? ''),
    )
    expect(done.eval_duration_ms).toBeGreaterThanOrEqual(0)
    expect(done.top_strengths?.length).toBeGreaterThan(0)
    const judges = done.judges ?? []
    expect(judges.map((j) => j.name)).toEqual([
      'resolution',
      'exposure',
      'contrast',
      'sharpness',
      'detail',
      'composition',
      'colour',
      'prompt_adherence',
    ])
    expect(done.analysis_modules_executed).toBe(judges.length)
    for (const judge of judges) expectWellFormedJudge(judge, done.id ?? '')
    const prompt = judges.find((j) => j.name === 'prompt_adherence')
    expect(Object.keys(prompt?.sub_point_results ?? {})).toEqual([
      'colour_red',
      'colour_blue',
      'colour_green',
    ])
    expect(done.check_summary).toMatchObject({
      pass_threshold: 0.7,
      image: { width: 640, height: 480, format: 'png', size_bytes: scene.length },
    })
  })

  it('fetches an http URL, and the same image gets the same verdict (determinism)', async () => {
    const byUrl = await settled(
      (await submit({ generated_image_url: `${imagesUrl}/scene.png`, generation_prompt: PROMPT }))
        .id ?? '',
    )
    const byData = await settled(
      (await submit({ generated_image_url: dataUrl(scene), generation_prompt: PROMPT })).id ?? '',
    )
    expect(byUrl.status_code).toBe('completed')
    expect(byUrl.generated_image_url).toBe(`${imagesUrl}/scene.png`)
    expect(verdictOf(byUrl)).toEqual(verdictOf(byData))
  })

  it('evaluates an asset of the organization by asset_id', async () => {
    const asset = await insertAsset(scene)
    const created = await submit({ asset_id: asset.id, generation_prompt: PROMPT })
    expect(created.generated_image_url).toBeNull()
    expect(created.links).toMatchObject({ asset: `/v1/assets/${asset.id}` })
    const done = await settled(created.id ?? '')
    expect(done.status_code).toBe('completed')
    expect(done.check_summary).toMatchObject({ image: { sha256: asset.sha256 } })
  })

  it('evaluates the sandbox’s own presigned blob URLs', async () => {
    const { sha256 } = sandbox.services.blobs.put(scene)
    const { blobUrl } = await import('../../src-main/sandbox/core-area')
    const { url } = blobUrl(sandbox.services, sha256, 'image/png')
    const done = await settled((await submit({ generated_image_url: url })).id ?? '')
    expect(done.status_code).toBe('completed')
    // Without a prompt there is nothing to adhere to: the prompt judge does not run.
    expect(done.judges?.map((j) => j.name)).not.toContain('prompt_adherence')
  })

  it('runs fewer judges, faster and cheaper, for job_class_code quick', async () => {
    const before = await balance()
    const created = await submit({
      generated_image_url: dataUrl(scene),
      generation_prompt: PROMPT,
      job_class_code: 'quick',
      reference_images: [{ url: dataUrl(scene) }],
    })
    expect(created.cost).toBe('0.0040')
    expect(credits(before) - credits(await balance())).toBe(4_000)
    const done = await settled(created.id ?? '')
    expect(done.judges?.map((j) => j.name)).toEqual([
      'resolution',
      'exposure',
      'sharpness',
      'prompt_adherence',
    ])
    expect(done.check_summary).toMatchObject({ job_class_code: 'quick' })
  })
})

describe('verdicts from the pixels', () => {
  it('fails gates on a tiny blank image and recommends regenerating', async () => {
    const done = await settled(
      (await submit({ generated_image_url: dataUrl(await solid(100, 80, '#777777')) })).id ?? '',
    )
    expect(contractErrors('Evaluation', done)).toEqual([])
    expect(done).toMatchObject({
      status_code: 'completed',
      overall_passed: false,
      primary_action_code: 'regenerate',
    })
    expect(done.gate_failures?.map((g) => g.gate_code).sort()).toEqual([
      'minimum_size',
      'not_blank',
    ])
    const issueCodes = (done.judges ?? []).flatMap((j) => (j.issues ?? []).map((i) => i.code))
    expect(issueCodes).toEqual(expect.arrayContaining(['too_small', 'blank_image', 'flat_tones']))
    expect(done.top_issues?.[0]).toMatch(/only 100×80 px|flat colour/)
    expect(done.weighted_pass_rate).toBeGreaterThanOrEqual(0)
    expect(done.weighted_pass_rate).toBeLessThan(0.7)
  })

  it('finds soft focus, wrong size and a prompt that was not followed', async () => {
    const blurred = await sharp(scene).blur(5).png().toBuffer()
    const done = await settled(
      (
        await submit({
          generated_image_url: dataUrl(blurred),
          generation_prompt: 'a black and white photo, no red',
          input_attributes: { width: 1024, height: 1024 },
        })
      ).id ?? '',
    )
    expect(done.status_code).toBe('completed')
    const judge = (name: string) => done.judges?.find((j) => j.name === name)
    expect(judge('sharpness')).toMatchObject({ passed: false, issues: [{ code: 'soft_focus' }] })
    expect(judge('resolution')).toMatchObject({
      passed: false,
      issues: [{ code: 'size_mismatch', severity: 'medium' }],
    })
    expect(judge('prompt_adherence')).toMatchObject({ passed: false })
    expect(judge('prompt_adherence')?.issues?.map((i) => i.code)).toEqual([
      'not_monochrome',
      'unwanted_colour',
    ])
    expect(done.overall_passed).toBe(false)
    // High-severity issues come first.
    expect(done.top_issues?.[0]).toMatch(/black and white|no red/)
  })

  it('compares with reference images', async () => {
    const similar = await settled(
      (
        await submit({
          generated_image_url: dataUrl(scene),
          reference_images: [
            { url: dataUrl(await solid(300, 300, '#ff00ff')), description: 'unrelated' },
            { url: dataUrl(scene) },
          ],
        })
      ).id ?? '',
    )
    const judge = similar.judges?.find((j) => j.name === 'reference_similarity')
    expect(judge).toMatchObject({ passed: true, issues: [], sub_points_evaluated: 2 })
    const different = await settled(
      (
        await submit({
          generated_image_url: dataUrl(scene),
          reference_images: [
            { asset_id: (await insertAsset(await solid(300, 300, '#ff00ff'))).id },
          ],
        })
      ).id ?? '',
    )
    expect(different.judges?.find((j) => j.name === 'reference_similarity')).toMatchObject({
      passed: false,
      issues: [{ code: 'reference_mismatch' }],
    })
  })
})

describe('failures', () => {
  it('fails a text file with invalid_media and refunds it', async () => {
    const before = await balance()
    const done = await settled(
      (await submit({ generated_image_url: `${imagesUrl}/notes.txt` })).id ?? '',
    )
    expect(contractErrors('Evaluation', done)).toEqual([])
    expect(done).toMatchObject({
      status_code: 'failed',
      failure_code: 'invalid_media',
      cost: '0.0000',
      judges: null,
      overall_passed: null,
      primary_action_code: 'resubmit',
      check_summary: { failure_code: 'invalid_media', failure_message: expect.any(String) },
    })
    expect(done.top_issues?.[0]).toMatch(/not an image/)
    expect(await balance()).toBe(before)
    const inline = await settled(
      (await submit({ generated_image_url: 'data:text/plain,hello' })).id ?? '',
    )
    expect(inline.failure_code).toBe('invalid_media')
  })

  it('fails an unreachable or missing URL with dispatch_failed', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const unreachable = await settled(
      (await submit({ generated_image_url: `http://127.0.0.1:${String(port)}/a.png` })).id ?? '',
    )
    expect(unreachable).toMatchObject({ status_code: 'failed', failure_code: 'dispatch_failed' })
    expect(unreachable.top_issues?.[0]).toMatch(/ECONNREFUSED/)
    const missing = await settled(
      (await submit({ generated_image_url: `${imagesUrl}/gone.png` })).id ?? '',
    )
    expect(missing).toMatchObject({ status_code: 'failed', failure_code: 'dispatch_failed' })
    expect(missing.top_issues?.[0]).toMatch(/HTTP 404/)
  })

  it('fails a URL that does not answer in time with timed_out', async () => {
    // The test sandbox's latency (20 ms) makes the evaluator wait 1 s for an image.
    const started = Date.now()
    const done = await settled(
      (await submit({ generated_image_url: `${imagesUrl}/slow.png` })).id ?? '',
    )
    expect(done).toMatchObject({ status_code: 'failed', failure_code: 'timed_out' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
  })

  it('fails with processing_failed when an asset’s bytes are gone', async () => {
    const asset = await insertAsset(await solid(300, 300, '#123456'), {
      sha256: 'f'.repeat(64),
    })
    const done = await settled((await submit({ asset_id: asset.id })).id ?? '')
    expect(done).toMatchObject({ status_code: 'failed', failure_code: 'processing_failed' })
  })
})

describe('submission rules', () => {
  it('needs exactly one of generated_image_url and asset_id, and a fetchable URL', async () => {
    const asset = await insertAsset(scene)
    for (const body of [
      {},
      { generated_image_url: dataUrl(scene), asset_id: asset.id },
      { generated_image_url: 'ftp://example.com/a.png' },
      { generated_image_url: dataUrl(scene), surprise: true },
      {
        generated_image_url: dataUrl(scene),
        reference_images: Array(9).fill({ url: dataUrl(scene) }),
      },
    ]) {
      const response = await sandbox.call('POST', '/v1/evaluations', { body })
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(422)
      expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.any(Array) })
    }
  })

  it('answers 404 for assets, runs and models it does not know, and 422 for a video asset', async () => {
    const unknown = '0190a000-0000-7000-8000-000000000000'
    const asset = await sandbox.call('POST', '/v1/evaluations', { body: { asset_id: unknown } })
    expect(asset.status).toBe(404)
    const run = await sandbox.call('POST', '/v1/evaluations', {
      body: { generated_image_url: dataUrl(scene), run_id: unknown },
    })
    expect(run.status).toBe(404)
    expect(run.body).toMatchObject({ code: 'RUN_NOT_FOUND' })
    const model = await sandbox.call('POST', '/v1/evaluations', {
      body: { generated_image_url: dataUrl(scene), model_id: unknown },
    })
    expect(model.status).toBe(404)
    const foreign = await insertAsset(scene, {}, sandbox.otherOrgId)
    const other = await sandbox.call('POST', '/v1/evaluations', { body: { asset_id: foreign.id } })
    expect(other.status).toBe(404)
    const video = await insertAsset(scene, { media_type: 'video', content_type: 'video/mp4' })
    const wrong = await sandbox.call('POST', '/v1/evaluations', { body: { asset_id: video.id } })
    expect(wrong.status).toBe(422)
    expect(wrong.body).toMatchObject({ errors: [{ field: 'asset_id', code: 'media_type' }] })
  })

  it('charges the organization and answers 402 INSUFFICIENT_CREDIT when the balance is too low', async () => {
    const original = await balance()
    const set = await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '0.005' } })
    expect(set.status).toBe(200)
    try {
      const refused = await sandbox.call('POST', '/v1/evaluations', {
        body: { generated_image_url: dataUrl(scene) },
      })
      expect(refused.status).toBe(402)
      expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_CREDIT' })
      expect(await balance()).toBe('0.005000')
      const quick = await submit({ generated_image_url: dataUrl(scene), job_class_code: 'quick' })
      expect(await balance()).toBe('0.001000')
      await settled(quick.id ?? '')
    } finally {
      await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: original } })
    }
  })

  it('keeps callback_url without calling it', async () => {
    let called = false
    const receiver = createServer((_request, response) => {
      called = true
      response.end()
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${String((receiver.address() as AddressInfo).port)}/hook`
      const done = await settled(
        (await submit({ generated_image_url: dataUrl(scene), callback_url: url })).id ?? '',
      )
      expect(done.callback_url).toBe(url)
      expect(called).toBe(false)
    } finally {
      await new Promise((resolve) => receiver.close(resolve))
    }
  })
})

describe('runs, models and re-evaluation', () => {
  it('embeds the run and the model on GET only, and takes the prompt and size from the run', async () => {
    const run = insertRun()
    const created = await submit({ generated_image_url: dataUrl(scene), run_id: run.id })
    expect(created).toMatchObject({
      run_id: run.id,
      model_id: run.model_id,
      target_type_code: 'model',
      generation_prompt: 'a lone red ball, vertical',
      input_attributes: { width: 480, height: 640 },
      links: { run: `/v1/runs/${run.id}` },
    })
    const done = await settled(created.id ?? '')
    expect(contractErrors('Evaluation', done)).toEqual([])
    expect(done.run).toMatchObject({ id: run.id })
    expect(done.model).toMatchObject({ id: run.model_id })
    const resolution = done.judges?.find((j) => j.name === 'resolution')
    expect(resolution?.issues?.map((i) => i.code)).toEqual(['size_mismatch'])
    const prompt = done.judges?.find((j) => j.name === 'prompt_adherence')
    expect(prompt?.issues?.map((i) => i.code)).toEqual(['wrong_orientation'])

    const list = await sandbox.call(
      'GET',
      `/v1/evaluations?q=${encodeURIComponent(`run_id=${run.id}`)}`,
    )
    const items = (list.body as { items: Evaluation[] }).items
    expect(items.map((e) => e.id)).toEqual([done.id])
    expect(items[0]).not.toHaveProperty('run')
    expect(items[0]).not.toHaveProperty('model')
    expect(items[0]).not.toHaveProperty('parent_evaluation')
  })

  it('chains re-evaluations: attempt numbers, superseded parents, the parent embedded', async () => {
    const first = await settled(
      (
        await submit({
          generated_image_url: dataUrl(scene),
          generation_prompt: PROMPT,
          evaluation_instructions: 'judge strictly',
        })
      ).id ?? '',
    )
    // The slow URL keeps it in flight for the whole fetch timeout (1 s).
    const pending = await submit({ generated_image_url: `${imagesUrl}/slow.png` })
    const early = await sandbox.call('POST', '/v1/evaluations', {
      body: { generated_image_url: dataUrl(scene), parent_evaluation_id: pending.id },
    })
    expect(early.status).toBe(422)
    expect(early.body).toMatchObject({ errors: [{ code: 'not_finished' }] })

    const second = await submit({
      generated_image_url: dataUrl(scene),
      parent_evaluation_id: first.id,
    })
    expect(second).toMatchObject({
      attempt_number: 2,
      parent_evaluation_id: first.id,
      generation_prompt: PROMPT,
      evaluation_instructions: 'judge strictly',
      links: { parent_evaluation: `/v1/evaluations/${first.id ?? ''}` },
    })
    const parent = (await sandbox.call('GET', `/v1/evaluations/${first.id ?? ''}`))
      .body as Evaluation
    expect(parent.superseded_at).not.toBeNull()
    expect(parent.updated_at).not.toBe(first.updated_at)
    expect(parent.links).toMatchObject({ superseded_by: `/v1/evaluations/${second.id ?? ''}` })

    const again = await sandbox.call('POST', '/v1/evaluations', {
      body: { generated_image_url: dataUrl(scene), parent_evaluation_id: first.id },
    })
    expect(again.status).toBe(422)
    expect(again.body).toMatchObject({
      errors: [{ field: 'parent_evaluation_id', code: 'superseded' }],
    })

    const done = await settled(second.id ?? '')
    expect(done.parent_evaluation).toMatchObject({
      id: first.id,
      superseded_at: parent.superseded_at,
    })
    expect(contractErrors('Evaluation', done)).toEqual([])
    const third = await submit({
      generated_image_url: dataUrl(scene),
      parent_evaluation_id: done.id,
    })
    expect(third.attempt_number).toBe(3)
    await settled(third.id ?? '')
    await settled(pending.id ?? '')

    const foreign = await sandbox.call('POST', '/v1/evaluations', {
      key: sandbox.keys.otherOrg,
      body: { generated_image_url: dataUrl(scene), parent_evaluation_id: third.id },
    })
    expect(foreign.status).toBe(404)
  })
})

describe('feedback', () => {
  let completed: Evaluation

  beforeAll(async () => {
    completed = await settled((await submit({ generated_image_url: dataUrl(scene) })).id ?? '')
  })

  const feedbackPath = '/v1/evaluations/{evaluation_id}/feedback' as const

  it('sets, replaces and clears the rating through the typed client; each call bumps updated_at', async () => {
    const id = completed.id ?? ''
    const params = { path: { evaluation_id: id } }
    const up = await client.patch(feedbackPath, {
      params,
      body: { is_positive: true, reason: 'Crisp and on brief.' },
    })
    expect(up).toMatchObject({ feedback_is_positive: true, feedback_reason: 'Crisp and on brief.' })
    expect(up.updated_at).not.toBe(completed.updated_at)

    const down = await client.patch(feedbackPath, { params, body: { is_positive: false } })
    expect(down).toMatchObject({ feedback_is_positive: false, feedback_reason: null })
    expect(Date.parse(down.updated_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(up.updated_at ?? ''),
    )

    const cleared = await client.patch(feedbackPath, {
      params,
      body: { is_positive: null, reason: 'dropped, as the rules say' },
    })
    expect(cleared).toMatchObject({ feedback_is_positive: null, feedback_reason: null })
    expect(contractErrors('Evaluation', cleared)).toEqual([])

    const again = await client.patch(feedbackPath, {
      params,
      body: { is_positive: true, reason: null },
    })
    expect(again).toMatchObject({ feedback_is_positive: true, feedback_reason: null })
    const read = await client.get('/v1/evaluations/{evaluation_id}', { params })
    expect(read).toMatchObject({ feedback_is_positive: true, feedback_reason: null })
  })

  it('rates evaluations with a run as well', async () => {
    const run = insertRun()
    const done = await settled(
      (await submit({ generated_image_url: dataUrl(scene), run_id: run.id })).id ?? '',
    )
    const rated = await client.patch(feedbackPath, {
      params: { path: { evaluation_id: done.id ?? '' } },
      body: { is_positive: false, reason: 'Wrong orientation.' },
    })
    expect(rated).toMatchObject({ run_id: run.id, feedback_is_positive: false })
  })

  it('validates the body: reason of 1 to 2000 characters, no extra properties', async () => {
    const params = { path: { evaluation_id: completed.id ?? '' } }
    const fits = await client.patch(feedbackPath, {
      params,
      body: { is_positive: true, reason: 'x'.repeat(2000) },
    })
    expect(fits.feedback_reason).toHaveLength(2000)
    for (const body of [
      { is_positive: true, reason: 'x'.repeat(2001) },
      { is_positive: true, reason: '' },
      { is_positive: true, stars: 5 },
      { reason: 'no rating' },
    ]) {
      const error = await client
        .patch(feedbackPath, { params, body: body as never })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ServiceError)
      expect(error).toMatchObject({ status: 422, code: 'VALIDATION_FAILED' })
    }
  })

  it('needs evaluations:edit, stays in the organization, and rates only completed evaluations', async () => {
    const params = { path: { evaluation_id: completed.id ?? '' } }
    const limited = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.limited })
    await expect(
      limited.patch(feedbackPath, { params, body: { is_positive: true } }),
    ).rejects.toMatchObject({ status: 403, code: 'PERMISSION_DENIED' })
    const other = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.otherOrg })
    await expect(
      other.patch(feedbackPath, { params, body: { is_positive: true } }),
    ).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' })
    await expect(other.get('/v1/evaluations/{evaluation_id}', { params })).rejects.toMatchObject({
      status: 404,
    })

    // The slow URL keeps it in flight for the whole fetch timeout (1 s).
    const pending = await submit({ generated_image_url: `${imagesUrl}/slow.png` })
    await expect(
      client.patch(feedbackPath, {
        params: { path: { evaluation_id: pending.id ?? '' } },
        body: { is_positive: true },
      }),
    ).rejects.toMatchObject({ status: 409, code: 'CONFLICT' })
    await settled(pending.id ?? '')
    const failed = await settled(
      (await submit({ generated_image_url: 'data:text/plain,not-an-image' })).id ?? '',
    )
    await expect(
      client.patch(feedbackPath, {
        params: { path: { evaluation_id: failed.id ?? '' } },
        body: { is_positive: false },
      }),
    ).rejects.toMatchObject({ status: 409 })
  })
})

describe('lists', () => {
  it('filters and sorts with q and sort_by, within the organization', async () => {
    const tag = `list-${String(Date.now())}`
    const good = await settled(
      (await submit({ generated_image_url: dataUrl(scene), client_ref: tag })).id ?? '',
    )
    const bad = await settled(
      (
        await submit({
          generated_image_url: dataUrl(await solid(64, 64, '#000000')),
          client_ref: tag,
        })
      ).id ?? '',
    )
    await client.patch('/v1/evaluations/{evaluation_id}/feedback', {
      params: { path: { evaluation_id: good.id ?? '' } },
      body: { is_positive: true },
    })
    const query = (q: string, sort = 'weighted_pass_rate:desc') =>
      client.get('/v1/evaluations', { params: { query: { q, sort_by: sort } } })

    const mine = await query(`client_ref=${tag}`)
    expect(mine.items.map((e) => e.id)).toEqual([good.id, bad.id])
    for (const item of mine.items) expect(contractErrors('Evaluation', item)).toEqual([])
    expect(
      (await query(`client_ref=${tag}`, 'weighted_pass_rate:asc')).items.map((e) => e.id),
    ).toEqual([bad.id, good.id])
    expect(
      (await query(`client_ref=${tag} and overall_passed=false`)).items.map((e) => e.id),
    ).toEqual([bad.id])
    expect(
      (await query(`client_ref=${tag} and feedback_is_positive=true`)).items.map((e) => e.id),
    ).toEqual([good.id])
    expect(
      (
        await query(
          `client_ref=${tag} and status_code=completed|failed and weighted_pass_rate>=0.7`,
        )
      ).items.map((e) => e.id),
    ).toEqual([good.id])

    const other = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.otherOrg })
    const theirs = await other.get('/v1/evaluations', {
      params: { query: { q: `client_ref=${tag}` } },
    })
    expect(theirs.items).toEqual([])
  })
})

describe('a persisted sandbox', () => {
  it('resumes evaluations left pending by a previous start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'atelier-evaluations-'))
    try {
      // A slow sandbox: the evaluation is still queued when it stops.
      const first = await startSandbox({ dataDir, latencyMs: 5_000, checkResponses: true })
      const response = await fetch(`${first.url}/v1/evaluations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${first.keys.admin}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ generated_image_url: dataUrl(scene), generation_prompt: PROMPT }),
      })
      expect(response.status).toBe(201)
      const { id } = (await response.json()) as Evaluation
      const closing = Date.now()
      await first.close()
      expect(Date.now() - closing).toBeLessThan(2_000)

      const second = await startTestSandbox({ dataDir, latencyMs: 10 })
      try {
        const done = await settled(id ?? '', second)
        expect(done).toMatchObject({ status_code: 'completed', overall_passed: true })
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Model, NodeRun, Page, Run, RunLog } from '../../src-shared/api'
import { parseCredits } from '../../src-main/sandbox/accounts'
import { decimalToMicro, MODEL_CATALOG } from '../../src-main/sandbox/models'
import { createServiceClient, newIdempotencyKey, ServiceError } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const HOUR = 60 * 60 * 1000
let sandbox: TestSandbox
/** Added to the real time: moving it ahead makes presigned URLs expire. */
let clockOffset = 0
const finishedEvents = new Map<string, number>()

beforeAll(async () => {
  sandbox = await startTestSandbox({ clock: () => Date.now() + clockOffset })
  sandbox.services.events.on('run.finished', (_orgId, run) => {
    finishedEvents.set(run.id, (finishedEvents.get(run.id) ?? 0) + 1)
  })
})

afterAll(async () => {
  await sandbox.close()
})

const isTerminal = (run: Run) => ['succeeded', 'failed', 'canceled'].includes(run.status_code)

async function dispatch(
  slug: string,
  body: Record<string, unknown>,
  options: { key?: string; headers?: Record<string, string> } = {},
) {
  return sandbox.call('POST', `/v1/models/${slug}/runs`, {
    body,
    ...(options.key ? { key: options.key } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  })
}

async function dispatchRun(slug: string, input: Record<string, unknown>, extra = {}) {
  const response = await dispatch(slug, { input, ...extra })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body as Run
}

async function getRun(id: string, key?: string): Promise<Run> {
  const response = await sandbox.call('GET', `/v1/runs/${id}`, key ? { key } : {})
  expect(response.status).toBe(200)
  return response.body as Run
}

/** Polls until the run is terminal (bounded). */
async function finished(id: string, key?: string): Promise<Run> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const run = await getRun(id, key)
    if (isTerminal(run)) return run
    if (Date.now() > deadline) throw new Error(`run ${id} still ${run.status_code}`)
    await new Promise((resolve) => setTimeout(resolve, 15))
  }
}

async function waitForStatus(id: string, status: Run['status_code']): Promise<Run> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const run = await getRun(id)
    if (run.status_code === status) return run
    if (isTerminal(run) || Date.now() > deadline) {
      throw new Error(`run ${id} is ${run.status_code}, never ${status}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

async function balanceMicro(): Promise<number> {
  const response = await sandbox.call('GET', '/v1/billing/balance')
  return parseCredits((response.body as { balance: string }).balance)
}

async function download(url: string): Promise<{ status: number; bytes: Buffer }> {
  const response = await fetch(url)
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) }
}

async function pngDataUrl(width: number, height: number): Promise<string> {
  const bytes = await sharp({
    create: { width, height, channels: 3, background: { r: 200, g: 40, b: 60 } },
  })
    .png()
    .toBuffer()
  return `data:image/png;base64,${bytes.toString('base64')}`
}

type FileOutput = { url: string; content_type: string; width: number; height: number }

function images(run: Run): FileOutput[] {
  return (run.output?.images as FileOutput[] | undefined) ?? []
}

describe('the model catalog', () => {
  it('lists the models without their embedded lists and finds one by slug', async () => {
    const list = await sandbox.call('GET', '/v1/models?limit=100')
    const page = list.body as Page<Model>
    expect(page.items).toHaveLength(MODEL_CATALOG.length)
    for (const model of page.items) expect(model).not.toHaveProperty('inputs')

    const bySlug = await sandbox.call(
      'GET',
      `/v1/models?q=${encodeURIComponent('slug=atelier/text-to-image')}`,
    )
    const [model] = (bySlug.body as Page<Model>).items
    expect(model?.slug).toBe('atelier/text-to-image')

    const full = await sandbox.call('GET', `/v1/models/${model?.id ?? ''}`)
    expect(full.status).toBe(200)
    const detail = full.body as Model
    expect(detail.inputs?.map((input) => input.name)).toContain('prompt')
    expect(detail.outputs?.length).toBeGreaterThan(0)
    expect(detail.pricing?.length).toBeGreaterThan(0)
    expect(detail.faq_entries?.length).toBeGreaterThan(0)
    expect(detail.examples?.length).toBeGreaterThan(0)
    expect(detail.related_links?.length).toBeGreaterThan(0)
  })

  it('serves the embedded lists per model and across models with `any`', async () => {
    const model = MODEL_CATALOG[0]
    if (!model) throw new Error('empty catalog')
    const inputs = await sandbox.call('GET', `/v1/models/${model.id}/inputs`)
    expect((inputs.body as Page<{ name: string }>).items.map((input) => input.name)).toEqual(
      [...model.inputs].sort((a, b) => a.sort_order - b.sort_order).map((input) => input.name),
    )
    const prompts = await sandbox.call(
      'GET',
      `/v1/models/any/inputs?q=${encodeURIComponent('name=prompt')}&limit=100`,
    )
    const promptModels = (prompts.body as Page<{ model_id: string }>).items.map((i) => i.model_id)
    expect(new Set(promptModels).size).toBe(
      MODEL_CATALOG.filter((m) => m.inputs.some((i) => i.name === 'prompt')).length,
    )
    for (const [path, key] of [
      ['outputs', 'outputs'],
      ['examples', 'examples'],
      ['pricing', 'pricing'],
      ['faq', 'faq_entries'],
      ['related-links', 'related_links'],
    ] as const) {
      const all = await sandbox.call('GET', `/v1/models/any/${path}?limit=500`)
      expect(all.status).toBe(200)
      const expected = MODEL_CATALOG.reduce((sum, m) => sum + m[key].length, 0)
      expect((all.body as Page<unknown>).items).toHaveLength(expected)
      const one = await sandbox.call('GET', `/v1/models/${model.id}/${path}`)
      expect((one.body as Page<unknown>).items).toHaveLength(model[key].length)
    }
    const scaled = await sandbox.call(
      'GET',
      `/v1/models/any/pricing?q=${encodeURIComponent('rule_effect_code=multiply')}`,
    )
    expect((scaled.body as Page<{ match_value: string }>).items).toEqual([
      expect.objectContaining({ match_value: '4' }),
    ])
  })

  it('answers 404 for an unknown model and serves creators and families', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000'
    expect((await sandbox.call('GET', `/v1/models/${unknown}`)).status).toBe(404)
    expect((await sandbox.call('GET', `/v1/models/${unknown}/inputs`)).status).toBe(404)
    expect((await sandbox.call('GET', `/v1/models/${unknown}/stats`)).status).toBe(404)

    const creators = (await sandbox.call('GET', '/v1/model-creators')).body as Page<{ id: string }>
    expect(creators.items.length).toBeGreaterThan(0)
    const creator = await sandbox.call('GET', `/v1/model-creators/${creators.items[0]?.id ?? ''}`)
    expect(creator.status).toBe(200)
    const families = (await sandbox.call('GET', '/v1/model-families?q=slug~motion')).body as Page<{
      id: string
      slug: string
    }>
    expect(families.items.map((family) => family.slug)).toEqual(['atelier-motion'])
    const family = await sandbox.call('GET', `/v1/model-families/${families.items[0]?.id ?? ''}`)
    expect(family.body).toMatchObject({ slug: 'atelier-motion' })
    expect((await sandbox.call('GET', `/v1/model-families/${unknown}`)).status).toBe(404)
  })
})

describe('dispatching every model', () => {
  it('runs each catalog model to the right terminal state with real, downloadable outputs', async () => {
    const first = await finished(
      (
        await dispatchRun('atelier/text-to-image', {
          prompt: 'a teal fox',
          width: 96,
          height: 64,
          num_images: 2,
          seed: 5,
        })
      ).id,
    )
    expect(first).toMatchObject({ status_code: 'succeeded', progress: 1, failure_code: null })
    expect(images(first)).toHaveLength(2)
    // The sandbox's own presigned output URL is a valid image input of the next runs.
    const ownUrl = images(first)[0]?.url ?? ''
    const small = await pngDataUrl(40, 30)

    const cases: [slug: string, input: Record<string, unknown>][] = [
      ['atelier/image-to-image', { image: ownUrl, prompt: 'gold', strength: 0.4 }],
      ['atelier/upscale', { image: ownUrl, scale: 2 }],
      ['atelier/remove-background', { image: small }],
      ['atelier/caption', { image: small, detail: 'detailed' }],
      ['atelier/text-to-video', { prompt: 'blue drift', width: 64, height: 64, fps: 4 }],
      ['atelier/slow-render', { prompt: 'orange dusk', width: 64, height: 64 }],
      ['atelier/flaky', { failure_rate: 0 }],
    ]
    const runs = await Promise.all(
      cases.map(async ([slug, input]) => finished((await dispatchRun(slug, input)).id)),
    )
    const bySlug = new Map(runs.map((run) => [run.model_slug, run]))
    for (const run of runs) {
      expect(run.status_code, `${run.model_slug}: ${run.failure_message ?? ''}`).toBe('succeeded')
      expect(run.cost).toMatch(/^\d+\.\d{4,6}$/)
      expect(run.output).toMatchObject({ seed: expect.any(Number) })
    }
    expect(images(bySlug.get('atelier/image-to-image') as Run)[0]).toMatchObject({
      width: 96,
      height: 64,
    })
    expect(images(bySlug.get('atelier/upscale') as Run)[0]).toMatchObject({
      width: 192,
      height: 128,
    })
    expect(bySlug.get('atelier/caption')?.output?.text).toEqual(expect.stringContaining('40×30'))

    const files = [...runs, first].flatMap((run) => [
      ...images(run),
      ...(run.output?.video ? [run.output.video as FileOutput] : []),
    ])
    expect(files.length).toBeGreaterThanOrEqual(8)
    for (const file of files) {
      const { status, bytes } = await download(file.url)
      expect(status).toBe(200)
      const metadata = await sharp(bytes).metadata()
      expect(metadata.format).toBe(file.content_type === 'image/webp' ? 'webp' : 'png')
      expect([metadata.width, metadata.height]).toEqual([file.width, file.height])
    }
    const video = bySlug.get('atelier/text-to-video')?.output?.video as FileOutput & {
      frames: number
    }
    expect(video).toMatchObject({ content_type: 'image/webp', frames: 4 })
  })

  it('fails a flaky run at inference and charges nothing for it', async () => {
    const before = await balanceMicro()
    const run = await finished((await dispatchRun('atelier/flaky', { failure_rate: 1 })).id)
    expect(run).toMatchObject({
      status_code: 'failed',
      failure_code: 'MODEL_ERROR',
      failure_stage: 'inference',
      output: null,
      cost: '0.0000',
    })
    expect(await balanceMicro()).toBe(before)
  })

  it('keeps the seed it used and reproduces the same bytes with it', async () => {
    const run = await finished((await dispatchRun('atelier/flaky', { failure_rate: 0 })).id)
    const seed = run.output?.seed as number
    expect(Number.isSafeInteger(seed)).toBe(true)
    const nodeRuns = (await sandbox.call('GET', `/v1/runs/${run.id}/node-runs`))
      .body as Page<NodeRun>
    expect(nodeRuns.items[0]?.input).toMatchObject({ seed })
    const again = await finished((await dispatchRun('atelier/flaky', { failure_rate: 0, seed })).id)
    const a = await download(images(run)[0]?.url ?? '')
    const b = await download(images(again)[0]?.url ?? '')
    expect(a.bytes.equals(b.bytes)).toBe(true)
  })

  it('loads image inputs from http(s) URLs and from asset ids', async () => {
    const picture = await sharp({
      create: { width: 24, height: 12, channels: 3, background: { r: 10, g: 90, b: 200 } },
    })
      .png()
      .toBuffer()
    const server = createServer((request, response) => {
      if (request.url === '/picture.png') {
        response.writeHead(200, { 'Content-Type': 'image/png' }).end(picture)
      } else {
        response.writeHead(404).end()
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const fetched = await finished(
        (await dispatchRun('atelier/upscale', { image: `http://127.0.0.1:${port}/picture.png` }))
          .id,
      )
      expect(images(fetched)[0]).toMatchObject({ width: 48, height: 24 })
      const missing = await finished(
        (await dispatchRun('atelier/upscale', { image: `http://127.0.0.1:${port}/gone.png` })).id,
      )
      expect(missing).toMatchObject({ status_code: 'failed', failure_code: 'INPUT_FETCH_FAILED' })
      expect(missing.failure_message).toContain('HTTP 404')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }

    // An asset is found by id in the organization and read from the blob store.
    const { sha256, size } = sandbox.services.blobs.put(picture)
    const now = sandbox.services.store.now()
    const asset = sandbox.services.store.insert('assets', sandbox.orgId, {
      id: sandbox.services.store.newId(),
      sha256,
      size_bytes: size,
      content_type: 'image/png',
      created_at: now,
      updated_at: now,
    })
    const fromAsset = await finished((await dispatchRun('atelier/caption', { image: asset.id })).id)
    expect(fromAsset.output?.text).toEqual(expect.stringContaining('24×12'))
    const notOurs = await sandbox.call('POST', '/v1/models/atelier/caption/runs', {
      key: sandbox.keys.otherOrg,
      body: { input: { image: asset.id } },
    })
    const foreign = await finished((notOurs.body as Run).id, sandbox.keys.otherOrg)
    expect(foreign).toMatchObject({ status_code: 'failed', failure_code: 'INPUT_FETCH_FAILED' })
    expect(foreign.failure_message).toContain('no asset')
  })

  it('answers 404 for an unknown model', async () => {
    const response = await dispatch('acme/nothing', { input: {} })
    expect(response.status).toBe(404)
    expect(response.body).toMatchObject({ code: 'NOT_FOUND' })
    expect((response.body as { message: string }).message).toContain('acme/nothing')
  })

  it('works through the typed service client', async () => {
    const client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
    const created = await client.post('/v1/models/{provider}/{model}/runs', {
      params: {
        path: { provider: 'atelier', model: 'caption' },
        header: { 'Idempotency-Key': newIdempotencyKey() },
      },
      body: { input: { image: await pngDataUrl(8, 8) }, metadata: { via: 'client' } },
    })
    expect(created.status_code).toBe('queued')
    const run = await finished(created.id)
    const read = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: run.id } } })
    expect(read).toMatchObject({ status_code: 'succeeded', metadata: { via: 'client' } })
    const error = await client
      .get('/v1/runs/{run_id}', {
        params: { path: { run_id: '00000000-0000-4000-8000-000000000000' } },
      })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 404, code: 'RUN_NOT_FOUND' })
  })
})

describe('run records', () => {
  it('follows queued → starting → running → succeeded with timestamps', async () => {
    const queued = await dispatchRun('atelier/slow-render', {
      prompt: 'slow',
      width: 64,
      height: 64,
    })
    expect(queued).toMatchObject({
      status_code: 'queued',
      progress: 0,
      target_type_code: 'model',
      source_code: 'api',
      model_slug: 'atelier/slow-render',
      cost: null,
      started_at: null,
      completed_at: null,
      duration_ms: null,
    })
    expect(queued.queued_at).toBe(queued.created_at)
    expect(queued.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab]/)
    const running = await waitForStatus(queued.id, 'running')
    expect(running.started_at).not.toBeNull()
    const done = await finished(queued.id)
    expect(done.status_code).toBe('succeeded')
    expect(Date.parse(done.completed_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(done.started_at ?? ''),
    )
    expect(done.duration_ms).toBe(Date.parse(done.completed_at ?? '') - Date.parse(done.created_at))
    expect(done.created_at).toMatch(/\+00:00$/)
  })

  it('echoes metadata verbatim and lets PATCH replace it (and nothing else)', async () => {
    const metadata = { intent: 'ü-ñ ✓', nested: { list: [1, 'two', null, { deep: true }] }, n: 1.5 }
    const run = await dispatchRun(
      'atelier/caption',
      { image: await pngDataUrl(4, 4) },
      { metadata },
    )
    expect(run.metadata).toEqual(metadata)
    expect(JSON.stringify(run.metadata)).toBe(JSON.stringify(metadata))
    const patched = await sandbox.call('PATCH', `/v1/runs/${run.id}`, {
      body: { metadata: { label: 'kept' } },
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ id: run.id, metadata: { label: 'kept' } })
    const other = await sandbox.call('PATCH', `/v1/runs/${run.id}`, {
      body: { metadata: null, status_code: 'failed' },
    })
    expect(other.status).toBe(422)
    const cleared = await sandbox.call('PATCH', `/v1/runs/${run.id}`, { body: { metadata: null } })
    expect((cleared.body as Run).metadata).toBeNull()
    expect((await finished(run.id)).metadata).toBeNull()
  })

  it('records logs at every stage, the model’s own among them, and one node run', async () => {
    const run = await finished(
      (await dispatchRun('atelier/text-to-image', { prompt: 'red', width: 64, height: 64 })).id,
    )
    const logs = (await sandbox.call('GET', `/v1/runs/${run.id}/logs?limit=100`))
      .body as Page<RunLog>
    const messages = logs.items.map((log) => log.message)
    expect(messages[0]).toMatch(/^Queued/)
    expect(messages.some((m) => m.includes('picked up'))).toBe(true)
    expect(messages.some((m) => m.includes('Rendered 1 PNG image'))).toBe(true)
    expect(messages.at(-1)).toMatch(/succeeded/)
    expect(new Set(logs.items.map((log) => log.level_code))).toEqual(new Set(['info', 'debug']))
    const times = logs.items.map((log) => log.created_at)
    expect([...times].sort()).toEqual(times)

    const nodeRuns = (await sandbox.call('GET', `/v1/runs/${run.id}/node-runs`))
      .body as Page<NodeRun>
    expect(nodeRuns.items).toHaveLength(1)
    const [node] = nodeRuns.items
    expect(node).toMatchObject({ run_id: run.id, status_code: 'succeeded', cost: run.cost })
    const modelLogs = logs.items.filter((log) => log.node_run_id !== null)
    expect(modelLogs.length).toBeGreaterThan(0)
    expect(new Set(modelLogs.map((log) => log.node_run_id))).toEqual(new Set([node?.id]))

    const debug = await sandbox.call('GET', `/v1/runs/${run.id}/logs?q=level_code%3Ddebug`)
    expect((debug.body as Page<RunLog>).items.every((log) => log.level_code === 'debug')).toBe(true)
  })

  it('lets an invalid input through and fails the run at preprocess with a plain message', async () => {
    const before = await balanceMicro()
    const response = await dispatch('atelier/text-to-image', {
      input: { width: 5, colour: 'red' },
    })
    expect(response.status).toBe(201)
    const run = await finished((response.body as Run).id)
    expect(run).toMatchObject({
      status_code: 'failed',
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
      cost: '0.0000',
      output: null,
    })
    expect(run.failure_message).toContain('Prompt is required')
    expect(run.failure_message).toContain('colour')
    expect(run.failure_message).toContain('Width must be between 64 and 2048')
    expect(await balanceMicro()).toBe(before)
    const logs = (await sandbox.call('GET', `/v1/runs/${run.id}/logs`)).body as Page<RunLog>
    expect(logs.items.some((log) => log.level_code === 'error')).toBe(true)
    const nodes = (await sandbox.call('GET', `/v1/runs/${run.id}/node-runs`)).body as Page<NodeRun>
    expect(nodes.items[0]).toMatchObject({
      status_code: 'failed',
      failure_code: 'INPUT_VALIDATION_FAILED',
    })
  })

  it('fails an image input it cannot fetch with INPUT_FETCH_FAILED', async () => {
    const run = await finished(
      (await dispatchRun('atelier/upscale', { image: `${sandbox.url}/_storage/blobs/nope` })).id,
    )
    expect(run).toMatchObject({ status_code: 'failed', failure_code: 'INPUT_FETCH_FAILED' })
  })
})

describe('credits', () => {
  it('takes exactly the cost of a run from the balance', async () => {
    const before = await balanceMicro()
    const run = await finished(
      (
        await dispatchRun('atelier/text-to-image', {
          prompt: 'priced',
          width: 640,
          height: 480,
          seed: 1,
        })
      ).id,
    )
    expect(run.estimated_cost).toBe(run.cost)
    expect(before - (await balanceMicro())).toBe(decimalToMicro(run.cost ?? ''))
    expect(decimalToMicro(run.cost ?? '')).toBe(Math.round(0.04 * 0.3072 * 1e6))
  })

  it('answers 402 INSUFFICIENT_CREDIT with the balance and the price, and creates nothing', async () => {
    const before = ((await sandbox.call('GET', '/v1/runs?limit=500')).body as Page<Run>).items
      .length
    const set = await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '0.001' } })
    expect(set.status).toBe(200)
    try {
      const response = await dispatch('atelier/text-to-image', { input: { prompt: 'too dear' } })
      expect(response.status).toBe(402)
      expect(response.body).toMatchObject({ code: 'INSUFFICIENT_CREDIT' })
      const message = (response.body as { message: string }).message
      expect(message).toContain('0.001000')
      expect(message).toContain('0.010486')
      const after = ((await sandbox.call('GET', '/v1/runs?limit=500')).body as Page<Run>).items
      expect(after).toHaveLength(before)
    } finally {
      await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '1000' } })
    }
  })
})

describe('idempotency', () => {
  it('replays the first run for the same key and body, without a second charge', async () => {
    const key = newIdempotencyKey()
    const body = { input: { prompt: 'once', width: 64, height: 64 }, metadata: { a: 1, b: 2 } }
    const first = await dispatch('atelier/text-to-image', body, {
      headers: { 'Idempotency-Key': key },
    })
    expect(first.status).toBe(201)
    const run = await finished((first.body as Run).id)
    const balance = await balanceMicro()
    // Same body, keys in another order: still the same request.
    const replay = await dispatch(
      'atelier/text-to-image',
      { metadata: { b: 2, a: 1 }, input: { height: 64, width: 64, prompt: 'once' } },
      { headers: { 'Idempotency-Key': key } },
    )
    expect(replay.status).toBe(200)
    expect(replay.body).toMatchObject({
      id: run.id,
      status_code: 'succeeded',
      idempotency_key: key,
    })
    expect(await balanceMicro()).toBe(balance)
    const listed = await sandbox.call(
      'GET',
      `/v1/runs?q=${encodeURIComponent(`idempotency_key=${key}`)}`,
    )
    expect((listed.body as Page<Run>).items).toHaveLength(1)
  })

  it('answers 409 IDEMPOTENCY_KEY_REUSED for the same key with another body or path', async () => {
    const key = newIdempotencyKey()
    const headers = { 'Idempotency-Key': key }
    const first = await dispatch(
      'atelier/caption',
      { input: { image: await pngDataUrl(4, 4) } },
      {
        headers,
      },
    )
    expect(first.status).toBe(201)
    const other = await dispatch(
      'atelier/caption',
      { input: { image: await pngDataUrl(5, 5) } },
      { headers },
    )
    expect(other.status).toBe(409)
    expect(other.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' })
    const otherModel = await dispatch(
      'atelier/upscale',
      { input: { image: await pngDataUrl(4, 4) } },
      { headers },
    )
    expect(otherModel.status).toBe(409)
    const rerun = await sandbox.call('POST', `/v1/runs/${(first.body as Run).id}/rerun`, {
      headers,
    })
    expect(rerun.status).toBe(409)
    // Keys belong to one organization: another one may use the same key freely.
    const elsewhere = await dispatch(
      'atelier/caption',
      { input: { image: await pngDataUrl(4, 4) } },
      { headers, key: sandbox.keys.otherOrg },
    )
    expect(elsewhere.status).toBe(201)
    await finished((first.body as Run).id)
  })
})

describe('cancel and re-run', () => {
  it('cancels a running run: refunded, 409 the second time, node run and logs say so', async () => {
    const before = await balanceMicro()
    const run = await dispatchRun('atelier/slow-render', {
      prompt: 'long',
      width: 1024,
      height: 1024,
    })
    await waitForStatus(run.id, 'running')
    const canceled = await sandbox.call('POST', `/v1/runs/${run.id}/cancel`)
    expect(canceled.status).toBe(200)
    expect(canceled.body).toMatchObject({
      id: run.id,
      status_code: 'canceled',
      cost: '0.0000',
      output: null,
    })
    expect(await balanceMicro()).toBe(before)
    const again = await sandbox.call('POST', `/v1/runs/${run.id}/cancel`)
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ code: 'CONFLICT' })
    const nodes = (await sandbox.call('GET', `/v1/runs/${run.id}/node-runs`)).body as Page<NodeRun>
    expect(nodes.items.map((node) => node.status_code)).toEqual(['canceled'])
    const logs = (await sandbox.call('GET', `/v1/runs/${run.id}/logs?limit=100`))
      .body as Page<RunLog>
    expect(logs.items.at(-1)).toMatchObject({ level_code: 'warning' })
    expect(logs.items.at(-1)?.message).toContain('canceled while running')
    // The work it would have finished must not bring it back to life.
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect((await getRun(run.id)).status_code).toBe('canceled')
    expect(finishedEvents.get(run.id)).toBe(1)
  })

  it('cancels a queued run straight away', async () => {
    const run = await dispatchRun('atelier/slow-render', { prompt: 'q', width: 64, height: 64 })
    const canceled = await sandbox.call('POST', `/v1/runs/${run.id}/cancel`)
    expect(canceled.body).toMatchObject({ status_code: 'canceled', started_at: null })
    const nodes = (await sandbox.call('GET', `/v1/runs/${run.id}/node-runs`)).body as Page<NodeRun>
    expect(nodes.items).toHaveLength(0)
  })

  it('re-runs with the same input, a parent link, overrides and Idempotency-Key', async () => {
    const original = await finished(
      (
        await dispatchRun(
          'atelier/text-to-image',
          { prompt: 'again', width: 64, height: 64 },
          { metadata: { v: 1 }, callback_url: 'http://127.0.0.1:9/hook' },
        )
      ).id,
    )
    const key = newIdempotencyKey()
    const rerun = await sandbox.call('POST', `/v1/runs/${original.id}/rerun`, {
      body: { metadata: { v: 2 } },
      headers: { 'Idempotency-Key': key },
    })
    expect(rerun.status).toBe(201)
    const created = rerun.body as Run
    expect(created).toMatchObject({
      parent_run_id: original.id,
      source_code: 'rerun',
      input: original.input,
      metadata: { v: 2 },
      callback_url: 'http://127.0.0.1:9/hook',
      model_id: original.model_id,
      status_code: 'queued',
    })
    expect(created.id).not.toBe(original.id)
    const replay = await sandbox.call('POST', `/v1/runs/${original.id}/rerun`, {
      body: { metadata: { v: 2 } },
      headers: { 'Idempotency-Key': key },
    })
    expect(replay.status).toBe(200)
    expect((replay.body as Run).id).toBe(created.id)
    const conflict = await sandbox.call('POST', `/v1/runs/${original.id}/rerun`, {
      body: { metadata: { v: 3 } },
      headers: { 'Idempotency-Key': key },
    })
    expect(conflict.status).toBe(409)
    const plain = await sandbox.call('POST', `/v1/runs/${original.id}/rerun`)
    expect(plain.status).toBe(201)
    expect(plain.body).toMatchObject({ metadata: { v: 1 }, parent_run_id: original.id })
    expect((await finished(created.id)).status_code).toBe('succeeded')
    await finished((plain.body as Run).id)
  })
})

describe('presigned output URLs', () => {
  it('expire, and every read of the run mints a fresh one', async () => {
    const run = await finished(
      (await dispatchRun('atelier/text-to-image', { prompt: 'x', width: 64, height: 64 })).id,
    )
    const file = images(run)[0] as FileOutput & { expires_at: string }
    expect(Date.parse(file.expires_at)).toBeGreaterThan(Date.now())
    expect((await download(file.url)).status).toBe(200)
    clockOffset = 2 * HOUR
    try {
      const expired = await fetch(file.url)
      expect(expired.status).toBe(403)
      expect(await expired.json()).toMatchObject({ code: 'URL_EXPIRED' })
      const fresh = images(await getRun(run.id))[0]
      expect(fresh?.url).not.toBe(file.url)
      expect((await download(fresh?.url ?? '')).status).toBe(200)
      // The signature's first digit changed to another: '0' for '0' would leave it as it was
      // (one URL in sixteen), and the test would pass a valid link off as tampered.
      const tampered = (fresh?.url ?? '').replace(
        /signature=([0-9a-f])/,
        (_, digit: string) => `signature=${digit === '0' ? '1' : '0'}`,
      )
      expect((await fetch(tampered)).status).toBe(403)
    } finally {
      clockOffset = 0
    }
  })
})

describe('searching runs', () => {
  it('filters by status and model, sorts and pages with cursors', async () => {
    const flaky = await Promise.all(
      [0, 1, 0].map(async (rate) =>
        finished((await dispatchRun('atelier/flaky', { failure_rate: rate })).id),
      ),
    )
    const failed = await sandbox.call(
      'GET',
      `/v1/runs?q=${encodeURIComponent('status_code=failed and model_slug=atelier/flaky')}&limit=500`,
    )
    const failedIds = (failed.body as Page<Run>).items.map((run) => run.id)
    expect(failedIds).toContain(flaky[1]?.id)
    expect(failedIds).not.toContain(flaky[0]?.id)

    const since = flaky[0]?.created_at ?? ''
    const q = encodeURIComponent(`model_slug=atelier/flaky and created_at>=${since}`)
    const seen: string[] = []
    let pq: string | null = null
    for (let page = 0; page < 10; page++) {
      const response = await sandbox.call(
        'GET',
        `/v1/runs?q=${q}&sort_by=created_at:asc&limit=2${pq ? `&pq=${encodeURIComponent(pq)}` : ''}`,
      )
      const body = response.body as Page<Run>
      seen.push(...body.items.map((run) => run.id))
      pq = body.next
      if (!pq) break
    }
    expect(seen).toEqual(flaky.map((run) => run.id))

    const projected = await sandbox.call('GET', '/v1/runs?fields=id,status_code&limit=3')
    for (const item of (projected.body as Page<Record<string, unknown>>).items) {
      expect(Object.keys(item).sort()).toEqual(['id', 'status_code'])
    }
    const bad = await sandbox.call('GET', '/v1/runs?q=_sandbox%3D1')
    expect(bad.status).toBe(400)
  })

  it('computes model stats from the organization’s runs', async () => {
    const model = MODEL_CATALOG.find((m) => m.slug === 'atelier/flaky')
    const stats = await sandbox.call('GET', `/v1/models/${model?.id ?? ''}/stats`)
    expect(stats.status).toBe(200)
    const body = stats.body as {
      run_count: number
      success_rate: number
      p50_duration_ms: number
      p95_duration_ms: number
    }
    expect(body.run_count).toBeGreaterThanOrEqual(5)
    expect(body.success_rate).toBeGreaterThan(0)
    expect(body.success_rate).toBeLessThan(1)
    expect(body.p95_duration_ms).toBeGreaterThanOrEqual(body.p50_duration_ms)
    const other = await sandbox.call('GET', `/v1/models/${model?.id ?? ''}/stats`, {
      key: sandbox.keys.otherOrg,
    })
    expect(other.body).toMatchObject({ run_count: 0, success_rate: null, p50_duration_ms: null })
  })
})

describe('organizations', () => {
  it('never shows a run to another organization', async () => {
    const run = await finished((await dispatchRun('atelier/flaky', { failure_rate: 0 })).id)
    const key = sandbox.keys.otherOrg
    for (const [method, path, body] of [
      ['GET', `/v1/runs/${run.id}`, undefined],
      ['GET', `/v1/runs/${run.id}/logs`, undefined],
      ['GET', `/v1/runs/${run.id}/node-runs`, undefined],
      ['POST', `/v1/runs/${run.id}/cancel`, undefined],
      ['POST', `/v1/runs/${run.id}/rerun`, undefined],
      ['PATCH', `/v1/runs/${run.id}`, { metadata: null }],
    ] as const) {
      const response = await sandbox.call(method, path, { key, ...(body ? { body } : {}) })
      expect(response.status, `${method} ${path}`).toBe(404)
      expect(response.body).toMatchObject({ code: 'RUN_NOT_FOUND' })
    }
    const list = await sandbox.call('GET', '/v1/runs?limit=500', { key })
    expect((list.body as Page<Run>).items.map((r) => r.id)).not.toContain(run.id)
    const team = await sandbox.call('GET', `/v1/runs/${run.id}`, {
      headers: { 'X-Organization-Id': sandbox.teamOrgId },
    })
    expect(team.status).toBe(404)
  })
})

describe('run.finished', () => {
  it('fired exactly once for every run that finished', async () => {
    const all: Run[] = []
    let pq: string | null = null
    for (let page = 0; page < 20; page++) {
      const response = await sandbox.call(
        'GET',
        `/v1/runs?limit=500${pq ? `&pq=${encodeURIComponent(pq)}` : ''}`,
      )
      const body = response.body as Page<Run>
      all.push(...body.items)
      pq = body.next
      if (!pq) break
    }
    const done = await Promise.all(all.map((run) => finished(run.id)))
    expect(done.length).toBeGreaterThan(20)
    for (const run of done) expect(finishedEvents.get(run.id), run.id).toBe(1)
  })
})

describe('a persisted sandbox', () => {
  it('fails runs left unfinished by the previous process, refunds them and says so once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'atelier-sandbox-runs-'))
    try {
      const first = await startTestSandbox({ dataDir, latencyMs: 2_000 })
      const start = await first.call('GET', '/v1/billing/balance')
      const response = await first.call('POST', '/v1/models/atelier/slow-render/runs', {
        body: { input: { prompt: 'interrupted', width: 64, height: 64 } },
      })
      const run = response.body as Run
      await first.close()

      const second = await startTestSandbox({ dataDir })
      const events: Run[] = []
      second.services.events.on('run.finished', (_orgId, finishedRun) => events.push(finishedRun))
      try {
        let after: Run | undefined
        for (let i = 0; i < 100; i++) {
          after = (await second.call('GET', `/v1/runs/${run.id}`)).body as Run
          if (after.status_code === 'failed') break
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        expect(after).toMatchObject({
          status_code: 'failed',
          failure_code: 'SANDBOX_RESTARTED',
          cost: '0.0000',
        })
        const balance = (await second.call('GET', '/v1/billing/balance')).body
        expect(balance).toMatchObject({ balance: (start.body as { balance: string }).balance })
        expect(events.map((event) => event.id)).toEqual([run.id])
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

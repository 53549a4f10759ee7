import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Asset, AssetFolder, Evaluation, FlowNode, Run } from '../../src-shared/api'
import {
  BUILTIN_CODES,
  BuiltinRunner,
  EVALUATION_PRICE_MICRO,
  isMediaRef,
  type BuiltinRunnerOptions,
} from '../../src-main/executor/builtins'
import type { MediaRef, NodeEvent, NodeOutcome, PortValue } from '../../src-main/executor/types'
import { MediaStore } from '../../src-main/media-store'
import { createServiceClient, type RequestLog, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

let sandbox: TestSandbox
let home: string
let media: MediaStore
let service: ServiceClient
let runner: BuiltinRunner
/** Every request the service client made, and every storage PUT, in order. */
const requests: RequestLog[] = []
const storagePuts: string[] = []

const countingFetch: typeof fetch = (input, init) => {
  if (init?.method === 'PUT')
    storagePuts.push(input instanceof Request ? input.url : input.toString())
  return fetch(input, init)
}

function makeRunner(options: Partial<BuiltinRunnerOptions> = {}): BuiltinRunner {
  return new BuiltinRunner({
    media,
    service,
    fetch: countingFetch,
    polling: { initialMs: 20, factor: 1.5, maxMs: 100, timeoutMs: 20_000 },
    ...options,
  })
}

beforeAll(async () => {
  sandbox = await startTestSandbox()
  home = mkdtempSync(join(tmpdir(), 'atelier-builtins-'))
  media = new MediaStore({ dir: join(home, 'media'), maxBytes: 256 * 1024 * 1024 })
  service = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    log: (entry) => requests.push(entry),
  })
  runner = makeRunner()
})

afterAll(async () => {
  await media.close()
  await sandbox.close()
  rmSync(home, { recursive: true, force: true })
})

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

function nodeOf(code: string, config: Record<string, unknown> = {}): FlowNode {
  const now = new Date().toISOString()
  return {
    id: randomUUID(),
    flow_id: randomUUID(),
    slug: code.replaceAll('_', '-'),
    label: `My ${code}`,
    subtitle: null,
    type_code: 'builtin',
    x: 0,
    y: 0,
    width: 240,
    config,
    collapsed: false,
    model_id: null,
    builtin_node_code: code,
    wfengine_workflow_id: null,
    sub_flow_id: null,
    created_at: now,
    updated_at: now,
    inputs: [],
    outputs: [],
  }
}

interface RunOptions {
  node?: FlowNode
  config?: Record<string, unknown>
  attempt?: number
  flowRunId?: string
  signal?: AbortSignal
  onEvent?: (event: NodeEvent) => void
  with?: BuiltinRunner
}

async function run(
  code: string,
  inputs: Record<string, PortValue>,
  options: RunOptions = {},
): Promise<NodeOutcome & { events: NodeEvent[] }> {
  const events: NodeEvent[] = []
  const outcome = await (options.with ?? runner).run({
    flowRunId: options.flowRunId ?? randomUUID(),
    node: options.node ?? nodeOf(code, options.config),
    inputs,
    attempt: options.attempt ?? 1,
    signal: options.signal ?? new AbortController().signal,
    emit: (event) => {
      events.push(event)
      options.onEvent?.(event)
    },
  })
  return { ...outcome, events }
}

/** The error a run fails with; fails the test when it succeeds. */
async function failure(promise: Promise<unknown>): Promise<Error & { code: string }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  )
  expect(error, 'the node should have failed').toBeInstanceOf(Error)
  expect(typeof (error as { code?: unknown }).code).toBe('string')
  return error as Error & { code: string }
}

/** Four coloured quadrants, so a crop's pixels can be checked: red, green / blue, white. */
async function quadrants(width: number, height: number): Promise<Buffer> {
  const w = width / 2
  const h = height / 2
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="${w}" height="${h}" fill="#ff0000"/>
    <rect x="${w}" width="${w}" height="${h}" fill="#00ff00"/>
    <rect y="${h}" width="${w}" height="${h}" fill="#0000ff"/>
    <rect x="${w}" y="${h}" width="${w}" height="${h}" fill="#ffffff"/>
  </svg>`
  return sharp(Buffer.from(svg)).png().toBuffer()
}

async function stored(bytes: Buffer, contentType = 'image/png'): Promise<MediaRef> {
  const entry = await media.put(bytes, contentType)
  const { width, height } = await sharp(bytes).metadata()
  return {
    kind: 'media',
    sha256: entry.sha256,
    content_type: contentType,
    url: entry.path,
    width,
    height,
  }
}

const dataUrl = (bytes: Buffer, type = 'image/png') =>
  `data:${type};base64,${bytes.toString('base64')}`

/** The ref's bytes, read from where it says, and checked to be what its sha256 names. */
function bytesOf(ref: MediaRef): Buffer {
  const bytes = readFileSync(ref.url)
  expect(sha256(bytes)).toBe(ref.sha256)
  expect(media.has(ref.sha256)).toBe(true)
  return bytes
}

async function pixel(bytes: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true })
  const at = (y * info.width + x) * info.channels
  return Array.from(data.subarray(at, at + 3))
}

async function modelImage(prompt: string): Promise<{ run: Run; image: MediaRef }> {
  const created = await service.post('/v1/models/{provider}/{model}/runs', {
    params: {
      path: { provider: 'atelier', model: 'text-to-image' },
      header: { 'Idempotency-Key': randomUUID() },
    },
    body: { input: { prompt, width: 128, height: 96 } },
  })
  const deadline = Date.now() + 15_000
  for (;;) {
    const found = await service.get('/v1/runs/{run_id}', {
      params: { path: { run_id: created.id } },
    })
    if (found.status_code === 'succeeded') {
      const first = (found.output as { images: Record<string, unknown>[] }).images[0] ?? {}
      const image: MediaRef = {
        kind: 'media',
        sha256: String(first.sha256),
        content_type: String(first.content_type),
        url: String(first.url),
        width: Number(first.width),
        height: Number(first.height),
      }
      return { run: found, image }
    }
    if (found.status_code === 'failed' || Date.now() > deadline) {
      throw new Error(
        `the run ${found.id} is ${found.status_code}: ${String(found.failure_message)}`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function evaluationOf(id: unknown): Promise<Evaluation> {
  return service.get('/v1/evaluations/{evaluation_id}', {
    params: { path: { evaluation_id: String(id) } },
  })
}

async function balanceMicro(): Promise<number> {
  const balance = await service.get('/v1/billing/balance')
  return Math.round(Number(balance.balance) * 1_000_000)
}

describe('constants: text, number, image', () => {
  it('outputs text and numbers, with their defaults', async () => {
    expect((await run('text', { value: 'a fox' })).outputs).toEqual({ text: 'a fox' })
    expect((await run('text', {})).outputs).toEqual({ text: '' })
    expect((await run('number', { value: 2.5 })).outputs).toEqual({ number: 2.5 })
    expect((await run('number', { value: ' 42 ' })).outputs).toEqual({ number: 42 })
    expect((await run('number', {})).outputs).toEqual({ number: 0 })
    const outcome = await run('text', { value: 'x' })
    expect(outcome.costMicro).toBe(0)
  })

  it('refuses values of the wrong type with INPUT_INVALID naming the node and input', async () => {
    const text = await failure(run('text', { value: 12 }))
    expect(text.code).toBe('INPUT_INVALID')
    expect(text.message).toContain('value')
    expect(text.message).toContain('"My text" (text)')
    expect((await failure(run('number', { value: 'twelve' }))).code).toBe('INPUT_INVALID')
    expect((await failure(run('number', { value: Number.NaN }))).code).toBe('INPUT_INVALID')
  })

  it('turns every form of image into a media reference named by its content', async () => {
    const png = await quadrants(40, 30)
    const fromData = (await run('image', { value: dataUrl(png) })).outputs.image
    expect(isMediaRef(fromData)).toBe(true)
    expect(fromData).toMatchObject({
      kind: 'media',
      sha256: sha256(png),
      content_type: 'image/png',
      width: 40,
      height: 30,
    })
    expect(bytesOf(fromData as MediaRef)).toEqual(png)

    const file = join(home, 'input.png')
    writeFileSync(file, png)
    const fromFile = (await run('image', { value: file })).outputs.image as MediaRef
    expect(fromFile.sha256).toBe(sha256(png))
    expect(fromFile.url).not.toBe(file)
    expect(bytesOf(fromFile)).toEqual(png)

    const ref = await stored(png)
    expect((await run('image', { value: ref })).outputs.image).toBe(ref)

    const { image } = await modelImage('a green hill')
    const fromUrl = (await run('image', { value: image.url })).outputs.image as MediaRef
    expect(fromUrl).toMatchObject({ sha256: image.sha256, content_type: 'image/png', width: 128 })
    expect(sha256(bytesOf(fromUrl))).toBe(image.sha256)

    expect((await failure(run('image', {}))).code).toBe('INPUT_MISSING')
    expect((await failure(run('image', { value: 'relative/path.png' }))).code).toBe('INPUT_INVALID')
    expect((await failure(run('image', { value: join(home, 'missing.png') }))).code).toBe(
      'MEDIA_UNREADABLE',
    )
  })
})

describe('prompt_template', () => {
  it('fills placeholders from the other inputs, once, as the service does', async () => {
    const outcome = await run('prompt_template', {
      template:
        'A {animal} with {count} legs, {animal} again, {{animal}}, { animal }, {} and {a-b}',
      animal: 'fox {count}',
      count: 4,
    })
    expect(outcome.outputs).toEqual({
      prompt:
        'A fox {count} with 4 legs, fox {count} again, {fox {count}}, { animal }, {} and {a-b}',
    })
    expect(
      (await run('prompt_template', { template: 'ok={ok} ü={ü}', ok: true })).outputs.prompt,
    ).toBe('ok=true ü={ü}')
    expect((await run('prompt_template', { template: 'no placeholders' })).outputs.prompt).toBe(
      'no placeholders',
    )
    expect((await run('prompt_template', { template: '{empty}!', empty: '' })).outputs.prompt).toBe(
      '!',
    )
  })

  it('names every missing placeholder with TEMPLATE_PLACEHOLDER_MISSING', async () => {
    const missing = await failure(
      run('prompt_template', { template: '{style} {subject} by {artist}', subject: 'a fox' }),
    )
    expect(missing.code).toBe('TEMPLATE_PLACEHOLDER_MISSING')
    expect(missing.message).toContain('{style}, {artist}')
    expect(missing.message).not.toContain('{subject}')
    const nulled = await failure(run('prompt_template', { template: 'a {x}', x: null }))
    expect(nulled.code).toBe('TEMPLATE_PLACEHOLDER_MISSING')
    const itself = await failure(run('prompt_template', { template: 'the {template}' }))
    expect(itself.code).toBe('TEMPLATE_PLACEHOLDER_MISSING')
    expect(itself.message).toContain('{template}')
  })

  it('refuses a missing, empty or too long template and values that are not text', async () => {
    expect((await failure(run('prompt_template', {}))).code).toBe('INPUT_MISSING')
    expect((await failure(run('prompt_template', { template: '' }))).code).toBe('INPUT_INVALID')
    const long = await failure(run('prompt_template', { template: 'x'.repeat(4001) }))
    expect(long.code).toBe('INPUT_INVALID')
    expect(long.message).toContain('4001')
    const image = await stored(await quadrants(8, 8))
    const media = await failure(run('prompt_template', { template: 'see {pic}', pic: image }))
    expect(media.code).toBe('INPUT_INVALID')
    expect(media.message).toContain('pic')
  })
})

describe('pick_from_list', () => {
  const items = 'red\n\n  green  \r\nblue\n'

  it('picks the line at index, wrapping around, and refuses an empty list', async () => {
    expect((await run('pick_from_list', { items, index: 1 })).outputs).toEqual({ item: 'green' })
    expect((await run('pick_from_list', { items, index: 4 })).outputs).toEqual({ item: 'green' })
    expect((await run('pick_from_list', { items: ['a', 'b'], index: 0 })).outputs.item).toBe('a')
    expect((await failure(run('pick_from_list', { items: ' \n \n' }))).code).toBe('LIST_EMPTY')
    expect((await failure(run('pick_from_list', { items, index: -1 }))).code).toBe('INPUT_INVALID')
    expect((await failure(run('pick_from_list', { items, index: 1.5 }))).code).toBe('INPUT_INVALID')
    expect((await failure(run('pick_from_list', {}))).code).toBe('INPUT_MISSING')
  })

  it('picks at random reproducibly: the same seed, node and attempt pick the same line', async () => {
    const many = Array.from({ length: 50 }, (_, i) => `item ${i}`).join('\n')
    const node = nodeOf('pick_from_list', { seed: 1234 })
    const pick = async (attempt: number, flowRunId = randomUUID()) =>
      (await run('pick_from_list', { items: many }, { node, attempt, flowRunId })).outputs.item
    const first = await pick(1)
    expect(await pick(1)).toBe(first)
    const attempts = new Set(await Promise.all([1, 2, 3, 4, 5, 6].map((n) => pick(n))))
    expect(attempts.size).toBeGreaterThan(1)
    // Without a seed, the flow run's id stands in: a resumed flow run picks the same.
    const unseeded = nodeOf('pick_from_list')
    const flowRunId = randomUUID()
    const again = async (id: string) =>
      (await run('pick_from_list', { items: many }, { node: unseeded, flowRunId: id })).outputs.item
    expect(await again(flowRunId)).toBe(await again(flowRunId))
    const runs = new Set(await Promise.all(Array.from({ length: 8 }, () => again(randomUUID()))))
    expect(runs.size).toBeGreaterThan(1)
    const bad = await failure(
      run('pick_from_list', { items }, { config: { seed: { not: 'a seed' } } }),
    )
    expect(bad.code).toBe('CONFIG_INVALID')
  })
})

describe('compare and branch', () => {
  it('compares with every operator, >= by default', async () => {
    const cases: [string, boolean][] = [
      ['<', false],
      ['<=', true],
      ['=', true],
      ['!=', false],
      ['>=', true],
      ['>', false],
    ]
    for (const [operator, expected] of cases) {
      const outcome = await run('compare', { value: 0.5, operator, threshold: 0.5 })
      expect(outcome.outputs, operator).toEqual({ passed: expected })
    }
    expect((await run('compare', { value: 3, threshold: 2 })).outputs).toEqual({ passed: true })
    expect((await run('compare', { value: 1, threshold: 2 })).outputs).toEqual({ passed: false })
    expect((await failure(run('compare', { value: 1, operator: '≈', threshold: 2 }))).code).toBe(
      'INPUT_INVALID',
    )
    expect((await failure(run('compare', { value: 1 }))).code).toBe('INPUT_MISSING')
    expect((await failure(run('compare', { value: [1], threshold: 1 }))).code).toBe('INPUT_INVALID')
  })

  it('passes the image on through the side the condition takes, and only that side', async () => {
    const image = await stored(await quadrants(8, 8))
    const yes = await run('branch', { condition: true, image })
    expect(yes.outputs).toEqual({ if_true: image })
    expect(Object.hasOwn(yes.outputs, 'if_false')).toBe(false)
    const no = await run('branch', { condition: false, image })
    expect(no.outputs).toEqual({ if_false: image })
    expect((await failure(run('branch', { condition: 'yes', image }))).code).toBe('INPUT_INVALID')
    expect((await failure(run('branch', { condition: true }))).code).toBe('INPUT_MISSING')
  })
})

describe('image_resize and image_crop', () => {
  it('resizes with contain, cover and fill into a PNG named by its content', async () => {
    const source = await stored(await quadrants(300, 200))
    const sizes: [string, number, number][] = [
      ['contain', 100, 100],
      ['cover', 50, 80],
      ['fill', 120, 30],
    ]
    for (const [fit, width, height] of sizes) {
      const { outputs, costMicro } = await run('image_resize', {
        image: source,
        width,
        height,
        fit,
      })
      const image = outputs.image as MediaRef
      expect(image).toMatchObject({ kind: 'media', content_type: 'image/png', width, height })
      const bytes = bytesOf(image)
      const metadata = await sharp(bytes).metadata()
      expect([metadata.format, metadata.width, metadata.height]).toEqual(['png', width, height])
      expect(costMicro).toBe(0)
    }
    // contain keeps the whole 3:2 picture: transparent bands above and below.
    const contained = bytesOf(
      (await run('image_resize', { image: source, width: 90, height: 90 })).outputs
        .image as MediaRef,
    )
    const { data } = await sharp(contained)
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    expect(data[3]).toBe(0)
    // The same input gives the same bytes, hence the same reference.
    const again = await run('image_resize', { image: source, width: 90, height: 90 })
    expect(sha256(contained)).toBe((again.outputs.image as MediaRef).sha256)
  })

  it('defaults to 512 × 512 and reads JPEG, URLs and data: URLs alike', async () => {
    const jpeg = await sharp(await quadrants(64, 64))
      .jpeg()
      .toBuffer()
    const fromData = await run('image_resize', { image: dataUrl(jpeg, 'image/jpeg') })
    expect(fromData.outputs.image).toMatchObject({ content_type: 'image/png', width: 512 })
    const { image } = await modelImage('a blue lake')
    const fromUrl = await run('image_resize', { image, width: 32, height: 24, fit: 'fill' })
    expect(fromUrl.outputs.image).toMatchObject({ width: 32, height: 24 })
    expect(media.has(image.sha256)).toBe(true)
  })

  it('crops the rectangle asked for', async () => {
    const png = await quadrants(200, 100)
    const source = await stored(png)
    const { outputs } = await run('image_crop', {
      image: source,
      x: 110,
      y: 60,
      width: 40,
      height: 30,
    })
    const image = outputs.image as MediaRef
    expect(image).toMatchObject({ width: 40, height: 30, content_type: 'image/png' })
    const bytes = bytesOf(image)
    // Inside the white quadrant (x ≥ 100, y ≥ 50).
    expect(await pixel(bytes, 0, 0)).toEqual([255, 255, 255])
    const red = bytesOf(
      (await run('image_crop', { image: source, width: 10, height: 10 })).outputs.image as MediaRef,
    )
    expect(await pixel(red, 5, 5)).toEqual([255, 0, 0])
    // The whole image is a valid rectangle.
    const whole = await run('image_crop', { image: source, width: 200, height: 100 })
    expect(whole.outputs.image).toMatchObject({ width: 200, height: 100 })
  })

  it('fails with stable codes on bad input', async () => {
    const source = await stored(await quadrants(200, 100))
    const outside = await failure(
      run('image_crop', { image: source, x: 150, y: 0, width: 60, height: 10 }),
    )
    expect(outside.code).toBe('CROP_OUT_OF_BOUNDS')
    expect(outside.message).toContain('200×100')
    expect((await failure(run('image_crop', { image: source, width: 10 }))).code).toBe(
      'INPUT_MISSING',
    )
    expect((await failure(run('image_crop', { image: source, width: 0, height: 5 }))).code).toBe(
      'INPUT_INVALID',
    )
    expect((await failure(run('image_resize', { image: source, width: 5000 }))).code).toBe(
      'INPUT_INVALID',
    )
    expect((await failure(run('image_resize', { image: source, fit: 'stretch' }))).code).toBe(
      'INPUT_INVALID',
    )
    expect((await failure(run('image_resize', { width: 5 }))).code).toBe('INPUT_MISSING')
    expect((await failure(run('image_resize', { image: 42 }))).code).toBe('INPUT_INVALID')
    const text = dataUrl(Buffer.from('not an image'), 'text/plain')
    expect((await failure(run('image_resize', { image: text }))).code).toBe('NOT_AN_IMAGE')

    // A file edited after it was given to the flow is not silently used.
    const file = join(home, 'edited.png')
    const original = await quadrants(20, 20)
    writeFileSync(file, original)
    const ref: MediaRef = {
      kind: 'media',
      sha256: sha256(original),
      content_type: 'image/png',
      url: file,
    }
    expect(
      (await run('image_resize', { image: ref, width: 4, height: 4 })).outputs.image,
    ).toMatchObject({ width: 4 })
    writeFileSync(file, await quadrants(22, 22))
    const changed = await failure(run('image_resize', { image: ref }))
    expect(changed.code).toBe('MEDIA_CHANGED')
    expect(changed.message).toContain(file)
  })
})

describe('evaluate', () => {
  it('judges a model run’s image through the service and outputs its verdict and cost', async () => {
    const { run: made, image } = await modelImage('a red ball in a blue sky')
    const before = await balanceMicro()
    const flowRunId = randomUUID()
    const node = nodeOf('evaluate')
    const outcome = await run(
      'evaluate',
      { image, prompt: 'a red ball in a blue sky', min_score: 0.5, run_id: made.id },
      { node, flowRunId },
    )
    const { outputs } = outcome
    const evaluation = await evaluationOf(outputs.evaluation_id)
    expect(evaluation).toMatchObject({
      status_code: 'completed',
      run_id: made.id,
      generated_image_url: image.url,
      generation_prompt: 'a red ball in a blue sky',
      client_ref: `atelier:${flowRunId}:${node.id}:1`,
      parent_evaluation_id: null,
      attempt_number: 1,
      job_class_code: 'standard',
    })
    expect(outputs).toEqual({
      passed: (evaluation.weighted_pass_rate ?? 0) >= 0.5,
      score: evaluation.weighted_pass_rate,
      issues: (evaluation.top_issues ?? []).join('\n'),
      evaluation_id: evaluation.id,
      verdict: evaluation.overall_passed,
      attempt: 1,
    })
    expect(typeof outputs.score).toBe('number')
    expect(outcome.costMicro).toBe(EVALUATION_PRICE_MICRO.standard)
    expect(outcome.events).toContainEqual({
      type: 'cost',
      costMicro: EVALUATION_PRICE_MICRO.standard,
    })
    expect(outcome.events.some((event) => event.type === 'progress')).toBe(true)
    expect(before - (await balanceMicro())).toBe(EVALUATION_PRICE_MICRO.standard)
    expect(runner.estimate(node, {})).toBe(EVALUATION_PRICE_MICRO.standard)
    expect(runner.estimate(nodeOf('evaluate', { job_class_code: 'quick' }), {})).toBe(
      EVALUATION_PRICE_MICRO.quick,
    )
    expect(runner.estimate(nodeOf('image_resize'), {})).toBe(0)
  })

  it('links each re-evaluation to the one before and never pays twice for one attempt', async () => {
    const { image } = await modelImage('a yellow square on grass')
    const flowRunId = randomUUID()
    const node = nodeOf('evaluate', { max_attempts: 3, pass_threshold: 1 })
    // No min_score: the gate uses config.pass_threshold, which nothing short of perfect reaches.
    const first = await run('evaluate', { image }, { node, flowRunId })
    const firstScore = first.outputs.score as number
    expect(first.outputs.passed).toBe(firstScore >= 1)

    const second = await run('evaluate', { image }, { node, flowRunId, attempt: 2 })
    const evaluation = await evaluationOf(second.outputs.evaluation_id)
    expect(evaluation).toMatchObject({
      parent_evaluation_id: first.outputs.evaluation_id,
      attempt_number: 2,
      client_ref: `atelier:${flowRunId}:${node.id}:2`,
    })
    expect(second.outputs.attempt).toBe(2)
    expect((await evaluationOf(first.outputs.evaluation_id)).superseded_at).not.toBeNull()

    // The same attempt again (a resumed flow run): the evaluation is followed, not bought again.
    const balance = await balanceMicro()
    const posts = requests.filter((r) => r.method === 'POST' && r.path === '/v1/evaluations').length
    const resumed = await run('evaluate', { image }, { node, flowRunId, attempt: 2 })
    expect(resumed.outputs.evaluation_id).toBe(second.outputs.evaluation_id)
    expect(await balanceMicro()).toBe(balance)
    expect(requests.filter((r) => r.method === 'POST' && r.path === '/v1/evaluations').length).toBe(
      posts,
    )

    // The scheduler may name the parent itself.
    const third = await run(
      'evaluate',
      { image, parent_evaluation_id: second.outputs.evaluation_id },
      { node, flowRunId: randomUUID(), attempt: 3 },
    )
    expect((await evaluationOf(third.outputs.evaluation_id)).parent_evaluation_id).toBe(
      second.outputs.evaluation_id,
    )
    // No fourth attempt: the node allows three.
    const before = requests.length
    const exhausted = await failure(run('evaluate', { image }, { node, flowRunId, attempt: 4 }))
    expect(exhausted.code).toBe('GATE_ATTEMPTS_EXHAUSTED')
    expect(requests.length).toBe(before)
  })

  it('judges a local image through an asset, and follows the service’s verdict without a threshold', async () => {
    const local = (
      await run('image_resize', {
        image: (await modelImage('an orange circle')).image,
        width: 96,
        height: 96,
      })
    ).outputs.image as MediaRef
    const outcome = await run('evaluate', { image: local }, { config: { job_class_code: 'quick' } })
    const evaluation = await evaluationOf(outcome.outputs.evaluation_id)
    expect(evaluation.generated_image_url).toBeNull()
    expect(evaluation.job_class_code).toBe('quick')
    expect(outcome.costMicro).toBe(EVALUATION_PRICE_MICRO.quick)
    expect(outcome.outputs.passed).toBe(evaluation.overall_passed === true)
    const assetPath = evaluation.links?.asset
    expect(typeof assetPath).toBe('string')
    const asset = await service.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: String(assetPath).split('/').pop() ?? '' } },
    })
    expect(asset.sha256).toBe(local.sha256)
  })

  it('fails with EVALUATION_FAILED, refunded, when the service cannot judge the image', async () => {
    const before = await balanceMicro()
    const gone: MediaRef = {
      kind: 'media',
      sha256: 'a'.repeat(64),
      content_type: 'image/png',
      url: `${sandbox.url}/_storage/blobs/${'a'.repeat(64)}`,
    }
    const failed = await failure(run('evaluate', { image: gone }))
    expect(failed.code).toBe('EVALUATION_FAILED')
    expect(failed.message).toContain('dispatch_failed')
    expect(await balanceMicro()).toBe(before)
    const bad = await failure(run('evaluate', { image: gone }, { config: { max_attempts: 0 } }))
    expect(bad.code).toBe('CONFIG_INVALID')
    const score = await failure(run('evaluate', { image: gone, min_score: 2 }))
    expect(score.code).toBe('INPUT_INVALID')
    // A local file that is no image is refused before anything is uploaded or paid for.
    const posts = requests.filter((r) => r.method === 'POST').length
    const text = dataUrl(Buffer.from('just words'), 'text/plain')
    expect((await failure(run('evaluate', { image: text }))).code).toBe('NOT_AN_IMAGE')
    expect(requests.filter((r) => r.method === 'POST').length).toBe(posts)
    const offline = makeRunner({ service: null })
    expect((await failure(run('evaluate', { image: gone }, { with: offline }))).code).toBe(
      'SERVICE_REQUIRED',
    )
  })
})

describe('network faults', () => {
  const faults = async (rules: Record<string, unknown>[]) => {
    const answer = await sandbox.call('PUT', '/_sandbox/faults', { body: { rules } })
    expect(answer.status).toBe(200)
  }

  afterAll(async () => {
    await sandbox.call('DELETE', '/_sandbox/faults')
  })

  it('looks a submission whose answer was lost up instead of paying for it again', async () => {
    const { image } = await modelImage('a lost answer')
    const node = nodeOf('evaluate')
    const flowRunId = randomUUID()
    const before = await balanceMicro()
    await faults([
      { operationId: 'createEvaluation', reset: 'after', times: 1 },
      { operationId: 'getEvaluation', status: 503, times: 2 },
    ])
    const outcome = await run('evaluate', { image }, { node, flowRunId })
    const fired = (await sandbox.call('GET', '/_sandbox/faults')).body as {
      rules: { fired: number }[]
    }
    expect(fired.rules.map((rule) => rule.fired)).toEqual([1, 2])
    expect(before - (await balanceMicro())).toBe(EVALUATION_PRICE_MICRO.standard)
    const q = encodeURIComponent(`client_ref="atelier:${flowRunId}:${node.id}:1"`)
    const listed = await sandbox.call('GET', `/v1/evaluations?q=${q}`)
    expect((listed.body as { items: Evaluation[] }).items.map((e) => e.id)).toEqual([
      outcome.outputs.evaluation_id,
    ])
  })

  it('sends a storage part again after a dropped connection', async () => {
    const ref = await stored(await quadrants(30, 70))
    const putsBefore = storagePuts.length
    await faults([{ method: 'PUT', pathPrefix: '/_storage/', reset: 'before', times: 1 }])
    const saved = await run('save_to_assets', { image: ref })
    const fired = (await sandbox.call('GET', '/_sandbox/faults')).body as {
      rules: { fired: number }[]
    }
    expect(fired.rules.map((rule) => rule.fired)).toEqual([1])
    expect(storagePuts.length - putsBefore).toBe(2)
    const asset = await service.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: saved.outputs.asset_id as string } },
    })
    expect(asset.sha256).toBe(ref.sha256)
  })
})

describe('save_to_assets', () => {
  let folder: AssetFolder

  beforeAll(async () => {
    folder = await service.post('/v1/asset-folders', { body: { name: `renders ${randomUUID()}` } })
  })

  it('uploads into the folder once, then reuses the asset with the same bytes', async () => {
    const ref = await stored(await quadrants(120, 80))
    const uploadsBefore = requests.filter((r) => r.path === '/v1/asset-uploads').length
    const putsBefore = storagePuts.length
    const first = await run('save_to_assets', { image: ref }, { config: { folder_id: folder.id } })
    const assetId = first.outputs.asset_id as string
    const asset: Asset = await service.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: assetId } },
    })
    expect(asset).toMatchObject({
      folder_id: folder.id,
      sha256: ref.sha256,
      name: `save-to-assets-${ref.sha256.slice(0, 12)}.png`,
      media_type: 'image',
      width: 120,
      height: 80,
    })
    expect(requests.filter((r) => r.path === '/v1/asset-uploads').length).toBe(uploadsBefore + 1)
    expect(storagePuts.length).toBe(putsBefore + 1)
    expect(first.costMicro).toBe(0)

    const second = await run('save_to_assets', { image: ref, folder_id: folder.id })
    expect(second.outputs.asset_id).toBe(assetId)
    expect(requests.filter((r) => r.path === '/v1/asset-uploads').length).toBe(uploadsBefore + 1)
    expect(storagePuts.length).toBe(putsBefore + 1)
    // An asset id is an image too: its bytes are already here, so its ref points at them.
    const fromAsset = (await run('image', { value: assetId })).outputs.image as MediaRef
    expect(fromAsset).toMatchObject({ sha256: ref.sha256, width: 120, height: 80 })
    expect(bytesOf(fromAsset).length).toBe(asset.size_bytes)
    expect(second.events).toContainEqual(
      expect.objectContaining({
        type: 'log',
        level: 'info',
        message: expect.stringContaining('reused'),
      }),
    )

    // Elsewhere, the same bytes are the same asset: the service keeps one per content.
    const root = await run('save_to_assets', { image: ref })
    expect(root.outputs.asset_id).toBe(assetId)
    expect(root.events).toContainEqual(expect.objectContaining({ type: 'log', level: 'warning' }))
    expect(storagePuts.length).toBe(putsBefore + 1)
  })

  it('saves a model run’s output by its URL, under the name given', async () => {
    const { image } = await modelImage('a purple triangle')
    const name = `triangle ${randomUUID()}.png`
    const saved = await run('save_to_assets', { image, name })
    const asset = await service.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: saved.outputs.asset_id as string } },
    })
    expect(asset).toMatchObject({ name, folder_id: null, sha256: image.sha256 })
  })

  it('saves a video when no image is connected', async () => {
    const bytes = Buffer.concat([Buffer.from('fake mp4 '), Buffer.from(randomUUID())])
    const saved = await run('save_to_assets', { video: dataUrl(bytes, 'video/mp4') })
    const asset = await service.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: saved.outputs.asset_id as string } },
    })
    expect(asset).toMatchObject({
      sha256: sha256(bytes),
      content_type: 'video/mp4',
      size_bytes: bytes.length,
    })
    expect(asset.name).toMatch(/\.mp4$/)
  })

  it('refreshes a part URL that expired before its bytes were sent', async () => {
    let offset = 0
    const timed = await startTestSandbox({ clock: () => Date.now() + offset })
    try {
      const calls: RequestLog[] = []
      const puts: number[] = []
      const timedRunner = makeRunner({
        service: createServiceClient({
          baseUrl: timed.url,
          apiKey: timed.keys.admin,
          log: (entry) => calls.push(entry),
        }),
        // The first PUT arrives after the URL's quarter of an hour.
        fetch: async (input, init) => {
          if (puts.length === 0) offset += 16 * 60 * 1000
          const response = await fetch(input, init)
          puts.push(response.status)
          return response
        },
      })
      const ref = await stored(await quadrants(64, 40))
      const saved = await run('save_to_assets', { image: ref }, { with: timedRunner })
      expect(puts).toEqual([403, 200])
      expect(calls.filter((c) => c.path.endsWith('/parts'))).toHaveLength(1)
      const asset = await timed.call('GET', `/v1/assets/${String(saved.outputs.asset_id)}`)
      expect(asset.body).toMatchObject({ sha256: ref.sha256, status_code: 'ready' })
    } finally {
      await timed.close()
    }
  })

  it('refuses a folder that does not exist, a bad name and nothing to save', async () => {
    const ref = await stored(await quadrants(10, 10))
    const missing = await failure(
      run('save_to_assets', { image: ref }, { config: { folder_id: randomUUID() } }),
    )
    expect(missing.code).toBe('FOLDER_NOT_FOUND')
    expect((await failure(run('save_to_assets', { image: ref, folder_id: 'inbox' }))).code).toBe(
      'INPUT_INVALID',
    )
    expect((await failure(run('save_to_assets', { image: ref, name: ' padded ' }))).code).toBe(
      'INPUT_INVALID',
    )
    expect((await failure(run('save_to_assets', {}))).code).toBe('INPUT_MISSING')
  })
})

describe('cancel and unknown nodes', () => {
  it('stops at once when the flow run is cancelled', async () => {
    const source = await stored(await quadrants(50, 50))
    const stopped = new AbortController()
    stopped.abort()
    const resize = await failure(run('image_resize', { image: source }, { signal: stopped.signal }))
    expect(resize.code).toBe('ABORTED')

    // Cancelled while waiting for the verdict: the wait ends well before the verdict would come.
    const slow = makeRunner({
      polling: { initialMs: 5_000, factor: 1, maxMs: 5_000, timeoutMs: 60_000 },
    })
    const { image } = await modelImage('a slow judgement')
    const controller = new AbortController()
    const started = Date.now()
    const waiting = failure(
      run(
        'evaluate',
        { image },
        {
          with: slow,
          signal: controller.signal,
          onEvent: (event) => {
            if (event.type === 'log' && event.message.startsWith('Submitted')) controller.abort()
          },
        },
      ),
    )
    const aborted = await waiting
    expect(aborted.code).toBe('ABORTED')
    expect(Date.now() - started).toBeLessThan(4_000)

    const save = new AbortController()
    save.abort()
    expect(
      (await failure(run('save_to_assets', { image: source }, { signal: save.signal }))).code,
    ).toBe('ABORTED')
  })

  it('runs every built-in the service lists, and refuses one it does not know', async () => {
    const listed = []
    for await (const node of service.list('/v1/builtin-nodes')) listed.push(node.code)
    expect([...BUILTIN_CODES].sort()).toEqual(listed.sort())
    const unknown = await failure(run('teleport', {}))
    expect(unknown.code).toBe('BUILTIN_UNKNOWN')
    expect(runner.handles(nodeOf('teleport'))).toBe(false)
    expect(runner.handles(nodeOf('evaluate'))).toBe(true)
  })
})

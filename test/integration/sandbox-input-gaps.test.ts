import { randomUUID } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  CallbackSecretCreated,
  Evaluation,
  Flow,
  Model,
  Page,
  Run,
  RunCallbackDelivery,
  Workflow,
} from '../../src-shared/api'
import { findModel } from '../../src-main/sandbox/models'
import { startTestSandbox, type SandboxCall, type TestSandbox } from '../helpers/sandbox'

// The smaller input gaps of issue 17: unknown callback secrets, upper-case ids, `q` values that
// do not fit their field, an oversized request head, and models read by their provider/model slug.

let sandbox: TestSandbox

beforeAll(async () => {
  sandbox = await startTestSandbox()
})

afterAll(async () => {
  await sandbox.close()
})

const TEXT_TO_IMAGE = 'atelier/text-to-image'
const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000beef'

/** The refusal envelope every 4xx carries, with the request id header. */
function expectEnvelope(response: SandboxCall, status: number, code: string): void {
  expect(response.status, response.text).toBe(status)
  expect(response.headers.get('service-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  expect(response.body).toMatchObject({ code, message: expect.any(String) })
  const { message, errors } = response.body as { message: string; errors: unknown }
  expect(message.length).toBeGreaterThan(20)
  expect(errors === null || Array.isArray(errors)).toBe(true)
}

function messageOf(response: SandboxCall): string {
  return (response.body as { message: string }).message
}

async function created<T>(response: Promise<SandboxCall>): Promise<T> {
  const answer = await response
  expect(answer.status, answer.text).toBe(201)
  return answer.body as T
}

async function balance(): Promise<string> {
  const response = await sandbox.call('GET', '/v1/billing/balance')
  return (response.body as { balance: string }).balance
}

/** How many records a list holds, by `Prefer: count=exact`. */
async function count(path: string): Promise<number> {
  const response = await sandbox.call('GET', `${path}?limit=1`, {
    headers: { Prefer: 'count=exact' },
  })
  expect(response.status, response.text).toBe(200)
  return Number(response.headers.get('x-total-count'))
}

/** A one-node flow: its text input comes straight out. */
async function createTextFlow(): Promise<Flow> {
  const node = { id: randomUUID(), output: randomUUID() }
  return created<Flow>(
    sandbox.call('POST', '/v1/flows', {
      body: {
        name: `Echo ${randomUUID().slice(0, 8)}`,
        inputs: [{ name: 'subject', variable_type_code: 'text', is_required: true }],
        outputs: [{ name: 'said', variable_type_code: 'text' }],
        nodes: [
          {
            id: node.id,
            slug: 'say',
            label: 'Say',
            type_code: 'builtin',
            builtin_node_code: 'text',
            config: { flow_inputs: { value: 'subject' }, flow_outputs: { text: 'said' } },
            inputs: [{ name: 'value', variable_type_code: 'text' }],
            outputs: [{ id: node.output, name: 'text', variable_type_code: 'text' }],
          },
        ],
      },
    }),
  )
}

async function createWorkflow(): Promise<Workflow> {
  return created<Workflow>(
    sandbox.call('POST', '/v1/comfyui-workflows', {
      body: {
        name: `Picture ${randomUUID().slice(0, 8)}`,
        workflow_json: { nodes: [{ id: 1, type: 'MysteryNode' }] },
        inputs: [
          {
            name: 'idea',
            variable_type_code: 'text',
            is_required: true,
            wfengine_node_id: '1',
            wfengine_field_name: 'idea',
          },
        ],
        outputs: [{ name: 'picture', variable_type_code: 'image', wfengine_node_id: '1' }],
      },
    }),
  )
}

async function pngDataUrl(): Promise<string> {
  const image = await sharp({
    create: { width: 64, height: 48, channels: 3, background: '#3a6ea5' },
  })
    .png()
    .toBuffer()
  return `data:image/png;base64,${image.toString('base64')}`
}

/** Polls a read until it answers 200 with what `ready` wants (at most ~10 s). */
async function eventually<T>(path: string, ready: (body: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const response = await sandbox.call('GET', path)
    if (response.status === 200 && ready(response.body as T)) return response.body as T
    if (Date.now() > deadline) throw new Error(`${path} not ready: ${response.text}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('callback_secret_id', () => {
  let flow: Flow
  let workflow: Workflow
  let foreign: CallbackSecretCreated

  beforeAll(async () => {
    flow = await createTextFlow()
    workflow = await createWorkflow()
    foreign = await created(
      sandbox.call('POST', '/v1/callback-secrets', {
        key: sandbox.keys.otherOrg,
        body: { label: 'another organization' },
      }),
    )
  })

  const dispatches = () => [
    { path: `/v1/models/${TEXT_TO_IMAGE}/runs`, body: { input: { prompt: 'a fox' } } },
    { path: `/v1/flows/${flow.id}/runs`, body: { input: { subject: 'a fox' } } },
    { path: `/v1/comfyui-workflows/${workflow.id}/runs`, body: { input: { idea: 'a fox' } } },
    { path: '/v1/batches', body: { model: TEXT_TO_IMAGE, items: [{ input: { prompt: 'a' } }] } },
  ]

  it('refuses a secret the organization does not have, before storing or charging anything', async () => {
    for (const secretId of [UNKNOWN_ID, foreign.id]) {
      for (const { path, body } of dispatches()) {
        const before = {
          balance: await balance(),
          runs: await count('/v1/runs'),
          batches: await count('/v1/batches'),
        }
        const response = await sandbox.call('POST', path, {
          body: { ...body, callback_secret_id: secretId },
          headers: { 'Idempotency-Key': randomUUID() },
        })
        expectEnvelope(response, 422, 'VALIDATION_FAILED')
        expect(response.body).toMatchObject({
          errors: [{ field: 'callback_secret_id', code: 'unknown_callback_secret' }],
        })
        expect(messageOf(response)).toContain(secretId)
        expect(messageOf(response)).toContain('POST /v1/callback-secrets')
        expect({
          balance: await balance(),
          runs: await count('/v1/runs'),
          batches: await count('/v1/batches'),
        }).toEqual(before)
      }
    }
  })

  it("accepts the organization's own secret, named in either case, on every dispatch", async () => {
    const secret = await created<CallbackSecretCreated>(
      sandbox.call('POST', '/v1/callback-secrets', { body: { label: 'mine' } }),
    )
    for (const { path, body } of dispatches()) {
      const response = await sandbox.call('POST', path, {
        body: { ...body, callback_secret_id: secret.id.toUpperCase() },
      })
      expect(response.status, `${path}: ${response.text}`).toBe(201)
    }
  })
})

describe('upper-case ids', () => {
  it('reads a run, a flow and an evaluation by an upper-case id, answering the stored id', async () => {
    const run = await created<Run>(
      sandbox.call('POST', `/v1/models/${TEXT_TO_IMAGE}/runs`, {
        body: { input: { prompt: 'a lighthouse' } },
      }),
    )
    const flow = await createTextFlow()
    const evaluation = await created<Evaluation>(
      sandbox.call('POST', '/v1/evaluations', {
        body: { generated_image_url: await pngDataUrl() },
      }),
    )
    for (const [path, id] of [
      ['/v1/runs', run.id],
      ['/v1/flows', flow.id],
      ['/v1/evaluations', evaluation.id ?? ''],
    ] as const) {
      expect(id).toMatch(/^[0-9a-f-]{36}$/)
      for (const written of [id.toUpperCase(), `urn:uuid:${id.toUpperCase()}`]) {
        const response = await sandbox.call('GET', `${path}/${written}`)
        expect(response.status, `${path}/${written}: ${response.text}`).toBe(200)
        expect((response.body as { id: string }).id).toBe(id)
      }
    }
    // A nested path, and a parent id in a list path.
    const logs = await sandbox.call('GET', `/v1/runs/${run.id.toUpperCase()}/logs`)
    expect(logs.status, logs.text).toBe(200)
    expect((logs.body as Page<unknown>).items.length).toBeGreaterThan(0)
  })

  it('takes upper-case ids in bodies, q and X-Organization-Id, and stores them in lower case', async () => {
    const model = findModel(TEXT_TO_IMAGE)
    if (!model) throw new Error('the catalog lost its text-to-image model')
    const node = { id: randomUUID().toUpperCase(), output: randomUUID().toUpperCase() }
    const flow = await created<Flow>(
      sandbox.call('POST', '/v1/flows', {
        body: {
          name: `Picture ${randomUUID().slice(0, 8)}`,
          outputs: [{ name: 'picture', variable_type_code: 'image' }],
          nodes: [
            {
              id: node.id,
              slug: 'picture',
              label: 'Picture',
              type_code: 'model',
              model_id: model.id.toUpperCase(),
              config: { flow_outputs: { image: 'picture' } },
              inputs: [{ name: 'prompt', variable_type_code: 'text', value: 'a red fox' }],
              outputs: [{ id: node.output, name: 'image', variable_type_code: 'image' }],
            },
          ],
        },
      }),
    )
    const nodes = await sandbox.call('GET', `/v1/flows/${flow.id}/nodes`)
    expect(nodes.status, nodes.text).toBe(200)
    expect((nodes.body as Page<{ id: string; model_id: string }>).items).toMatchObject([
      { id: node.id.toLowerCase(), model_id: model.id },
    ])

    const run = await created<Run>(
      sandbox.call('POST', `/v1/flows/${flow.id.toUpperCase()}/runs`, { body: { input: {} } }),
    )
    expect(run.flow_id).toBe(flow.id)
    const evaluation = await created<Evaluation>(
      sandbox.call('POST', '/v1/evaluations', {
        body: {
          generated_image_url: await pngDataUrl(),
          run_id: run.id.toUpperCase(),
          flow_id: flow.id.toUpperCase(),
        },
      }),
    )
    expect(evaluation).toMatchObject({ run_id: run.id, flow_id: flow.id })
    const found = await sandbox.call(
      'GET',
      `/v1/runs?q=${encodeURIComponent(`flow_id=${flow.id.toUpperCase()}`)}`,
    )
    expect(found.status, found.text).toBe(200)
    expect((found.body as Page<Run>).items.map((item) => item.id)).toEqual([run.id])

    const team = await sandbox.call('GET', '/v1/account', {
      headers: { 'X-Organization-Id': sandbox.teamOrgId.toUpperCase() },
    })
    expect(team.status, team.text).toBe(200)
    const other = await sandbox.call('GET', '/v1/runs?limit=1', {
      headers: { 'X-Organization-Id': sandbox.teamOrgId.toUpperCase() },
    })
    expect(other.status, other.text).toBe(200)
    expect((other.body as Page<Run>).items).toEqual([])
  })

  it('names the callback secret a dispatch chose in upper case, not the newest one', async () => {
    const older = await created<CallbackSecretCreated>(
      sandbox.call('POST', '/v1/callback-secrets', { body: { label: 'older' } }),
    )
    await created(sandbox.call('POST', '/v1/callback-secrets', { body: { label: 'newer' } }))
    const run = await created<Run>(
      sandbox.call('POST', `/v1/models/${TEXT_TO_IMAGE}/runs`, {
        body: {
          input: { prompt: 'a kite' },
          // Nothing listens there: the delivery fails, but it is recorded with its signer.
          callback_url: 'http://127.0.0.1:9/callback',
          callback_secret_id: older.id.toUpperCase(),
        },
      }),
    )
    const deliveries = await eventually<RunCallbackDelivery[]>(
      `/v1/runs/${run.id}/callback`,
      (list) => list.length > 0,
    )
    expect(deliveries.map((delivery) => delivery.signing_secret_id)).toEqual([older.id])
  })
})

describe('q values that do not fit their field', () => {
  const refused: [string, string, string][] = [
    // [list, q, what the message must say]
    ['/v1/runs', 'created_at>=yesterday', 'date-time'],
    ['/v1/runs', 'created_at>=2026-01-01', 'date-time'],
    ['/v1/runs', 'created_at>=2026-02-30T00:00:00Z', 'no such day'],
    ['/v1/runs', 'progress>=half', 'a number'],
    ['/v1/runs', 'status_code=succeded', 'one of'],
    ['/v1/runs', 'flow_id=flow-1', 'UUID'],
    ['/v1/runs', 'cost>=cheap', 'such as 0.0125'],
    ['/v1/models', 'is_public=yes', 'true or false'],
    ['/v1/runs', 'colour=red', 'unknown field'],
    ['/v1/runs', 'status_code=>queued', 'unknown operator'],
  ]

  it.each(refused)('%s?q=%s is a 400 that names the clause and the form', async (list, q, says) => {
    const response = await sandbox.call('GET', `${list}?q=${encodeURIComponent(q)}`)
    expectEnvelope(response, 400, 'BAD_REQUEST')
    expect(messageOf(response)).toContain(says)
    expect(messageOf(response)).toContain(q.split(' ')[0]?.slice(0, 12) ?? q)
  })

  it('still answers values that fit: dates, numbers, enums, booleans, ids, decimals, ~', async () => {
    const run = await created<Run>(
      sandbox.call('POST', `/v1/models/${TEXT_TO_IMAGE}/runs`, {
        body: { input: { prompt: 'a meadow' } },
      }),
    )
    for (const q of [
      'created_at>=2020-01-01T00:00:00Z',
      'created_at>=2020-01-01T00:00:00+00:00',
      'progress>=0',
      'status_code=queued|running|succeeded|failed|null',
      `id=${run.id}`,
      'estimated_cost>=0.0',
      'model_slug~TEXT-TO',
      'created_at~yesterday',
    ]) {
      const response = await sandbox.call('GET', `/v1/runs?q=${encodeURIComponent(q)}&limit=500`)
      expect(response.status, `${q}: ${response.text}`).toBe(200)
      expect(
        (response.body as Page<Run>).items.some((item) => item.id === run.id),
        q,
      ).toBe(q !== 'created_at~yesterday')
    }
    const models = await sandbox.call('GET', `/v1/models?q=${encodeURIComponent('is_public=true')}`)
    expect(models.status, models.text).toBe(200)
    expect((models.body as Page<Model>).items.length).toBeGreaterThan(0)
  })

  it('refuses a bad sort_by, fields, limit or cursor with the envelope and what to write', async () => {
    const cases: [string, number, string, string][] = [
      ['sort_by=colour:asc', 400, 'BAD_REQUEST', 'unknown field'],
      ['sort_by=created_at', 422, 'VALIDATION_FAILED', 'sort_by'],
      ['fields=id,colour', 400, 'BAD_REQUEST', 'unknown field'],
      ['limit=0', 422, 'VALIDATION_FAILED', 'limit'],
      ['limit=501', 422, 'VALIDATION_FAILED', 'limit'],
      ['limit=many', 422, 'VALIDATION_FAILED', 'limit'],
      ['pq=not-a-cursor', 400, 'BAD_REQUEST', 'cursor'],
    ]
    const first = await sandbox.call('GET', '/v1/runs?limit=1&sort_by=created_at:asc')
    const { next } = first.body as Page<Run>
    expect(next).toEqual(expect.any(String))
    cases.push([`pq=${encodeURIComponent(next ?? '')}`, 400, 'BAD_REQUEST', 'another query'])
    for (const [query, status, code, says] of cases) {
      const response = await sandbox.call('GET', `/v1/runs?${query}`)
      expectEnvelope(response, status, code)
      expect(messageOf(response), query).toContain(says)
    }
  })
})

describe('an oversized request head', () => {
  it('answers 431 with the envelope and a Service-Request-Id', async () => {
    const q = `name~"${'x'.repeat(18 * 1024)}"`
    const response = await fetch(`${sandbox.url}/v1/runs?q=${q}`, {
      headers: { Authorization: `Bearer ${sandbox.keys.admin}` },
    })
    expect(response.status).toBe(431)
    expect(response.headers.get('service-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(response.headers.get('content-type')).toContain('application/json')
    const body = (await response.json()) as { code: string; message: string; errors: unknown }
    expect(body).toMatchObject({ code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', errors: null })
    expect(body.message).toContain('KiB')
    // The sandbox still answers the next request.
    expect((await sandbox.call('GET', '/v1/health')).status).toBe(200)
  })
})

describe('a model read by its provider/model slug', () => {
  it('answers the model GET /v1/models/{model_id} answers, found as a dispatch finds it', async () => {
    const model = findModel(TEXT_TO_IMAGE)
    if (!model) throw new Error('the catalog lost its text-to-image model')
    const byId = await sandbox.call('GET', `/v1/models/${model.id}`)
    expect(byId.status, byId.text).toBe(200)
    for (const slug of [TEXT_TO_IMAGE, 'ATELIER/Text-To-Image']) {
      const bySlug = await sandbox.call('GET', `/v1/models/${slug}`)
      expect(bySlug.status, `${slug}: ${bySlug.text}`).toBe(200)
      expect(bySlug.headers.get('service-request-id')).toMatch(/^[0-9a-f-]{36}$/)
      expect(bySlug.body).toEqual(byId.body)
    }
    // The routes beside it are unchanged.
    const inputs = await sandbox.call('GET', `/v1/models/${model.id}/inputs`)
    expect(inputs.status, inputs.text).toBe(200)
    const run = await sandbox.call('POST', `/v1/models/${TEXT_TO_IMAGE}/runs`, {
      body: { input: { prompt: 'a dune' } },
    })
    expect(run.status, run.text).toBe(201)
  })

  it('refuses an unknown slug, a missing key and a bad segment with the envelope', async () => {
    const unknown = await sandbox.call('GET', '/v1/models/atelier/no-such-model')
    expectEnvelope(unknown, 404, 'NOT_FOUND')
    expect(messageOf(unknown)).toContain('atelier/no-such-model')
    expectEnvelope(
      await sandbox.call('GET', `/v1/models/${TEXT_TO_IMAGE}`, { key: null }),
      401,
      'UNAUTHORIZED',
    )
    expectEnvelope(
      await sandbox.call('GET', '/v1/models/atelier/text%20to%20image'),
      422,
      'VALIDATION_FAILED',
    )
  })
})

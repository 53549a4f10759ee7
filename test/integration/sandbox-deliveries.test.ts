import { createHmac, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { components } from '../../src-shared/api'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { contractErrors } from '../helpers/contract-schema'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

type Run = components['schemas']['Run']
type Batch = components['schemas']['Batch']
type RunCallbackDelivery = components['schemas']['RunCallbackDelivery']
type BatchCallbackDelivery = components['schemas']['BatchCallbackDelivery']
type Webhook = components['schemas']['Webhook']
type WebhookDelivery = components['schemas']['WebhookDelivery']
type WebhookDeliveryAttempt = components['schemas']['WebhookDeliveryAttempt']
interface Page<T> {
  items: T[]
}

// ---------------------------------------------------------------------------------------------
// An independent receiver: plain node:http, sharing no code with the sandbox. It keeps the raw
// bytes and headers of every request and answers each path with a scripted list of behaviours.

type Behaviour = number | 'reset' | 'hang'

interface Received {
  path: string
  headers: IncomingHttpHeaders
  raw: Buffer
  /** Whether the sender hung up before an answer was written (a cut-off attempt). */
  abandoned: boolean
}

interface Receiver {
  url: (path: string) => string
  /** Each request to `path` takes the next behaviour; 200 once the list is used up. */
  script: (path: string, ...behaviours: Behaviour[]) => void
  at: (path: string) => Received[]
  close: () => Promise<void>
}

async function startReceiver(): Promise<Receiver> {
  const scripts = new Map<string, Behaviour[]>()
  const received: Received[] = []
  const hanging = new Set<ServerResponse>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = req.url ?? '/'
      const entry: Received = {
        path,
        headers: req.headers,
        raw: Buffer.concat(chunks),
        abandoned: false,
      }
      received.push(entry)
      const behaviour = scripts.get(path)?.shift() ?? 200
      if (behaviour === 'reset') {
        req.socket.destroy()
      } else if (behaviour === 'hang') {
        hanging.add(res)
        res.on('close', () => {
          entry.abandoned = !res.writableEnded
          hanging.delete(res)
        })
      } else {
        res.writeHead(behaviour, { 'Content-Type': 'text/plain' }).end(`receiver says ${behaviour}`)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    script: (path, ...behaviours) => {
      scripts.set(path, behaviours)
    },
    at: (path) => received.filter((r) => r.path === path),
    close: async () => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
}

function hmac(secret: string, raw: Buffer): string {
  return createHmac('sha256', secret).update(raw).digest('hex')
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + 8_000
  for (let round = 0; round < 800 && Date.now() < deadline; round++) {
    const value = await probe()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`gave up waiting for ${what}`)
}

const CALLBACK_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?\+00:00$/
const FINAL = ['succeeded', 'failed', 'failed_non_retryable']

// ---------------------------------------------------------------------------------------------

let sandbox: TestSandbox
let receiver: Receiver
let client: ServiceClient
let secret: { id: string; plain_secret: string }

beforeAll(async () => {
  receiver = await startReceiver()
  sandbox = await startTestSandbox()
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  const settings = await sandbox.call('PUT', '/_sandbox/delivery-settings', {
    // The attempt timeout is the longest a receiver in this process could take on a busy
    // machine, not the shortest that usually passes: at 300 ms a stalled worker once turned a
    // first attempt into a timeout. Only the one 'hang' script waits it out.
    body: { timeout_ms: 3_000, retry_base_ms: 20, max_attempts: 4 },
  })
  expect(settings.status).toBe(200)
})

afterAll(async () => {
  await sandbox.close()
  await receiver.close()
})

function makeRun(sb: TestSandbox, overrides: Partial<Run>): Run {
  return {
    id: sb.services.store.newId(),
    org_id: sb.orgId,
    target_type_code: 'model',
    source_code: 'api',
    model_id: null,
    model_slug: 'atelier/text-to-image',
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: 'succeeded',
    input: { prompt: 'a red fox' },
    output: {
      images: [{ url: 'http://127.0.0.1/_storage/blobs/abc?sig=1', content_type: 'image/png' }],
    },
    metadata: null,
    callback_url: null,
    idempotency_key: null,
    progress: 1,
    cost: '0.010000',
    estimated_cost: '0.010000',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    duration_ms: 1234,
    // `Z` on purpose: the payload must still carry +00:00.
    created_at: '2026-01-02T03:04:05.678Z',
    queued_at: '2026-01-02T03:04:05.678Z',
    started_at: '2026-01-02T03:04:05.900Z',
    completed_at: '2026-01-02T03:04:06.912Z',
    updated_at: '2026-01-02T03:04:06.912Z',
    ...overrides,
  }
}

/** Stores a finished run as the run engine would and announces it. */
function finishRun(sb: TestSandbox, overrides: Partial<Run>, orgId = sb.orgId): Run {
  const run = makeRun(sb, { org_id: orgId, ...overrides })
  sb.services.store.insert('runs', orgId, run)
  sb.services.events.emit('run.finished', orgId, run)
  return run
}

async function runDeliveries(
  runId: string,
  key = sandbox.keys.admin,
  headers: Record<string, string> = {},
): Promise<RunCallbackDelivery[]> {
  const response = await sandbox.call('GET', `/v1/runs/${runId}/callback`, { key, headers })
  expect(response.status).toBe(200)
  return response.body as RunCallbackDelivery[]
}

async function settledRunDelivery(runId: string, index = 0): Promise<RunCallbackDelivery> {
  return waitFor(`the callback of run ${runId}`, async () => {
    const delivery = (await runDeliveries(runId))[index]
    return delivery && FINAL.includes(delivery.status_code) ? delivery : undefined
  })
}

describe('callback secrets', () => {
  it('creates a secret whose plain value is shown once', async () => {
    const created = await client.post('/v1/callback-secrets', { body: { label: 'receiver' } })
    expect(created).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      label: 'receiver',
      plain_secret: expect.any(String),
      fingerprint: created.plain_secret.slice(-4),
      created_at: expect.stringMatching(CALLBACK_TIME),
    })
    expect(created.plain_secret.length).toBeGreaterThanOrEqual(32)
    secret = created

    const blank = await sandbox.call('POST', '/v1/callback-secrets', { body: { label: '  ' } })
    expect(blank.status).toBe(422)
    const missing = await sandbox.call('POST', '/v1/callback-secrets', { body: {} })
    expect(missing.status).toBe(422)
  })
})

describe('run callbacks', () => {
  it('sends run.completed with the normalized output, +00:00 times and metadata verbatim', async () => {
    const metadata = { intent: 'ri_42', nested: { list: [1, 'two', null], ünïcode: '狐' } }
    const run = finishRun(sandbox, { callback_url: receiver.url('/completed'), metadata })
    const delivery = await settledRunDelivery(run.id)
    const [got] = receiver.at('/completed')
    if (!got) throw new Error('nothing received')

    expect(got.headers['content-type']).toBe('application/json')
    expect(got.headers['service-signature']).toBe(hmac(secret.plain_secret, got.raw))
    expect(got.raw.toString('utf8')).toBe(delivery.payload_bytes)
    const body = JSON.parse(got.raw.toString('utf8')) as Record<string, unknown>
    expect(body).toEqual({
      event: 'run.completed',
      run_id: run.id,
      status: 'succeeded',
      output: run.output,
      duration_ms: 1234,
      created_at: '2026-01-02T03:04:05.678+00:00',
      completed_at: '2026-01-02T03:04:06.912+00:00',
      metadata,
    })
    expect(contractErrors('RunCallbackPayload', body)).toEqual([])
    expect(got.raw.toString('utf8')).not.toContain('Z"')

    expect(delivery).toMatchObject({
      run_id: run.id,
      callback_url: receiver.url('/completed'),
      payload: body,
      signing_secret_id: secret.id,
      is_automatic: true,
      status_code: 'succeeded',
      failure_reason_code: null,
      failure_detail: null,
      attempt_count: 1,
      max_attempts: 4,
      next_attempt_at: null,
      completed_at: expect.any(String),
    })
    expect(delivery.attempts).toEqual([
      {
        id: got.headers['service-request-id'],
        delivery_id: delivery.id,
        attempt_number: 1,
        status_code: 200,
        response_body: 'receiver says 200',
        response_time_ms: expect.any(Number),
        error_message: null,
        created_at: expect.any(String),
      },
    ])
    expect(got.headers['service-delivery-id']).toBe(delivery.id)
    // The plain secret is never in any other answer.
    const history = await sandbox.call('GET', `/v1/runs/${run.id}/callback`)
    expect(history.text).not.toContain(secret.plain_secret)
  })

  it('sends run.failed with an error envelope and run.cancelled with a null output', async () => {
    const failed = finishRun(sandbox, {
      callback_url: receiver.url('/failed'),
      status_code: 'failed',
      output: null,
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
      failure_message: 'width must be at most 2048.',
      metadata: { n: 1 },
    })
    const canceled = finishRun(sandbox, {
      callback_url: receiver.url('/canceled'),
      status_code: 'canceled',
      output: null,
      duration_ms: null,
    })
    const failedDelivery = await settledRunDelivery(failed.id)
    const canceledDelivery = await settledRunDelivery(canceled.id)
    expect(failedDelivery.payload).toMatchObject({
      event: 'run.failed',
      status: 'failed',
      output: {
        code: 'INPUT_VALIDATION_FAILED',
        message: 'width must be at most 2048.',
        errors: null,
      },
      metadata: { n: 1 },
    })
    expect(canceledDelivery.payload).toMatchObject({
      event: 'run.cancelled',
      status: 'canceled',
      output: null,
      metadata: null,
      // No recorded duration: the wall-clock time from creation to completion.
      duration_ms: 1234,
    })
    for (const [path, delivery] of [
      ['/failed', failedDelivery],
      ['/canceled', canceledDelivery],
    ] as const) {
      const [got] = receiver.at(path)
      expect(got?.raw.toString('utf8')).toBe(delivery.payload_bytes)
      expect(got?.headers['service-signature']).toBe(
        hmac(secret.plain_secret, got?.raw ?? Buffer.alloc(0)),
      )
      expect(delivery.payload.created_at).toMatch(CALLBACK_TIME)
      expect(delivery.payload.completed_at).toMatch(CALLBACK_TIME)
    }
  })

  it('sends nothing for a run without callback_url', async () => {
    const run = finishRun(sandbox, {})
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await runDeliveries(run.id)).toEqual([])
  })

  it('retries after a 500, a reset and a timeout, recording every attempt', async () => {
    receiver.script('/flaky', 500, 'reset', 'hang', 200)
    const run = finishRun(sandbox, { callback_url: receiver.url('/flaky') })
    const delivery = await settledRunDelivery(run.id)
    expect(delivery).toMatchObject({ status_code: 'succeeded', attempt_count: 4 })
    expect(delivery.attempts.map((a) => [a.attempt_number, a.status_code])).toEqual([
      [1, 500],
      [2, null],
      [3, null],
      [4, 200],
    ])
    const [first, second, third] = delivery.attempts
    expect(first).toMatchObject({ response_body: 'receiver says 500', error_message: null })
    expect(second?.error_message).toMatch(/reset|closed/i)
    expect(third?.error_message).toMatch(/3000 ms/)
    expect(third?.response_time_ms).toBeGreaterThanOrEqual(2_900)

    const got = receiver.at('/flaky')
    expect(got).toHaveLength(4)
    for (const request of got) {
      expect(request.raw.toString('utf8')).toBe(delivery.payload_bytes)
      expect(request.headers['service-signature']).toBe(hmac(secret.plain_secret, request.raw))
      expect(request.headers['service-delivery-id']).toBe(delivery.id)
    }
    // A fresh Service-Request-Id per attempt: each is the id of its attempt record.
    expect(got.map((r) => r.headers['service-request-id'])).toEqual(
      delivery.attempts.map((a) => a.id),
    )
    const times = delivery.attempts.map((a) => Date.parse(a.created_at))
    expect(times).toEqual([...times].sort((a, b) => a - b))
  })

  it('gives up after max_attempts with max_attempts_exhausted; 429 and 408 are retried too', async () => {
    receiver.script('/down', 503, 429, 408, 502, 200)
    const run = finishRun(sandbox, { callback_url: receiver.url('/down') })
    const delivery = await settledRunDelivery(run.id)
    expect(delivery).toMatchObject({
      status_code: 'failed',
      failure_reason_code: 'max_attempts_exhausted',
      failure_detail: expect.stringContaining('502'),
      attempt_count: 4,
      max_attempts: 4,
      next_attempt_at: null,
      completed_at: expect.any(String),
    })
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([503, 429, 408, 502])
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.at('/down')).toHaveLength(4)
  })

  it('stops at once on a 4xx: failed_non_retryable with client_rejected', async () => {
    receiver.script('/gone', 410)
    const run = finishRun(sandbox, { callback_url: receiver.url('/gone') })
    const delivery = await settledRunDelivery(run.id)
    expect(delivery).toMatchObject({
      status_code: 'failed_non_retryable',
      failure_reason_code: 'client_rejected',
      failure_detail: expect.stringContaining('410'),
      attempt_count: 1,
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.at('/gone')).toHaveLength(1)
  })

  it('fails a host that does not resolve with dns_validation_failed, sending nothing', async () => {
    const run = finishRun(sandbox, { callback_url: 'http://callbacks.atelier.invalid/hook' })
    const delivery = await settledRunDelivery(run.id)
    expect(delivery).toMatchObject({
      status_code: 'failed_non_retryable',
      failure_reason_code: 'dns_validation_failed',
      failure_detail: expect.stringContaining('callbacks.atelier.invalid'),
      attempt_count: 0,
      attempts: [],
    })
  })

  it('redelivers the same frozen bytes as a new, non-automatic delivery', async () => {
    const run = finishRun(sandbox, { callback_url: receiver.url('/again'), metadata: { a: 1 } })
    const original = await settledRunDelivery(run.id)
    const replay = await client.post('/v1/runs/{run_id}/callback-redeliveries', {
      params: { path: { run_id: run.id } },
    })
    expect(replay).toMatchObject({
      run_id: run.id,
      is_automatic: false,
      payload_bytes: original.payload_bytes,
      signing_secret_id: secret.id,
      attempt_count: 0,
      attempts: [],
    })
    expect(['pending', 'processing', 'succeeded']).toContain(replay.status_code)
    expect(replay.id).not.toBe(original.id)
    const second = await settledRunDelivery(run.id, 1)
    expect(second).toMatchObject({ id: replay.id, status_code: 'succeeded' })
    const got = receiver.at('/again')
    expect(got).toHaveLength(2)
    expect(got[1]?.raw.equals(got[0]?.raw ?? Buffer.alloc(0))).toBe(true)
    expect(got[1]?.headers['service-signature']).toBe(got[0]?.headers['service-signature'])

    const history = await client.get('/v1/runs/{run_id}/callback', {
      params: { path: { run_id: run.id } },
    })
    expect(history.map((d) => d.is_automatic)).toEqual([true, false])
  })

  it('refuses a redelivery with 409 before the run ends or without callback_url, 404 for no run', async () => {
    const running = makeRun(sandbox, {
      status_code: 'running',
      callback_url: receiver.url('/never'),
      completed_at: null,
    })
    sandbox.services.store.insert('runs', sandbox.orgId, running)
    const early = await sandbox.call('POST', `/v1/runs/${running.id}/callback-redeliveries`)
    expect(early.status).toBe(409)
    expect(early.body).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('running'),
    })

    const silent = finishRun(sandbox, {})
    const none = await sandbox.call('POST', `/v1/runs/${silent.id}/callback-redeliveries`)
    expect(none.status).toBe(409)
    expect(none.body).toMatchObject({ message: expect.stringContaining('callback_url') })

    const missing = await sandbox.call('POST', `/v1/runs/${randomUUID()}/callback-redeliveries`)
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ code: 'RUN_NOT_FOUND' })
    const history = await sandbox.call('GET', `/v1/runs/${randomUUID()}/callback`)
    expect(history.status).toBe(404)
    expect(receiver.at('/never')).toEqual([])
  })

  it('signs with the secret the run names, else the newest; an org with none gets a default', async () => {
    const team = { 'X-Organization-Id': sandbox.teamOrgId }
    const first = finishRun(sandbox, { callback_url: receiver.url('/team-1') }, sandbox.teamOrgId)
    const unsigned = await waitFor('the team callback', async () => {
      const [delivery] = await runDeliveries(first.id, sandbox.keys.admin, team)
      return delivery && FINAL.includes(delivery.status_code) ? delivery : undefined
    })
    expect(unsigned.status_code).toBe('succeeded')
    expect(unsigned.signing_secret_id).not.toBe(secret.id)
    expect(receiver.at('/team-1')[0]?.headers['service-signature']).toMatch(/^[0-9a-f]{64}$/)

    const older = await client.post('/v1/callback-secrets', {
      body: { label: 'older' },
      headers: team,
    })
    const newer = await client.post('/v1/callback-secrets', {
      body: { label: 'newer' },
      headers: team,
    })
    const byNewest = finishRun(
      sandbox,
      { callback_url: receiver.url('/team-2') },
      sandbox.teamOrgId,
    )
    const named = finishRun(
      sandbox,
      { callback_url: receiver.url('/team-3'), callback_secret_id: older.id } as Partial<Run>,
      sandbox.teamOrgId,
    )
    for (const [run, path, used] of [
      [byNewest, '/team-2', newer],
      [named, '/team-3', older],
    ] as const) {
      const delivery = await waitFor('a team callback', async () => {
        const [d] = await runDeliveries(run.id, sandbox.keys.admin, team)
        return d && FINAL.includes(d.status_code) ? d : undefined
      })
      expect(delivery.signing_secret_id).toBe(used.id)
      const [got] = receiver.at(path)
      expect(got?.headers['service-signature']).toBe(
        hmac(used.plain_secret, got?.raw ?? Buffer.alloc(0)),
      )
    }
  })
})

describe('batch callbacks', () => {
  function finishBatch(items: Run[], overrides: Partial<Batch>): Batch {
    const store = sandbox.services.store
    for (const run of items) store.insert('runs', sandbox.orgId, run)
    const batch: Batch = {
      id: store.newId(),
      org_id: sandbox.orgId,
      model_slug: 'atelier/caption',
      status_code: 'succeeded',
      item_count: items.length,
      succeeded_count: items.filter((r) => r.status_code === 'succeeded').length,
      failed_count: items.filter((r) => r.status_code === 'failed').length,
      canceled_count: items.filter((r) => r.status_code === 'canceled').length,
      items: items.map((run, index) => ({ index, run_id: run.id, status_code: run.status_code })),
      callback_url: null,
      metadata: { batch: 'b-1' },
      cost: '0.020000',
      created_at: '2026-02-01T10:00:00.000+00:00',
      updated_at: '2026-02-01T10:00:05.500+00:00',
      completed_at: '2026-02-01T10:00:05.500+00:00',
      ...overrides,
    }
    store.insert('batches', sandbox.orgId, batch)
    sandbox.services.events.emit('batch.finished', sandbox.orgId, batch)
    return batch
  }

  async function settledBatchDelivery(batchId: string): Promise<BatchCallbackDelivery> {
    return waitFor('the batch callback', async () => {
      const response = await sandbox.call('GET', `/v1/batches/${batchId}/callback`)
      expect(response.status).toBe(200)
      const [delivery] = response.body as BatchCallbackDelivery[]
      return delivery && FINAL.includes(delivery.status_code) ? delivery : undefined
    })
  }

  it('sends run.partial_succeeded with the items envelope when an item failed', async () => {
    const ok = makeRun(sandbox, {})
    const bad = makeRun(sandbox, {
      status_code: 'failed',
      output: null,
      failure_code: 'MODEL_UNAVAILABLE',
      failure_message: 'The model is down.',
    })
    const batch = finishBatch([ok, bad], {
      status_code: 'partial_succeeded',
      callback_url: receiver.url('/batch-partial'),
    })
    const delivery = await settledBatchDelivery(batch.id)
    const [got] = receiver.at('/batch-partial')
    expect(got?.raw.toString('utf8')).toBe(delivery.payload_bytes)
    expect(got?.headers['service-signature']).toBe(
      hmac(secret.plain_secret, got?.raw ?? Buffer.alloc(0)),
    )
    const body = JSON.parse(delivery.payload_bytes) as Record<string, unknown>
    expect(contractErrors('BatchCallbackPayload', body)).toEqual([])
    expect(body).toEqual({
      event: 'run.partial_succeeded',
      batch_id: batch.id,
      status: 'partial_succeeded',
      output: {
        items: [
          { index: 0, run_id: ok.id, status: 'succeeded', output: ok.output },
          {
            index: 1,
            run_id: bad.id,
            status: 'failed',
            output: { code: 'MODEL_UNAVAILABLE', message: 'The model is down.', errors: null },
          },
        ],
        succeeded: 1,
        failed: 1,
        cancelled: 0,
        total: 2,
      },
      duration_ms: 5500,
      created_at: '2026-02-01T10:00:00.000+00:00',
      completed_at: '2026-02-01T10:00:05.500+00:00',
      metadata: { batch: 'b-1' },
    })
    expect(delivery).toMatchObject({
      batch_id: batch.id,
      is_automatic: true,
      signing_secret_id: secret.id,
    })
  })

  it('sends batch.succeeded when every item succeeded, and nothing without callback_url', async () => {
    const batch = finishBatch([makeRun(sandbox, {}), makeRun(sandbox, {})], {
      callback_url: receiver.url('/batch-ok'),
    })
    const delivery = await settledBatchDelivery(batch.id)
    expect(delivery.payload).toMatchObject({
      event: 'batch.succeeded',
      status: 'succeeded',
      output: { succeeded: 2, failed: 0, cancelled: 0, total: 2 },
    })
    const quiet = finishBatch([makeRun(sandbox, {})], {})
    await new Promise((resolve) => setTimeout(resolve, 50))
    const none = await sandbox.call('GET', `/v1/batches/${quiet.id}/callback`)
    expect(none.body).toEqual([])
    const missing = await sandbox.call('GET', `/v1/batches/${randomUUID()}/callback`)
    expect(missing.status).toBe(404)
  })
})

describe('webhooks', () => {
  const hookSecret = 'whsec_test_material_0123456789'

  async function createWebhook(body: components['schemas']['WebhookCreate']): Promise<Webhook> {
    return client.post('/v1/webhooks', { body })
  }

  async function deliveriesOf(webhookId: string, q?: string): Promise<WebhookDelivery[]> {
    const query = q ? `?q=${encodeURIComponent(q)}` : ''
    const response = await sandbox.call('GET', `/v1/webhooks/${webhookId}/deliveries${query}`)
    expect(response.status).toBe(200)
    return (response.body as Page<WebhookDelivery>).items
  }

  it('creates, reads, lists, updates and deletes webhooks; the secret is never shown', async () => {
    const created = await createWebhook({
      url: receiver.url('/hook-crud'),
      secret_ciphertext: hookSecret,
      secret_fingerprint: '6789',
      event_subscriptions: [{ event_type_code: 'run.completed' }],
    })
    expect(created).toEqual({
      id: expect.any(String),
      org_id: sandbox.orgId,
      url: receiver.url('/hook-crud'),
      secret_fingerprint: '6789',
      event_subscriptions: [{ event_type_code: 'run.completed' }],
      is_active: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    })
    const fetched = await client.get('/v1/webhooks/{id}', { params: { path: { id: created.id } } })
    expect(fetched).toEqual(created)
    const listed = await client.get('/v1/webhooks')
    expect(listed.items.map((w) => w.id)).toContain(created.id)
    expect(JSON.stringify(listed)).not.toContain(hookSecret)

    const updated = await client.patch('/v1/webhooks/{id}', {
      params: { path: { id: created.id } },
      body: {
        event_subscriptions: [
          { event_type_code: 'run.failed' },
          { event_type_code: 'run.cancelled' },
        ],
        is_active: false,
      },
    })
    expect(updated).toMatchObject({
      event_subscriptions: [
        { event_type_code: 'run.failed' },
        { event_type_code: 'run.cancelled' },
      ],
      is_active: false,
      url: created.url,
    })
    expect(updated.updated_at >= created.updated_at).toBe(true)

    const deleted = await sandbox.call('DELETE', `/v1/webhooks/${created.id}`)
    expect(deleted.status).toBe(204)
    expect((await sandbox.call('GET', `/v1/webhooks/${created.id}`)).status).toBe(404)
    expect((await sandbox.call('DELETE', `/v1/webhooks/${created.id}`)).status).toBe(404)
    const tombstones = await sandbox.call(
      'GET',
      `/v1/tombstones?q=${encodeURIComponent(`record_id=${created.id}`)}`,
    )
    expect((tombstones.body as Page<{ collection: string }>).items).toEqual([
      expect.objectContaining({ collection: 'webhooks', record_id: created.id }),
    ])
  })

  it('validates webhooks: https (or loopback http), 2048 characters, 4-character fingerprint', async () => {
    const base = { secret_ciphertext: 's', secret_fingerprint: 'abcd' }
    const cases: [unknown, number][] = [
      [{ ...base, url: 'http://example.com/hook' }, 422],
      [{ ...base, url: 'ftp://127.0.0.1/hook' }, 422],
      [{ ...base, url: `https://example.com/${'a'.repeat(2048)}` }, 422],
      [{ ...base, url: 'https://example.com/hook', secret_fingerprint: 'abc' }, 422],
      [{ ...base, url: 'https://example.com/hook', secret_ciphertext: '' }, 422],
      [
        {
          ...base,
          url: 'https://example.com/hook',
          event_subscriptions: [
            { event_type_code: 'run.completed' },
            { event_type_code: 'run.completed' },
          ],
        },
        422,
      ],
      [
        {
          ...base,
          url: 'https://example.com/hook',
          event_subscriptions: [{ event_type_code: 'run.canceled' }],
        },
        422,
      ],
    ]
    for (const [body, status] of cases) {
      const response = await sandbox.call('POST', '/v1/webhooks', { body })
      expect({ body, status: response.status }).toEqual({ body, status })
      expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.any(Array) })
    }
    const ok = await sandbox.call('POST', '/v1/webhooks', {
      body: { ...base, url: 'https://example.com/hook' },
    })
    expect(ok.status).toBe(201)
    const id = (ok.body as Webhook).id
    const twice = await sandbox.call('POST', '/v1/webhooks', {
      body: { ...base, url: 'https://example.com/hook' },
    })
    expect(twice.status).toBe(409)
    const halfSecret = await sandbox.call('PATCH', `/v1/webhooks/${id}`, {
      body: { secret_ciphertext: 'new' },
    })
    expect(halfSecret.status).toBe(422)
    const empty = await sandbox.call('PATCH', `/v1/webhooks/${id}`, { body: {} })
    expect(empty.status).toBe(422)
    expect((await sandbox.call('DELETE', `/v1/webhooks/${id}`)).status).toBe(204)
  })

  it('delivers subscribed events, signed with the webhook secret; zero subscriptions and inactive webhooks never fire', async () => {
    const subscribed = await createWebhook({
      url: receiver.url('/hook-a'),
      secret_ciphertext: hookSecret,
      secret_fingerprint: '6789',
      event_subscriptions: [
        { event_type_code: 'run.completed' },
        { event_type_code: 'run.failed' },
      ],
    })
    const silent = await createWebhook({
      url: receiver.url('/hook-silent'),
      secret_ciphertext: 'other',
      secret_fingerprint: 'ther',
    })
    const inactive = await createWebhook({
      url: receiver.url('/hook-off'),
      secret_ciphertext: 'other',
      secret_fingerprint: 'ther',
      event_subscriptions: [{ event_type_code: 'run.completed' }],
    })
    await client.patch('/v1/webhooks/{id}', {
      params: { path: { id: inactive.id } },
      body: { is_active: false },
    })
    expect(silent.event_subscriptions).toEqual([])

    receiver.script('/hook-a', 500)
    const run = finishRun(sandbox, { metadata: { via: 'webhook' } })
    const canceled = finishRun(sandbox, { status_code: 'canceled', output: null })
    const delivery = await waitFor('the webhook delivery', async () => {
      const [d] = await deliveriesOf(subscribed.id)
      return d && FINAL.includes(d.status_code) ? d : undefined
    })
    expect(delivery).toMatchObject({
      webhook_id: subscribed.id,
      event_type_code: 'run.completed',
      run_id: run.id,
      batch_id: null,
      status_code: 'succeeded',
      attempt_count: 2,
      max_attempts: 4,
    })
    expect(delivery.payload).toMatchObject({
      event: 'run.completed',
      run_id: run.id,
      metadata: { via: 'webhook' },
    })
    const got = receiver.at('/hook-a')
    expect(got).toHaveLength(2)
    for (const request of got) {
      expect(request.raw.toString('utf8')).toBe(delivery.payload_bytes)
      expect(request.headers['service-signature']).toBe(hmac(hookSecret, request.raw))
    }
    expect(delivery.attempts).toEqual([
      expect.objectContaining({
        attempt_number: 1,
        status_code: 500,
        succeeded: false,
        next_retry_at: expect.stringMatching(CALLBACK_TIME),
      }),
      expect.objectContaining({
        attempt_number: 2,
        status_code: 200,
        succeeded: true,
        next_retry_at: null,
      }),
    ])

    // The attempts are records of their own, joined by the Service-Request-Id the receiver saw.
    const attempts = await client.get(
      '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/attempts',
      {
        params: { path: { webhook_id: 'any', delivery_id: delivery.id } },
      },
    )
    expect(attempts.items).toEqual(delivery.attempts)
    const requestId = String(got[1]?.headers['service-request-id'])
    const attempt = await sandbox.call(
      'GET',
      `/v1/webhooks/${subscribed.id}/deliveries/${delivery.id}/attempts/${requestId}`,
    )
    expect(attempt.body).toEqual(delivery.attempts[1])
    const failedOnly = await sandbox.call(
      'GET',
      `/v1/webhooks/any/deliveries/${delivery.id}/attempts?q=${encodeURIComponent('succeeded=false')}`,
    )
    expect(
      (failedOnly.body as Page<WebhookDeliveryAttempt>).items.map((a) => a.attempt_number),
    ).toEqual([1])
    const one = await sandbox.call('GET', `/v1/webhooks/any/deliveries/${delivery.id}`)
    expect(one.body).toEqual(delivery)
    expect(
      (await sandbox.call('GET', `/v1/webhooks/${silent.id}/deliveries/${delivery.id}`)).status,
    ).toBe(404)
    expect(
      (await sandbox.call('GET', `/v1/webhooks/${silent.id}/deliveries/${delivery.id}/attempts`))
        .status,
    ).toBe(404)
    expect(
      (
        await sandbox.call(
          'GET',
          `/v1/webhooks/any/deliveries/${delivery.id}/attempts/${randomUUID()}`,
        )
      ).status,
    ).toBe(404)

    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.at('/hook-silent')).toEqual([])
    expect(receiver.at('/hook-off')).toEqual([])
    expect(await deliveriesOf(silent.id)).toEqual([])
    expect(await deliveriesOf(inactive.id)).toEqual([])
    // Not subscribed to run.cancelled: the canceled run went nowhere.
    expect((await deliveriesOf('any', `run_id=${canceled.id}`)).length).toBe(0)
    const across = await deliveriesOf('any', `run_id=${run.id}`)
    expect(across.map((d) => d.webhook_id)).toEqual([subscribed.id])

    // Subscriptions, URL and secret change by PATCH; the next event follows them.
    await client.patch('/v1/webhooks/{id}', {
      params: { path: { id: subscribed.id } },
      body: {
        url: receiver.url('/hook-b'),
        secret_ciphertext: 'rotated secret',
        secret_fingerprint: 'cret',
        event_subscriptions: [{ event_type_code: 'run.cancelled' }],
      },
    })
    const completedAgain = finishRun(sandbox, {})
    const canceledAgain = finishRun(sandbox, { status_code: 'canceled', output: null })
    const rotated = await waitFor('the rotated delivery', async () => {
      const [d] = await deliveriesOf('any', `run_id=${canceledAgain.id}`)
      return d && FINAL.includes(d.status_code) ? d : undefined
    })
    expect(rotated).toMatchObject({ event_type_code: 'run.cancelled', status_code: 'succeeded' })
    const [rotatedGot] = receiver.at('/hook-b')
    expect(rotatedGot?.headers['service-signature']).toBe(
      hmac('rotated secret', rotatedGot?.raw ?? Buffer.alloc(0)),
    )
    expect(await deliveriesOf('any', `run_id=${completedAgain.id}`)).toEqual([])

    // Deleting a webhook takes its history with it.
    for (const webhook of [subscribed, silent, inactive]) {
      expect((await sandbox.call('DELETE', `/v1/webhooks/${webhook.id}`)).status).toBe(204)
    }
    expect((await sandbox.call('GET', `/v1/webhooks/${subscribed.id}/deliveries`)).status).toBe(404)
    expect((await sandbox.call('GET', `/v1/webhooks/any/deliveries/${delivery.id}`)).status).toBe(
      404,
    )
    expect(await deliveriesOf('any', `webhook_id=${subscribed.id}`)).toEqual([])
    finishRun(sandbox, { status_code: 'canceled', output: null })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.at('/hook-b')).toHaveLength(1)
  })

  it('delivers batch events to webhooks subscribed to them', async () => {
    const hook = await createWebhook({
      url: receiver.url('/hook-batch'),
      secret_ciphertext: hookSecret,
      secret_fingerprint: '6789',
      event_subscriptions: [{ event_type_code: 'batch.succeeded' }],
    })
    const run = makeRun(sandbox, {})
    sandbox.services.store.insert('runs', sandbox.orgId, run)
    const batch: Batch = {
      id: sandbox.services.store.newId(),
      org_id: sandbox.orgId,
      model_slug: 'atelier/caption',
      status_code: 'succeeded',
      item_count: 1,
      succeeded_count: 1,
      failed_count: 0,
      canceled_count: 0,
      items: [{ index: 0, run_id: run.id, status_code: 'succeeded' }],
      callback_url: null,
      metadata: null,
      cost: null,
      created_at: sandbox.services.store.now(),
      updated_at: sandbox.services.store.now(),
      completed_at: sandbox.services.store.now(),
    }
    sandbox.services.store.insert('batches', sandbox.orgId, batch)
    sandbox.services.events.emit('batch.finished', sandbox.orgId, batch)
    const delivery = await waitFor('the batch webhook delivery', async () => {
      const [d] = await deliveriesOf(hook.id)
      return d && FINAL.includes(d.status_code) ? d : undefined
    })
    expect(delivery).toMatchObject({
      event_type_code: 'batch.succeeded',
      batch_id: batch.id,
      run_id: null,
      status_code: 'succeeded',
      payload: { event: 'batch.succeeded', batch_id: batch.id },
    })
    const [got] = receiver.at('/hook-batch')
    expect(got?.headers['service-signature']).toBe(hmac(hookSecret, got?.raw ?? Buffer.alloc(0)))
    expect((await sandbox.call('DELETE', `/v1/webhooks/${hook.id}`)).status).toBe(204)
  })
})

describe('organization isolation', () => {
  it('shows another organization none of the deliveries or webhooks', async () => {
    const hook = await client.post('/v1/webhooks', {
      body: {
        url: receiver.url('/hook-private'),
        secret_ciphertext: 'private',
        secret_fingerprint: 'vate',
        event_subscriptions: [{ event_type_code: 'run.completed' }],
      },
    })
    const run = finishRun(sandbox, { callback_url: receiver.url('/private') })
    await settledRunDelivery(run.id)
    const [delivery] = await waitFor('the private webhook delivery', async () => {
      const response = await sandbox.call('GET', `/v1/webhooks/${hook.id}/deliveries`)
      const items = (response.body as Page<WebhookDelivery>).items
      return items.length > 0 && FINAL.includes(items[0]?.status_code ?? '') ? items : undefined
    })
    if (!delivery) throw new Error('no delivery')
    const other = { key: sandbox.keys.otherOrg }
    const notFound = [
      `/v1/runs/${run.id}/callback`,
      `/v1/webhooks/${hook.id}`,
      `/v1/webhooks/${hook.id}/deliveries`,
      `/v1/webhooks/any/deliveries/${delivery.id}`,
      `/v1/webhooks/any/deliveries/${delivery.id}/attempts`,
      `/v1/webhooks/any/deliveries/${delivery.id}/attempts/${delivery.attempts[0]?.id ?? ''}`,
    ]
    for (const path of notFound) {
      expect({ path, status: (await sandbox.call('GET', path, other)).status }).toEqual({
        path,
        status: 404,
      })
    }
    expect(
      (await sandbox.call('POST', `/v1/runs/${run.id}/callback-redeliveries`, other)).status,
    ).toBe(404)
    expect(
      (
        await sandbox.call('PATCH', `/v1/webhooks/${hook.id}`, {
          ...other,
          body: { is_active: false },
        })
      ).status,
    ).toBe(404)
    expect((await sandbox.call('DELETE', `/v1/webhooks/${hook.id}`, other)).status).toBe(404)
    for (const path of ['/v1/webhooks', '/v1/webhooks/any/deliveries']) {
      const response = await sandbox.call('GET', path, other)
      expect(response.status).toBe(200)
      expect((response.body as Page<unknown>).items).toEqual([])
    }
    // The other organization's events never reach this organization's webhooks.
    const theirs = finishRun(sandbox, {}, sandbox.otherOrgId)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const mine = await sandbox.call(
      'GET',
      `/v1/webhooks/any/deliveries?q=${encodeURIComponent(`run_id=${theirs.id}`)}`,
    )
    expect((mine.body as Page<unknown>).items).toEqual([])
    expect((await sandbox.call('DELETE', `/v1/webhooks/${hook.id}`)).status).toBe(204)
  })
})

// Comes after the tests that expect `secret` to be the organization's newest: it adds newer ones.
describe('a run dispatched through the API', () => {
  it('calls back once it finishes, signed with the secret the dispatch named', async () => {
    const named = await client.post('/v1/callback-secrets', { body: { label: 'dispatch' } })
    // A newer secret exists, so only the dispatch's own choice explains the signature.
    await client.post('/v1/callback-secrets', { body: { label: 'newest' } })
    const run = await client.post('/v1/models/{provider}/{model}/runs', {
      params: { path: { provider: 'atelier', model: 'text-to-image' } },
      body: {
        input: { prompt: 'a fox at dusk', width: 64, height: 64 },
        callback_url: receiver.url('/dispatched'),
        callback_secret_id: named.id,
        metadata: { intent: 'ri_7' },
      },
    })
    const delivery = await settledRunDelivery(run.id)
    const finished = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: run.id } } })
    const [got] = receiver.at('/dispatched')
    expect(got?.headers['service-signature']).toBe(
      hmac(named.plain_secret, got?.raw ?? Buffer.alloc(0)),
    )
    expect(delivery.signing_secret_id).toBe(named.id)
    expect(delivery.payload).toMatchObject({
      event: finished.status_code === 'succeeded' ? 'run.completed' : 'run.failed',
      run_id: run.id,
      status: finished.status_code,
      duration_ms: finished.duration_ms,
      metadata: { intent: 'ri_7' },
    })
    expect(delivery.payload.completed_at).toMatch(CALLBACK_TIME)
    expect(Date.parse(delivery.payload.completed_at)).toBe(Date.parse(finished.completed_at ?? ''))
  })
})

describe('delivery settings and restarts', () => {
  it('keeps its timing controls for the admin key only', async () => {
    expect((await sandbox.call('GET', '/_sandbox/delivery-settings')).body).toEqual({
      timeout_ms: 3_000,
      retry_base_ms: 20,
      max_attempts: 4,
    })
    const denied = await sandbox.call('PUT', '/_sandbox/delivery-settings', {
      key: sandbox.keys.limited,
      body: { max_attempts: 2 },
    })
    expect(denied.status).toBe(403)
    const invalid = await sandbox.call('PUT', '/_sandbox/delivery-settings', {
      body: { max_attempts: 0 },
    })
    expect(invalid.status).toBe(422)
  })

  it('picks up unfinished deliveries after a restart; stop() cuts attempts off unrecorded', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'atelier-deliveries-'))
    const errors = vi.spyOn(console, 'error')
    try {
      const first = await startTestSandbox({ dataDir })
      await first.call('PUT', '/_sandbox/delivery-settings', {
        body: { timeout_ms: 5_000, retry_base_ms: 600 },
      })
      receiver.script('/restart-hang', 'hang')
      receiver.script('/restart-queued', 500)
      const hung = finishRun(first, { callback_url: receiver.url('/restart-hang') })
      const queued = finishRun(first, { callback_url: receiver.url('/restart-queued') })
      await waitFor('the cut-off attempt to start', () =>
        receiver.at('/restart-hang').length === 1 ? true : undefined,
      )
      await waitFor('the first attempt to fail', async () => {
        const response = await first.call('GET', `/v1/runs/${queued.id}/callback`)
        const [delivery] = response.body as RunCallbackDelivery[]
        return delivery?.status_code === 'queued' ? delivery : undefined
      })
      const beforeClose = await first.call('GET', `/v1/runs/${hung.id}/callback`)
      expect((beforeClose.body as RunCallbackDelivery[])[0]?.status_code).toBe('processing')
      await first.close()
      await waitFor('the receiver to see the hang-up', () =>
        receiver.at('/restart-hang')[0]?.abandoned ? true : undefined,
      )

      const second = await startTestSandbox({ dataDir })
      try {
        const settled = async (runId: string) =>
          waitFor(`run ${runId} after the restart`, async () => {
            const response = await second.call('GET', `/v1/runs/${runId}/callback`)
            const [delivery] = response.body as RunCallbackDelivery[]
            return delivery && FINAL.includes(delivery.status_code) ? delivery : undefined
          })
        const resumed = await settled(hung.id)
        expect(resumed).toMatchObject({ status_code: 'succeeded', attempt_count: 1 })
        const hangs = receiver.at('/restart-hang')
        expect(hangs).toHaveLength(2)
        expect(hangs[1]?.raw.equals(hangs[0]?.raw ?? Buffer.alloc(0))).toBe(true)
        expect(resumed.attempts[0]?.id).toBe(hangs[1]?.headers['service-request-id'])

        const retried = await settled(queued.id)
        expect(retried).toMatchObject({ status_code: 'succeeded', attempt_count: 2 })
        expect(receiver.at('/restart-queued')).toHaveLength(2)
      } finally {
        await second.close()
      }
      expect(errors).not.toHaveBeenCalled()
    } finally {
      errors.mockRestore()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

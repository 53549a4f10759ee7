import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Batch, BatchCallbackDelivery, Page, Run } from '../../src-shared/api'
import { parseCredits } from '../../src-main/sandbox/accounts'
import { decimalToMicro } from '../../src-main/sandbox/models'
import {
  createServiceClient,
  newIdempotencyKey,
  ServiceError,
  type ServiceClient,
} from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/** One POST the receiver got: its path, headers and parsed body. */
interface Received {
  path: string
  signature: string | undefined
  body: Record<string, unknown>
}

let sandbox: TestSandbox
let client: ServiceClient
let receiver: Server
let receiverUrl = ''
const received: Received[] = []
const finishedBatches = new Map<string, Batch[]>()

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const signature = request.headers['service-signature']
      received.push({
        path: request.url ?? '',
        signature: typeof signature === 'string' ? signature : undefined,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      })
      response.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  // Long enough for slow-render items to be caught running; flaky runs still take ~70 ms.
  sandbox = await startTestSandbox({ latencyMs: 100 })
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  sandbox.services.events.on('batch.finished', (_orgId, batch) => {
    finishedBatches.set(batch.id, [...(finishedBatches.get(batch.id) ?? []), batch])
  })
  const settings = await sandbox.call('PUT', '/_sandbox/delivery-settings', {
    body: { timeout_ms: 2000, retry_base_ms: 20, max_attempts: 3 },
  })
  expect(settings.status).toBe(200)
})

afterAll(async () => {
  await sandbox.close()
  await new Promise((resolve) => receiver.close(resolve))
})

const TERMINAL = ['succeeded', 'partial_succeeded', 'failed', 'canceled']

async function getBatch(id: string): Promise<Batch> {
  return client.get('/v1/batches/{batch_id}', { params: { path: { batch_id: id } } })
}

/** Polls until the batch is terminal (bounded). */
async function finished(id: string): Promise<Batch> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const batch = await getBatch(id)
    if (TERMINAL.includes(batch.status_code)) return batch
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status_code}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function waitFor<T>(what: string, check: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function runsOf(batchId: string): Promise<Run[]> {
  const page = await client.get('/v1/runs', {
    params: { query: { q: `batch_id=${batchId}`, sort_by: 'created_at:asc', limit: 100 } },
  })
  return page.items
}

async function balanceMicro(): Promise<number> {
  const balance = await client.get('/v1/billing/balance')
  return parseCredits(balance.balance)
}

describe('batches', () => {
  let mixed: Batch

  it('creates one run per item and answers the queued batch with its items', async () => {
    mixed = await client.post('/v1/batches', {
      body: {
        model: 'atelier/flaky',
        items: [
          { input: { failure_rate: 0, seed: 1 }, metadata: { row: 1 } },
          { input: { failure_rate: 1, seed: 2 }, metadata: { row: 2 } },
          { input: { failure_rate: 0, seed: 3 } },
        ],
        callback_url: `${receiverUrl}/batches/mixed`,
        metadata: { campaign: 'spring' },
      },
      headers: { 'Idempotency-Key': newIdempotencyKey() },
    })
    expect(mixed).toMatchObject({
      org_id: sandbox.orgId,
      model_slug: 'atelier/flaky',
      status_code: 'queued',
      item_count: 3,
      succeeded_count: 0,
      failed_count: 0,
      canceled_count: 0,
      callback_url: `${receiverUrl}/batches/mixed`,
      metadata: { campaign: 'spring' },
      completed_at: null,
    })
    expect(mixed).not.toHaveProperty('_sandbox')
    expect(mixed.items.map((item) => [item.index, item.status_code])).toEqual([
      [0, 'queued'],
      [1, 'queued'],
      [2, 'queued'],
    ])
    const runs = await runsOf(mixed.id)
    expect(runs.map((run) => run.id)).toEqual(mixed.items.map((item) => item.run_id))
    for (const [index, run] of runs.entries()) {
      expect(run).toMatchObject({
        batch_id: mixed.id,
        source_code: 'batch',
        model_slug: 'atelier/flaky',
        callback_url: null,
        metadata: index < 2 ? { row: index + 1 } : null,
      })
    }
    for (const run of runs) expect(run.estimated_cost).toBe('0.0010')
  })

  it('follows its runs to partial_succeeded, with per-item status, counts and cost', async () => {
    const batch = await finished(mixed.id)
    const runs = await runsOf(mixed.id)
    expect(runs.map((run) => run.status_code)).toEqual(['succeeded', 'failed', 'succeeded'])
    expect(batch).toMatchObject({
      status_code: 'partial_succeeded',
      succeeded_count: 2,
      failed_count: 1,
      canceled_count: 0,
    })
    expect(batch.items.map((item) => item.status_code)).toEqual([
      'succeeded',
      'failed',
      'succeeded',
    ])
    const cost = runs.reduce((sum, run) => sum + decimalToMicro(run.cost ?? '0'), 0)
    expect(decimalToMicro(batch.cost ?? '')).toBe(cost)
    expect(cost).toBeGreaterThan(0)
    expect(batch.completed_at).not.toBeNull()
    expect(Date.parse(batch.completed_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(batch.created_at),
    )
  })

  it('sends one signed batch callback with the items envelope and fires batch.finished once', async () => {
    const got = await waitFor('the batch callback', () =>
      received.find((entry) => entry.path === '/batches/mixed'),
    )
    expect(got.signature).toMatch(/^[0-9a-f]{64}$/)
    expect(got.body).toMatchObject({
      event: 'run.partial_succeeded',
      batch_id: mixed.id,
      status: 'partial_succeeded',
      metadata: { campaign: 'spring' },
      output: { succeeded: 2, failed: 1, cancelled: 0, total: 3 },
    })
    const items = (got.body.output as { items: Record<string, unknown>[] }).items
    expect(items.map((item) => [item.index, item.run_id, item.status])).toEqual(
      mixed.items.map((item, index) => [index, item.run_id, index === 1 ? 'failed' : 'succeeded']),
    )
    expect(items[1]?.output).toMatchObject({ code: 'MODEL_ERROR' })
    // Nothing more arrives: one batch, one callback.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(received.filter((entry) => entry.path === '/batches/mixed')).toHaveLength(1)
    expect(finishedBatches.get(mixed.id)?.map((batch) => batch.status_code)).toEqual([
      'partial_succeeded',
    ])
    const deliveries = await sandbox.call('GET', `/v1/batches/${mixed.id}/callback`)
    expect(deliveries.status).toBe(200)
    const history = deliveries.body as BatchCallbackDelivery[]
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({ batch_id: mixed.id, status_code: 'succeeded' })
  })

  it('ends succeeded when every item succeeds and failed when every item fails', async () => {
    const good = await client.post('/v1/batches', {
      body: {
        model: 'atelier/flaky',
        items: [{ input: { failure_rate: 0 } }, { input: { failure_rate: 0 } }],
      },
    })
    const bad = await client.post('/v1/batches', {
      body: {
        model: 'atelier/flaky',
        items: [{ input: { failure_rate: 1 } }, { input: { failure_rate: 1 } }],
      },
    })
    expect(await finished(good.id)).toMatchObject({
      status_code: 'succeeded',
      succeeded_count: 2,
      callback_url: null,
    })
    const failed = await finished(bad.id)
    expect(failed).toMatchObject({ status_code: 'failed', failed_count: 2, cost: '0.0000' })
  })

  it('replays the batch for the same Idempotency-Key and body, 409 for another body', async () => {
    const key = newIdempotencyKey()
    const body = { model: 'atelier/flaky', items: [{ input: { failure_rate: 0, seed: 9 } }] }
    const first = await sandbox.call('POST', '/v1/batches', {
      body,
      headers: { 'Idempotency-Key': key },
    })
    expect(first.status).toBe(201)
    const again = await sandbox.call('POST', '/v1/batches', {
      body,
      headers: { 'Idempotency-Key': key },
    })
    expect(again.status).toBe(200)
    const batch = first.body as Batch
    expect((again.body as Batch).id).toBe(batch.id)
    expect(await runsOf(batch.id)).toHaveLength(1)
    const other = await sandbox.call('POST', '/v1/batches', {
      body: { ...body, items: [{ input: { failure_rate: 0, seed: 10 } }] },
      headers: { 'Idempotency-Key': key },
    })
    expect(other.status).toBe(409)
    expect(other.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' })
    await finished(batch.id)
  })

  it('answers 402 up front when the balance cannot pay for every item, and creates nothing', async () => {
    const listed = (await client.get('/v1/batches', { params: { query: { limit: 500 } } })).items
    const runCount = (await client.get('/v1/runs', { params: { query: { limit: 500 } } })).items
      .length
    // Enough for one 512×512 picture (0.0105), not for three.
    expect(
      (await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '0.02' } })).status,
    ).toBe(200)
    try {
      const before = await balanceMicro()
      const response = await sandbox.call('POST', '/v1/batches', {
        body: {
          model: 'atelier/text-to-image',
          items: ['red', 'green', 'blue'].map((colour) => ({ input: { prompt: `${colour} sea` } })),
        },
      })
      expect(response.status).toBe(402)
      expect(response.body).toMatchObject({ code: 'INSUFFICIENT_CREDIT' })
      expect((response.body as { message: string }).message).toMatch(/0\.031458 credits/)
      expect(await balanceMicro()).toBe(before)
      expect(
        (await client.get('/v1/batches', { params: { query: { limit: 500 } } })).items,
      ).toHaveLength(listed.length)
      expect(
        (await client.get('/v1/runs', { params: { query: { limit: 500 } } })).items,
      ).toHaveLength(runCount)
    } finally {
      await sandbox.call('PUT', '/_sandbox/balance', { body: { balance: '1000' } })
    }
  })

  it('cancels the unfinished runs of a running batch: canceled, refunded, 409 the second time', async () => {
    const before = await balanceMicro()
    const batch = await client.post('/v1/batches', {
      body: {
        model: 'atelier/slow-render',
        items: [1, 2, 3].map((seed) => ({
          input: { prompt: 'orange sunrise', width: 64, height: 64, seed },
        })),
        callback_url: `${receiverUrl}/batches/canceled`,
      },
    })
    // The runs take about two seconds; the batch turns running as soon as one starts.
    const deadline = Date.now() + 5000
    let running = await getBatch(batch.id)
    while (running.status_code === 'queued' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      running = await getBatch(batch.id)
    }
    expect(running.status_code).toBe('running')
    expect(running.items.some((item) => item.status_code !== 'queued')).toBe(true)

    const canceled = await client.post('/v1/batches/{batch_id}/cancel', {
      params: { path: { batch_id: batch.id } },
    })
    expect(canceled).toMatchObject({
      status_code: 'canceled',
      canceled_count: 3,
      succeeded_count: 0,
      cost: '0.0000',
    })
    expect(canceled.completed_at).not.toBeNull()
    expect(canceled.items.map((item) => item.status_code)).toEqual([
      'canceled',
      'canceled',
      'canceled',
    ])
    expect((await runsOf(batch.id)).map((run) => run.status_code)).toEqual([
      'canceled',
      'canceled',
      'canceled',
    ])
    expect(await balanceMicro()).toBe(before)

    const again = await client
      .post('/v1/batches/{batch_id}/cancel', { params: { path: { batch_id: batch.id } } })
      .catch((error: unknown) => error)
    expect(again).toBeInstanceOf(ServiceError)
    expect(again).toMatchObject({ status: 409, code: 'CONFLICT' })

    const got = await waitFor('the canceled batch callback', () =>
      received.find((entry) => entry.path === '/batches/canceled'),
    )
    expect(got.body).toMatchObject({
      status: 'canceled',
      output: { succeeded: 0, failed: 0, cancelled: 3, total: 3 },
    })
    expect(finishedBatches.get(batch.id)).toHaveLength(1)
  })

  it('lists batches newest first with q and fields, and shows another organization none of them', async () => {
    const page = (await sandbox.call('GET', '/v1/batches?q=status_code=partial_succeeded'))
      .body as Page<Batch>
    expect(page.items.map((batch) => batch.id)).toContain(mixed.id)
    expect(page.items.every((batch) => batch.status_code === 'partial_succeeded')).toBe(true)
    for (const batch of page.items) expect(batch).not.toHaveProperty('_sandbox')

    const all = (await sandbox.call('GET', '/v1/batches?limit=500')).body as Page<Batch>
    const created = all.items.map((batch) => batch.created_at)
    expect([...created].sort().reverse()).toEqual(created)

    const slim = (await sandbox.call('GET', `/v1/batches?fields=status_code,cost&q=id=${mixed.id}`))
      .body as Page<Batch>
    expect(slim.items).toEqual([
      { id: mixed.id, status_code: 'partial_succeeded', cost: expect.any(String) },
    ])

    const other = sandbox.keys.otherOrg
    expect(
      ((await sandbox.call('GET', '/v1/batches', { key: other })).body as Page<Batch>).items,
    ).toEqual([])
    expect((await sandbox.call('GET', `/v1/batches/${mixed.id}`, { key: other })).status).toBe(404)
    const cancel = await sandbox.call('POST', `/v1/batches/${mixed.id}/cancel`, { key: other })
    expect(cancel.status).toBe(404)
    const runs = (await sandbox.call('GET', `/v1/runs?q=batch_id=${mixed.id}`, { key: other }))
      .body as Page<Run>
    expect(runs.items).toEqual([])
  })

  it('refuses an unknown model (404) and an empty or oversized batch (contract)', async () => {
    const unknown = await sandbox.call('POST', '/v1/batches', {
      body: { model: 'atelier/nope', items: [{ input: {} }] },
    })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND' })
    const empty = await sandbox.call('POST', '/v1/batches', {
      body: { model: 'atelier/flaky', items: [] },
    })
    expect(empty.status).toBeGreaterThanOrEqual(400)
    expect(empty.status).toBeLessThan(500)
    const tooMany = await sandbox.call('POST', '/v1/batches', {
      body: {
        model: 'atelier/flaky',
        items: Array.from({ length: 1001 }, () => ({ input: { failure_rate: 0 } })),
      },
    })
    expect(tooMany.status).toBeGreaterThanOrEqual(400)
    expect(tooMany.status).toBeLessThan(500)
  })

  it('ends a batch left unfinished by the previous process failed, once, with its runs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'atelier-sandbox-batches-'))
    try {
      const first = await startTestSandbox({ dataDir, latencyMs: 2_000 })
      const created = await first.call('POST', '/v1/batches', {
        body: {
          model: 'atelier/slow-render',
          items: [{ input: { prompt: 'interrupted', width: 64, height: 64 } }, { input: {} }],
        },
      })
      expect(created.status).toBe(201)
      const batch = created.body as Batch
      await first.close()

      const second = await startTestSandbox({ dataDir })
      const events: Batch[] = []
      second.services.events.on('batch.finished', (_orgId, finishedBatch) =>
        events.push(finishedBatch),
      )
      try {
        let after: Batch | undefined
        for (let i = 0; i < 200 && after?.status_code !== 'failed'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 10))
          after = (await second.call('GET', `/v1/batches/${batch.id}`)).body as Batch
        }
        expect(after).toMatchObject({ status_code: 'failed', failed_count: 2, cost: '0.0000' })
        expect(after?.items.map((item) => item.status_code)).toEqual(['failed', 'failed'])
        const runs = (await second.call('GET', `/v1/runs?q=batch_id=${batch.id}`)).body as Page<Run>
        expect(runs.items.map((run) => run.failure_code)).toEqual([
          'SANDBOX_RESTARTED',
          'SANDBOX_RESTARTED',
        ])
        expect(events.map((event) => [event.id, event.status_code])).toEqual([[batch.id, 'failed']])
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

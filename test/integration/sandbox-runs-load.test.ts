import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page, Run } from '../../src-shared/api'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * A bounded load test on loopback: 2,000 run dispatches, 200 in flight at a time, each with its
 * own Idempotency-Key; then the same 2,000 again, which must create nothing.
 */
const RUNS = 2_000
const IN_FLIGHT = 200

let sandbox: TestSandbox
const finishedEvents = new Map<string, number>()

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  sandbox.services.events.on('run.finished', (_orgId, run) => {
    finishedEvents.set(run.id, (finishedEvents.get(run.id) ?? 0) + 1)
  })
  // Opens the connections and warms the server up, so the test measures dispatches.
  await pool(IN_FLIGHT, IN_FLIGHT, () => sandbox.call('GET', '/v1/health'))
})

afterAll(async () => {
  await sandbox.close()
})

/** Runs `task` for 0..count-1 with at most `limit` promises pending. */
async function pool<T>(count: number, limit: number, task: (index: number) => Promise<T>) {
  const results = new Array<T>(count)
  let next = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      results[index] = await task(index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
  return results
}

const keyOf = (index: number) => `load-test-${index}`

async function dispatchAll(): Promise<{ status: number; id: string }[]> {
  return pool(RUNS, IN_FLIGHT, async (index) => {
    const response = await sandbox.call('POST', '/v1/models/atelier/text-to-image/runs', {
      headers: { 'Idempotency-Key': keyOf(index) },
      body: { input: { prompt: `load ${index}`, width: 64, height: 64, seed: index } },
    })
    return { status: response.status, id: (response.body as Run).id }
  })
}

async function allRuns(): Promise<Run[]> {
  const runs: Run[] = []
  let pq: string | null = null
  for (let page = 0; page < 20; page++) {
    const query = `limit=500&fields=id,status_code,idempotency_key${pq ? `&pq=${encodeURIComponent(pq)}` : ''}`
    const body = (await sandbox.call('GET', `/v1/runs?${query}`)).body as Page<Run>
    runs.push(...body.items)
    pq = body.next
    if (!pq) break
  }
  return runs
}

describe('2,000 concurrent dispatches', () => {
  it('create exactly 2,000 runs, then none when repeated with the same keys', async () => {
    const first = await dispatchAll()
    expect(first.filter((result) => result.status === 201)).toHaveLength(RUNS)
    const ids = new Set(first.map((result) => result.id))
    expect(ids.size).toBe(RUNS)

    const stored = await allRuns()
    expect(stored).toHaveLength(RUNS)
    expect(new Set(stored.map((run) => run.id))).toEqual(ids)
    expect(new Set(stored.map((run) => run.idempotency_key)).size).toBe(RUNS)

    const again = await dispatchAll()
    expect(again.filter((result) => result.status === 200)).toHaveLength(RUNS)
    again.forEach((result, index) => {
      expect(result.id).toBe(first[index]?.id)
    })
    expect(await allRuns()).toHaveLength(RUNS)

    // Every run reaches the end of its life cycle, announced once. (The bounds here and below
    // only stop a hung test: 4,000 dispatches take most of a minute on a machine running two
    // suites at once, and the figure that matters is the benchmark's, not this test's.)
    const deadline = Date.now() + 60_000
    while (finishedEvents.size < RUNS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(finishedEvents.size).toBe(RUNS)
    expect([...finishedEvents.values()].every((count) => count === 1)).toBe(true)
    const statuses = new Set((await allRuns()).map((run) => run.status_code))
    expect(statuses).toEqual(new Set(['succeeded']))
  }, 150_000)

  it('makes one run of 2,000 concurrent dispatches with one key', async () => {
    const results = await pool(RUNS, IN_FLIGHT, async () => {
      const response = await sandbox.call('POST', '/v1/models/atelier/text-to-image/runs', {
        headers: { 'Idempotency-Key': 'one-key-for-all' },
        body: { input: { prompt: 'shared', width: 64, height: 64 } },
      })
      return { status: response.status, id: (response.body as Run).id }
    })
    expect(new Set(results.map((result) => result.id)).size).toBe(1)
    expect(results.filter((result) => result.status === 201)).toHaveLength(1)
    expect(results.filter((result) => result.status === 200)).toHaveLength(RUNS - 1)
    expect(await allRuns()).toHaveLength(RUNS + 1)
  }, 90_000)
})

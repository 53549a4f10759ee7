import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prefersExactCount } from '../../src-main/sandbox/list'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const RUNS = 240
const PREFER = { Prefer: 'count=exact' }

interface Listed {
  id: string
}

let sandbox: TestSandbox

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  await seedHistory(sandbox.services, sandbox.orgId, RUNS)
}, 120_000)

afterAll(async () => {
  await sandbox.close()
})

/** Every page of a list, following `next`, with the X-Total-Count each page answered. */
async function walk(
  path: string,
  query: Record<string, string> = {},
  headers: Record<string, string> = PREFER,
): Promise<{ ids: string[]; totals: (string | null)[] }> {
  const ids: string[] = []
  const totals: (string | null)[] = []
  let next: string | null = null
  for (let page = 0; page < 200; page++) {
    const params = new URLSearchParams({ limit: '37', ...query })
    if (next !== null) params.set('pq', next)
    const answer = await sandbox.call('GET', `${path}?${params.toString()}`, { headers })
    expect(answer.status, `${path}: ${answer.text}`).toBe(200)
    const body = answer.body as { items: Listed[]; next: string | null }
    ids.push(...body.items.map((item) => item.id))
    totals.push(answer.headers.get('x-total-count'))
    next = body.next
    if (next === null) return { ids, totals }
  }
  throw new Error(`${path} did not end within 200 pages`)
}

async function firstIds(path: string, query: Record<string, string> = {}): Promise<string[]> {
  const answer = await sandbox.call('GET', `${path}?${new URLSearchParams(query).toString()}`)
  return (answer.body as { items: Listed[] }).items.map((item) => item.id)
}

describe('Prefer: count=exact', () => {
  it('answers X-Total-Count equal to the records listed, on every list with no parent to name', async () => {
    const lists = sandbox.services.contract.operations.filter(
      (op) => op.method === 'GET' && op.operationId.startsWith('list') && !op.path.includes('{'),
    )
    expect(lists.length).toBeGreaterThan(20)
    const checked: string[] = []
    for (const op of lists) {
      if (!sandbox.implemented.has(op.operationId)) continue
      const probe = await sandbox.call('GET', `${op.path}?limit=1`, { headers: PREFER })
      // Lists without the envelope (an array) are not paged and have nothing to count.
      if (!Array.isArray((probe.body as { items?: unknown } | undefined)?.items)) continue
      const { ids, totals } = await walk(op.path)
      expect(new Set(totals), op.path).toEqual(new Set([String(ids.length)]))
      checked.push(op.path)
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        '/v1/runs',
        '/v1/evaluations',
        '/v1/assets',
        '/v1/asset-folders',
        '/v1/tombstones',
        '/v1/models',
        '/v1/comfyui-workflows',
        '/v1/solutions',
        '/v1/catalogs/units',
      ]),
    )
  }, 60_000)

  it('counts what q keeps, whatever the cursor and limit', async () => {
    const cases: Record<string, string>[] = [
      { q: 'status_code=failed' },
      { q: 'status_code=succeeded|canceled', sort_by: 'updated_at:asc' },
      { q: 'model_slug~"TEXT-to"' },
      { q: 'status_code=failed and model_slug!=atelier/flaky' },
    ]
    const runs = (await sandbox.call('GET', `/v1/runs?limit=500&sort_by=created_at:asc`)).body as {
      items: { created_at: string }[]
    }
    const pivot = runs.items[Math.floor(runs.items.length / 2)]?.created_at
    if (!pivot) throw new Error('seed too small')
    cases.push({ q: `created_at>=${pivot}` })
    for (const query of cases) {
      const { ids, totals } = await walk('/v1/runs', query)
      expect(ids.length, query.q).toBeGreaterThan(0)
      expect(ids.length, query.q).toBeLessThan(RUNS)
      expect(new Set(totals), query.q).toEqual(new Set([String(ids.length)]))
    }
    const none = await walk('/v1/runs', { q: 'status_code=queued' })
    expect(none).toEqual({ ids: [], totals: ['0'] })
  }, 60_000)

  it('counts one parent, or every parent with any', async () => {
    // One run in ten has log lines: twenty runs see both kinds.
    const runs = await firstIds('/v1/runs', { limit: '20', sort_by: 'created_at:asc' })
    const sizes = { 'node-runs': 0, logs: 0 }
    for (const run of runs) {
      for (const list of ['node-runs', 'logs'] as const) {
        const { ids, totals } = await walk(`/v1/runs/${run}/${list}`)
        expect(new Set(totals), `${list} of ${run}`).toEqual(new Set([String(ids.length)]))
        sizes[list] += ids.length
      }
    }
    expect(sizes['node-runs']).toBe(20)
    expect(sizes.logs).toBeGreaterThan(0)
    const [model] = await firstIds('/v1/models', { limit: '1' })
    if (!model) throw new Error('no model')
    const one = await walk(`/v1/models/${model}/inputs`)
    const any = await walk('/v1/models/any/inputs')
    expect(one.ids.length).toBeGreaterThan(0)
    expect(any.ids.length).toBeGreaterThan(one.ids.length)
    expect(new Set(one.totals)).toEqual(new Set([String(one.ids.length)]))
    expect(new Set(any.totals)).toEqual(new Set([String(any.ids.length)]))
    const filtered = await walk('/v1/models/any/inputs', { q: 'is_required=true' })
    expect(filtered.ids.length).toBeLessThan(any.ids.length)
    expect(new Set(filtered.totals)).toEqual(new Set([String(filtered.ids.length)]))
  }, 60_000)

  it('sends no count unless asked for one', async () => {
    const without: Record<string, string>[] = [
      {},
      { Prefer: 'return=minimal' },
      { Prefer: 'count=planned' },
    ]
    for (const headers of without) {
      const answer = await sandbox.call('GET', '/v1/runs?limit=5', { headers })
      expect(answer.status).toBe(200)
      expect(answer.headers.get('x-total-count')).toBeNull()
    }
    const combined = await sandbox.call('GET', '/v1/runs?limit=5', {
      headers: { Prefer: 'return=minimal, Count=Exact' },
    })
    expect(combined.headers.get('x-total-count')).toBe(String(RUNS))
  })

  it('parses preferences as RFC 7240 writes them', () => {
    expect(prefersExactCount('count=exact')).toBe(true)
    expect(prefersExactCount(' count = exact ; strict')).toBe(true)
    expect(prefersExactCount(['return=minimal', 'count=exact'])).toBe(true)
    expect(prefersExactCount('count=estimated')).toBe(false)
    expect(prefersExactCount('counts=exact')).toBe(false)
    expect(prefersExactCount(undefined)).toBe(false)
  })

  it('reaches a caller of the service client through onHeaders, page by page', async () => {
    const client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
    const seen: (string | null)[] = []
    let items = 0
    for await (const page of client.pages('/v1/runs', {
      params: { query: { limit: 100, q: 'status_code=succeeded' }, header: PREFER },
      onHeaders: (headers) => seen.push(headers.get('X-Total-Count')),
    })) {
      items += page.items.length
    }
    expect(seen).toHaveLength(Math.ceil(items / 100))
    expect(new Set(seen)).toEqual(new Set([String(items)]))
  })
})

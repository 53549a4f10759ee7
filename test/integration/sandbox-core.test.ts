import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceClient, ServiceError } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

let sandbox: TestSandbox

beforeAll(async () => {
  sandbox = await startTestSandbox()
})

afterAll(async () => {
  await sandbox.close()
})

describe('sandbox authentication', () => {
  it('answers 401 UNAUTHORIZED with the error envelope without a key or with a wrong one', async () => {
    for (const key of [null, 'sk_sandbox_wrong']) {
      const response = await sandbox.call('GET', '/v1/billing/balance', { key })
      expect(response.status).toBe(401)
      expect(response.body).toMatchObject({ code: 'UNAUTHORIZED', message: expect.any(String) })
    }
  })

  it('accepts Bearer and x-api-key', async () => {
    const bearer = await sandbox.call('GET', '/v1/account')
    expect(bearer.status).toBe(200)
    const apiKey = await sandbox.call('GET', '/v1/account', {
      key: null,
      headers: { 'x-api-key': sandbox.keys.admin },
    })
    expect(apiKey.status).toBe(200)
    expect(apiKey.body).toEqual(bearer.body)
  })

  it('selects an organization with X-Organization-Id only where the key is a member', async () => {
    const team = await sandbox.call('GET', '/v1/billing/balance', {
      headers: { 'X-Organization-Id': sandbox.teamOrgId },
    })
    expect(team.status).toBe(200)
    expect(team.body).toMatchObject({ org_id: sandbox.teamOrgId })

    const other = await sandbox.call('GET', '/v1/billing/balance', {
      headers: { 'X-Organization-Id': sandbox.otherOrgId },
    })
    expect(other.status).toBe(403)
    expect(other.body).toMatchObject({ code: 'ORGANIZATION_MEMBERSHIP_REQUIRED' })
  })

  it('describes the credential: organizations and scopes', async () => {
    const admin = await sandbox.call('GET', '/v1/account')
    expect(admin.body).toMatchObject({
      organization: { id: sandbox.orgId },
      organizations: expect.arrayContaining([{ id: sandbox.teamOrgId, name: 'Sandbox Team' }]),
      scopes: expect.arrayContaining(['evaluations:edit']),
    })
    const limited = await sandbox.call('GET', '/v1/account', { key: sandbox.keys.limited })
    expect((limited.body as { scopes: string[] }).scopes).not.toContain('evaluations:edit')
    const other = await sandbox.call('GET', '/v1/account', { key: sandbox.keys.otherOrg })
    expect(other.body).toMatchObject({ organization: { id: sandbox.otherOrgId } })
  })
})

describe('sandbox basics', () => {
  it('tags every response with Service-Request-Id', async () => {
    const ok = await sandbox.call('GET', '/v1/health')
    const denied = await sandbox.call('GET', '/v1/health', { key: null })
    expect(ok.headers.get('service-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(denied.headers.get('service-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(ok.headers.get('service-request-id')).not.toBe(denied.headers.get('service-request-id'))
  })

  it('answers health, readiness and the balance', async () => {
    expect((await sandbox.call('GET', '/v1/health')).body).toEqual({ status: 'ok' })
    expect((await sandbox.call('GET', '/v1/readiness')).body).toMatchObject({ status: 'ready' })
    const balance = await sandbox.call('GET', '/v1/billing/balance')
    expect(balance.body).toMatchObject({ balance: '1000.000000', currency_code: 'credits' })
  })

  it('answers an unknown path with a 404 envelope', async () => {
    const response = await sandbox.call('GET', '/v1/nothing-here')
    expect(response.status).toBe(404)
    expect(response.body).toMatchObject({ code: 'NOT_FOUND' })
  })

  it('rejects a limit outside 1–500 with 422 and errors[]', async () => {
    for (const limit of ['0', '501', 'ten']) {
      const response = await sandbox.call('GET', `/v1/runs/statuses?limit=${limit}`)
      expect(response.status).toBe(422)
      expect(response.body).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [expect.objectContaining({ field: expect.stringContaining('limit') })],
      })
    }
  })

  it('serves the reference tables with pagination, sorting and lookups by code', async () => {
    const first = await sandbox.call('GET', '/v1/runs/statuses?limit=4')
    const page = first.body as { items: { code: string }[]; next: string | null }
    expect(page.items.map((s) => s.code)).toEqual(['queued', 'starting', 'running', 'succeeded'])
    expect(page.next).not.toBeNull()
    const second = await sandbox.call(
      'GET',
      `/v1/runs/statuses?limit=4&pq=${encodeURIComponent(page.next ?? '')}`,
    )
    expect((second.body as { items: { code: string }[] }).items.map((s) => s.code)).toEqual([
      'failed',
      'canceled',
    ])
    const levels = await sandbox.call('GET', '/v1/runs/log-levels/error')
    expect(levels.body).toMatchObject({ code: 'error', color: expect.stringMatching(/^#/) })
    const terminal = await sandbox.call('GET', '/v1/evaluations/statuses?q=is_terminal%3Dtrue')
    expect((terminal.body as { items: { code: string }[] }).items.map((s) => s.code)).toEqual([
      'completed',
      'failed',
    ])
    const missing = await sandbox.call('GET', '/v1/runs/sources/nope')
    expect(missing.status).toBe(404)
  })
})

describe('sandbox fault injection', () => {
  it('is controlled only by the admin key', async () => {
    const denied = await sandbox.call('PUT', '/_sandbox/faults', {
      key: sandbox.keys.limited,
      body: { rules: [] },
    })
    expect(denied.status).toBe(403)
    const invalid = await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ status: 200 }] },
    })
    expect(invalid.status).toBe(422)
  })

  it('injects 503s that the service client retries through', async () => {
    await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ operationId: 'getBalance', status: 503, times: 2 }] },
    })
    const delays: number[] = []
    const client = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      sleep: (ms) => {
        delays.push(ms)
        return Promise.resolve()
      },
    })
    const balance = await client.get('/v1/billing/balance')
    expect(balance.org_id).toBe(sandbox.orgId)
    expect(delays).toHaveLength(2)
    const faults = await sandbox.call('GET', '/_sandbox/faults')
    expect(faults.body).toMatchObject({ rules: [{ fired: 2 }] })
  })

  it('injects 429 with Retry-After, resets and truncated bodies', async () => {
    await sandbox.call('PUT', '/_sandbox/faults', {
      body: {
        rules: [
          { operationId: 'getHealth', status: 429, retryAfterSeconds: 7, times: 1 },
          { operationId: 'getReadiness', reset: 'before', times: 1 },
          { operationId: 'getAccount', truncate: true, times: 1 },
        ],
      },
    })
    const limited = await sandbox.call('GET', '/v1/health')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('7')
    expect(limited.body).toMatchObject({ code: 'RATE_LIMITED' })

    await expect(sandbox.call('GET', '/v1/readiness')).rejects.toThrow()
    await expect(sandbox.call('GET', '/v1/account')).rejects.toThrow()

    // Each rule fired once; the next calls go through.
    expect((await sandbox.call('GET', '/v1/health')).status).toBe(200)
    expect((await sandbox.call('GET', '/v1/readiness')).status).toBe(200)
    expect((await sandbox.call('GET', '/v1/account')).status).toBe(200)
    await sandbox.call('DELETE', '/_sandbox/faults')
  })

  it('gives the client a clean error when a 5xx persists', async () => {
    await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ operationId: 'getBalance', status: 500 }] },
    })
    const client = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      sleep: () => Promise.resolve(),
    })
    const error = await client.get('/v1/billing/balance').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 500, code: 'SERVICE_UNAVAILABLE', attempts: 5 })
    await sandbox.call('DELETE', '/_sandbox/faults')
  })
})

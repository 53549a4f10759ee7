import { getEventListeners } from 'node:events'
import net from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  createServiceClient,
  newIdempotencyKey,
  ServiceError,
  type RetryInfo,
  type ServiceClientOptions,
} from '../../src-main/service'
import {
  reply,
  startMisbehavingServer,
  type MisbehavingServer,
  type Reply,
} from '../helpers/misbehaving-server'
import { resolveRetryPolicy } from '../../src-main/service/retry'
import { createTransport } from '../../src-main/service/transport'

// Distinctive enough that finding it anywhere means it leaked.
const KEY = 'sk-live-SENTINEL-4f1d2a9b7c3e'
const BALANCE = { balance: '12.50', currency_code: 'USD' }
const RUN = { id: '0190a6f0-0000-7000-8000-000000000001', status_code: 'queued' }
const DISPATCH = '/v1/models/{provider}/{model}/runs' as const

let server: MisbehavingServer

beforeEach(async () => {
  server = await startMisbehavingServer()
})

afterEach(async () => {
  await server.close()
})

/** A client whose backoff is recorded instead of waited out; the HTTP is real. */
function clientFor(overrides: Partial<ServiceClientOptions> = {}) {
  const delays: number[] = []
  const retries: RetryInfo[] = []
  const client = createServiceClient({
    baseUrl: server.url,
    apiKey: KEY,
    random: () => 0.5,
    sleep: (ms) => {
      delays.push(ms)
      return Promise.resolve()
    },
    onRetry: (info) => retries.push(info),
    ...overrides,
  })
  return { client, delays, retries }
}

async function failureOf(call: Promise<unknown>): Promise<ServiceError> {
  try {
    await call
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError)
    return error as ServiceError
  }
  throw new Error('expected the call to fail')
}

function dispatch(
  client: ReturnType<typeof clientFor>['client'],
  idempotencyKey?: string,
  signal?: AbortSignal,
) {
  return client.post(DISPATCH, {
    params: {
      path: { provider: 'acme', model: 'sketch' },
      header: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey },
    },
    body: { input: { prompt: 'a red fox' }, metadata: { intent: 'n1' } },
    signal,
  })
}

async function closedPort(): Promise<number> {
  const probe = net.createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as net.AddressInfo
  await new Promise<void>((resolve) => {
    probe.close(() => {
      resolve()
    })
  })
  return port
}

function elapsed(since: number): number {
  return performance.now() - since
}

describe('headers', () => {
  it('sends the key as a Bearer token, the organization and Accept', async () => {
    server.enqueue(reply.json(200, BALANCE))
    const { client } = clientFor({ organizationId: 'org-42' })

    await expect(client.get('/v1/billing/balance')).resolves.toEqual(BALANCE)

    const [request] = server.requests
    expect(request?.method).toBe('GET')
    expect(request?.url).toBe('/v1/billing/balance')
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(request?.headers['x-api-key']).toBeUndefined()
    expect(request?.headers['x-organization-id']).toBe('org-42')
    expect(request?.headers.accept).toBe('application/json')
  })

  it('sends the key as x-api-key when asked, and no organization when none is set', async () => {
    server.enqueue(reply.json(200, BALANCE))
    const { client } = clientFor({ authHeader: 'x-api-key', userAgent: 'Atelier/test' })

    await client.get('/v1/billing/balance')

    const [request] = server.requests
    expect(request?.headers['x-api-key']).toBe(KEY)
    expect(request?.headers.authorization).toBeUndefined()
    expect(request?.headers['x-organization-id']).toBeUndefined()
    expect(request?.headers['user-agent']).toBe('Atelier/test')
  })

  it('lets one call choose another organization', async () => {
    server.enqueue(reply.json(200, BALANCE))
    const { client } = clientFor({ organizationId: 'org-42' })

    await client.get('/v1/billing/balance', {
      params: { header: { 'X-Organization-Id': 'org-7' } },
    })

    expect(server.requests[0]?.headers['x-organization-id']).toBe('org-7')
  })
})

describe('retries', () => {
  it('retries 500, 502 and 503 with full-jitter delays, then returns the data', async () => {
    server.enqueue(
      reply.error(500, 'INTERNAL', 'boom'),
      reply.raw(502, '<html><body>Bad gateway</body></html>', { 'Content-Type': 'text/html' }),
      reply.error(503, 'UNAVAILABLE', 'down'),
      reply.json(200, BALANCE),
    )
    const { client, delays, retries } = clientFor({
      random: Math.random,
      retry: { baseDelayMs: 100, maxDelayMs: 300 },
    })

    await expect(client.get('/v1/billing/balance')).resolves.toEqual(BALANCE)

    expect(server.requests).toHaveLength(4)
    expect(delays).toHaveLength(3)
    delays.forEach((delay, index) => {
      expect(delay).toBeGreaterThanOrEqual(0)
      expect(delay).toBeLessThanOrEqual(Math.min(300, 100 * 2 ** index))
    })
    expect(retries.map((info) => [info.attempt, info.status, info.code])).toEqual([
      [1, 500, 'INTERNAL'],
      [2, 502, 'HTTP_502'],
      [3, 503, 'UNAVAILABLE'],
    ])
    expect(retries.map((info) => info.delayMs)).toEqual(delays)
  })

  it('uses the exponential caps 500, 1000, 2000, 4000 ms by default', async () => {
    for (let i = 0; i < 5; i++) server.enqueue(reply.error(500, 'INTERNAL', 'boom'))
    const { client, delays } = clientFor({ random: () => 0.999999 })

    await failureOf(client.get('/v1/billing/balance'))

    expect(delays).toEqual([499, 999, 1999, 3999])
  })

  it('gives up after 5 attempts in total', async () => {
    for (let i = 0; i < 6; i++) server.enqueue(reply.error(503, 'UNAVAILABLE', 'down'))
    const { client, delays } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(server.requests).toHaveLength(5)
    expect(delays).toHaveLength(4)
    expect(error.attempts).toBe(5)
    expect(error.status).toBe(503)
    expect(error.code).toBe('UNAVAILABLE')
    expect(error.message).toContain('Tried 5 times')
  })

  it('waits what Retry-After says in seconds on a 429', async () => {
    server.enqueue(
      reply.error(429, 'RATE_LIMITED', 'slow down', {}, { 'Retry-After': '2' }),
      reply.json(200, BALANCE),
    )
    const { client, delays, retries } = clientFor()

    await expect(client.get('/v1/billing/balance')).resolves.toEqual(BALANCE)

    expect(delays).toEqual([2000])
    expect(retries[0]?.retryAfterMs).toBe(2000)
  })

  it('waits until the HTTP date of Retry-After, measured against the server clock', async () => {
    server.enqueue(
      reply.error(
        503,
        'UNAVAILABLE',
        'down',
        {},
        { Date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'Retry-After': 'Wed, 21 Oct 2015 07:28:03 GMT' },
      ),
      reply.json(200, BALANCE),
    )
    const { client, delays } = clientFor()

    await client.get('/v1/billing/balance')

    expect(delays).toEqual([3000])
  })

  it('hands a Retry-After longer than maxDelayMs back to the caller instead of waiting', async () => {
    server.enqueue(reply.error(429, 'RATE_LIMITED', 'slow down', {}, { 'Retry-After': '120' }))
    const { client, delays } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(server.requests).toHaveLength(1)
    expect(delays).toEqual([])
    expect(error.code).toBe('RATE_LIMITED')
    expect(error.retryAfterMs).toBe(120_000)
    expect(error.message).toContain('asked to wait 120 s')
  })

  it.each([
    [400, 'BAD_REQUEST'],
    [401, 'UNAUTHORIZED'],
    [403, 'EMAIL_NOT_VERIFIED'],
    [404, 'RUN_NOT_FOUND'],
    [409, 'CONFLICT'],
    [422, 'VALIDATION_ERROR'],
  ])('sends a %i exactly once and throws its code', async (status, code) => {
    const errors = status === 422 ? [{ field: 'input.prompt', message: 'is required' }] : null
    server.enqueue(
      reply.error(status, code, 'service words', { errors }, { 'Service-Request-Id': 'req-123' }),
    )
    const { client, delays } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(server.requests).toHaveLength(1)
    expect(delays).toEqual([])
    expect(error).toMatchObject({
      name: 'ServiceError',
      status,
      code,
      serviceMessage: 'service words',
      errors,
      requestId: 'req-123',
      method: 'GET',
      path: '/v1/billing/balance',
      attempts: 1,
      outcomeUnknown: false,
    })
  })

  it('says what to do about a rejected key', async () => {
    server.enqueue(reply.error(401, 'UNAUTHORIZED', 'Invalid token'))
    const { client } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(error.message).toBe(
      'The service rejected the API key (UNAUTHORIZED). Check the key of this profile.',
    )
    expect(error.serviceMessage).toBe('Invalid token')
  })

  it('takes the request id from X-Request-Id when Service-Request-Id is absent', async () => {
    server.enqueue(reply.error(404, 'NOT_FOUND', 'nope', {}, { 'X-Request-Id': 'proxy-9' }))
    const { client } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(error.requestId).toBe('proxy-9')
  })

  it('does not follow a redirect, which would carry the key elsewhere', async () => {
    const elsewhere = await startMisbehavingServer()
    try {
      server.enqueue(reply.raw(302, '', { Location: `${elsewhere.url}/v1/billing/balance` }))
      const { client } = clientFor()

      const error = await failureOf(client.get('/v1/billing/balance'))

      expect(error.status).toBe(302)
      expect(error.code).toBe('HTTP_302')
      expect(elsewhere.requests).toHaveLength(0)
    } finally {
      await elsewhere.close()
    }
  })
})

describe('connection failures and paid work', () => {
  it('retries a GET whose connection was reset, and succeeds', async () => {
    server.enqueue(reply.reset(), reply.hangUp(), reply.json(200, BALANCE))
    const { client, retries } = clientFor()

    await expect(client.get('/v1/billing/balance')).resolves.toEqual(BALANCE)

    expect(server.requests).toHaveLength(3)
    expect(retries.map((info) => [info.status, info.code])).toEqual([
      [0, 'NETWORK_ERROR'],
      [0, 'NETWORK_ERROR'],
    ])
  })

  it('sends a POST without an idempotency key once when the connection resets', async () => {
    server.enqueue(reply.reset(), reply.json(201, RUN))
    const { client, delays } = clientFor()

    const error = await failureOf(dispatch(client))

    expect(server.requests).toHaveLength(1)
    expect(delays).toEqual([])
    expect(error).toMatchObject({
      status: 0,
      code: 'OUTCOME_UNKNOWN',
      outcomeUnknown: true,
      method: 'POST',
      path: '/v1/models/acme/sketch/runs',
      attempts: 1,
    })
    expect(error.message).toContain('unknown whether the service acted on it')
  })

  it('retries a POST with an idempotency key, sending the same key and body each time', async () => {
    server.enqueue(reply.reset(), reply.hangUp(), reply.json(201, RUN))
    const { client } = clientFor()
    const key = newIdempotencyKey()

    await expect(dispatch(client, key)).resolves.toEqual(RUN)

    expect(server.requests).toHaveLength(3)
    for (const request of server.requests) {
      expect(request.headers['idempotency-key']).toBe(key)
      expect(JSON.parse(request.body)).toEqual({
        input: { prompt: 'a red fox' },
        metadata: { intent: 'n1' },
      })
    }
  })

  it('reports OUTCOME_UNKNOWN when every attempt of a keyed POST broke after sending', async () => {
    for (let i = 0; i < 5; i++) server.enqueue(reply.reset())
    const { client } = clientFor()

    const error = await failureOf(dispatch(client, newIdempotencyKey()))

    expect(server.requests).toHaveLength(5)
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', outcomeUnknown: true, attempts: 5 })
  })

  it('keeps the outcome unknown when a keyed POST broke and the service then failed', async () => {
    server.enqueue(reply.reset(), reply.error(503, 'UNAVAILABLE', 'down'))
    const { client } = clientFor({ retry: { maxAttempts: 2 } })

    const error = await failureOf(dispatch(client, newIdempotencyKey()))

    expect(error).toMatchObject({ code: 'UNAVAILABLE', outcomeUnknown: true, attempts: 2 })
  })

  it('trusts a refusal to a keyed POST that broke before', async () => {
    server.enqueue(reply.reset(), reply.error(422, 'VALIDATION_ERROR', 'bad input'))
    const { client } = clientFor()

    const error = await failureOf(dispatch(client, newIdempotencyKey()))

    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', outcomeUnknown: false, attempts: 2 })
  })

  it('does not retry a 5xx to a POST without a key, and flags a gateway error as unknown', async () => {
    server.enqueue(reply.error(502, 'BAD_GATEWAY', 'upstream'), reply.json(201, RUN))
    const { client } = clientFor()

    const error = await failureOf(dispatch(client))

    expect(server.requests).toHaveLength(1)
    expect(error).toMatchObject({ status: 502, code: 'BAD_GATEWAY', outcomeUnknown: true })
  })

  it('retries a POST without a key once when the connection was refused, as nothing was sent', async () => {
    const port = await closedPort()
    const { client, delays } = clientFor({ baseUrl: `http://127.0.0.1:${port}` })

    const error = await failureOf(dispatch(client))

    // Nobody listens there: one quick second try, not five, so offline is told in a second.
    expect(delays).toHaveLength(1)
    expect(error).toMatchObject({
      status: 0,
      code: 'NETWORK_ERROR',
      outcomeUnknown: false,
      attempts: 2,
    })
    expect(error.message).toContain('connection refused')
  })
})

describe('other verbs', () => {
  // No PUT, PATCH or DELETE operation is in the contract yet, so these go
  // through the transport that every typed call uses.
  it.each(['PUT', 'PATCH', 'DELETE'])('retries a %s whose connection was reset', async (method) => {
    server.enqueue(reply.reset(), reply.error(503, 'UNAVAILABLE', 'down'), reply.json(200, {}))
    const delays: number[] = []
    const send = createTransport({
      apiKey: KEY,
      authHeader: 'bearer',
      userAgent: 'Atelier/test',
      timeoutMs: 5000,
      retry: resolveRetryPolicy(),
      fetch,
      random: () => 0.5,
      sleep: (ms) => {
        delays.push(ms)
        return Promise.resolve()
      },
    })

    const response = await send(
      new Request(`${server.url}/v1/flows/f1`, {
        method,
        body: method === 'DELETE' ? null : '{"name":"x"}',
        headers: { 'Content-Type': 'application/json' },
      }),
    )

    expect(response.status).toBe(200)
    expect(delays).toEqual([250, 500])
    expect(server.requests.map((request) => [request.method, request.body])).toEqual(
      Array.from({ length: 3 }, () => [method, method === 'DELETE' ? '' : '{"name":"x"}']),
    )
  })
})

describe('broken bodies', () => {
  it('retries a GET whose success body was cut off', async () => {
    server.enqueue(reply.truncated(200, '{"balance":"1', 500), reply.json(200, BALANCE))
    const { client } = clientFor()

    await expect(client.get('/v1/billing/balance')).resolves.toEqual(BALANCE)
    expect(server.requests).toHaveLength(2)
  })

  it('throws BAD_RESPONSE when every success body is cut off', async () => {
    server.enqueue(
      reply.truncated(200, '{"balance":"1', 500),
      reply.truncated(200, '{"balance":"1', 500),
    )
    const { client } = clientFor({ retry: { maxAttempts: 2 } })

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(error).toMatchObject({ status: 200, code: 'BAD_RESPONSE', attempts: 2 })
  })

  it('flags a cut-off answer to a POST without a key as an unknown outcome, sent once', async () => {
    server.enqueue(reply.truncated(201, '{"id":"0190', 300), reply.json(201, RUN))
    const { client } = clientFor()

    const error = await failureOf(dispatch(client))

    expect(server.requests).toHaveLength(1)
    expect(error).toMatchObject({ status: 201, code: 'BAD_RESPONSE', outcomeUnknown: true })
  })

  it('throws BAD_RESPONSE for a complete success body that is not JSON, without retrying', async () => {
    server.enqueue(reply.raw(200, '<html>captive portal</html>', { 'Content-Type': 'text/html' }))
    const { client } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(server.requests).toHaveLength(1)
    expect(error).toMatchObject({ status: 200, code: 'BAD_RESPONSE' })
    expect(error.message).not.toContain('<html')
  })

  it('turns an HTML 502 page into HTTP_502 with a plain message', async () => {
    server.enqueue(
      reply.raw(
        502,
        '<!DOCTYPE html><html><head><title>502</title></head><body><h1>Bad Gateway</h1></body></html>',
        { 'Content-Type': 'text/html' },
      ),
    )
    const { client } = clientFor({ retry: { maxAttempts: 1 } })

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(error.code).toBe('HTTP_502')
    expect(error.message).not.toContain('<html')
    expect(error.message).toBe(
      'The service failed to handle the request (HTTP_502). Try again later.',
    )
    expect(error.serviceMessage).toBeNull()
  })

  it.each<[string, Reply]>([
    ['plain text', reply.raw(400, 'Bad Request', { 'Content-Type': 'text/plain' })],
    ['JSON without code', reply.json(400, { message: 'no code here' })],
    ['a JSON array', reply.json(400, [{ code: 'NOPE' }])],
    ['a JSON string', reply.json(400, 'just a string')],
    ['JSON null', reply.json(400, null)],
    ['an empty body', reply.raw(400, '')],
    ['a blank code', reply.json(400, { code: '  ', message: 'blank' })],
    ['JSON cut off', reply.truncated(400, '{"code":"BAD_REQ', 400)],
  ])('falls back to HTTP_400 for an error body that is %s', async (_what, answer) => {
    server.enqueue(answer)
    const { client } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(server.requests).toHaveLength(1)
    expect(error.status).toBe(400)
    expect(error.code).toBe('HTTP_400')
    expect(error.errors).toBeNull()
    expect(error.message).toMatch(/^The service could not accept the request \(HTTP_400\)\./)
  })

  it('keeps the message of an envelope that has one but no code', async () => {
    server.enqueue(reply.json(409, { message: 'slug taken', errors: 'not-an-array' }))
    const { client } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(error).toMatchObject({ code: 'HTTP_409', serviceMessage: 'slug taken', errors: null })
    expect(error.message).toContain('The service said: slug taken')
  })

  it('reads only a bounded prefix of a 10 MB error body', async () => {
    server.enqueue(reply.huge(500, 10 * 1024 * 1024))
    let bytesRead = 0
    // Counts what the client pulls off the wire; cancelling passes through to the socket.
    const countingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      const counted = response.body?.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            bytesRead += chunk.byteLength
            controller.enqueue(chunk)
          },
        }),
      )
      return new Response(counted, { status: response.status, headers: response.headers })
    }
    const { client } = clientFor({ fetch: countingFetch, retry: { maxAttempts: 1 } })

    const started = performance.now()
    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(elapsed(started)).toBeLessThan(2000)
    expect(error.code).toBe('HTTP_500')
    expect(error.message.length).toBeLessThan(200)
    expect(bytesRead).toBeGreaterThan(0)
    expect(bytesRead).toBeLessThan(1024 * 1024)
    expect(server.requests[0]?.completed).toBe(false)
  })
})

describe('timeouts and cancelling', () => {
  it('gives up on a slow server with TIMEOUT after each attempt times out', async () => {
    server.enqueue(reply.slow(5000, reply.json(200, BALANCE)), reply.silence())
    const { client } = clientFor({ timeoutMs: 200, retry: { maxAttempts: 2 } })

    const started = performance.now()
    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(elapsed(started)).toBeLessThan(3000)
    expect(server.requests).toHaveLength(2)
    expect(error).toMatchObject({ status: 0, code: 'TIMEOUT', attempts: 2 })
    expect(error.message).toContain('did not answer within 200 ms')
  })

  it('takes a per-call timeout', async () => {
    server.enqueue(reply.silence())
    const { client } = clientFor({ retry: { maxAttempts: 1 } })

    const started = performance.now()
    const error = await failureOf(client.get('/v1/billing/balance', { timeoutMs: 150 }))

    expect(error.code).toBe('TIMEOUT')
    expect(elapsed(started)).toBeLessThan(2000)
  })

  it('reports a timed-out POST without a key as OUTCOME_UNKNOWN', async () => {
    server.enqueue(reply.silence(), reply.json(201, RUN))
    const { client } = clientFor({ timeoutMs: 150 })

    const error = await failureOf(dispatch(client))

    expect(server.requests).toHaveLength(1)
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', outcomeUnknown: true })
    expect(error.message).toContain('did not answer within 150 ms after the request was sent')
  })

  it('leaves no listener on a signal that many calls share', async () => {
    const { client } = clientFor()
    const shared = new AbortController()
    for (let i = 0; i < 50; i++) server.enqueue(reply.json(200, BALANCE))
    for (let i = 0; i < 50; i++) {
      await client.get('/v1/billing/balance', { signal: shared.signal })
    }
    // An upload passes one signal to thousands of calls: each must take its listener back.
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0)
  })

  it('stops at once when the caller aborts during a request', async () => {
    server.enqueue(reply.silence())
    const { client } = clientFor()
    const controller = new AbortController()
    setTimeout(() => {
      controller.abort()
    }, 50)

    const started = performance.now()
    const error = await failureOf(client.get('/v1/billing/balance', { signal: controller.signal }))

    expect(elapsed(started)).toBeLessThan(1000)
    expect(error).toMatchObject({ status: 0, code: 'ABORTED', attempts: 1 })
  })

  it('stops at once when the caller aborts during the backoff', async () => {
    server.enqueue(reply.error(503, 'UNAVAILABLE', 'down'))
    // A sleep that ignores the signal, to show the client does not rely on it.
    const { client } = clientFor({ sleep: () => new Promise(() => undefined) })
    const controller = new AbortController()
    setTimeout(() => {
      controller.abort()
    }, 50)

    const started = performance.now()
    const error = await failureOf(client.get('/v1/billing/balance', { signal: controller.signal }))

    expect(elapsed(started)).toBeLessThan(1000)
    expect(server.requests).toHaveLength(1)
    expect(error).toMatchObject({ code: 'ABORTED', attempts: 1 })
  })

  it('sends nothing when the signal is already aborted', async () => {
    const { client } = clientFor()

    const error = await failureOf(
      client.get('/v1/billing/balance', { signal: AbortSignal.abort() }),
    )

    expect(server.requests).toHaveLength(0)
    expect(error).toMatchObject({ code: 'ABORTED', attempts: 0 })
  })

  it('flags an aborted POST as an unknown outcome', async () => {
    server.enqueue(reply.silence())
    const { client } = clientFor()
    const controller = new AbortController()
    setTimeout(() => {
      controller.abort()
    }, 50)

    const error = await failureOf(dispatch(client, undefined, controller.signal))

    expect(error).toMatchObject({ code: 'ABORTED', outcomeUnknown: true })
  })
})

describe('the key never leaks', () => {
  // A careless service or proxy that echoes the credentials it was sent.
  const echoKey =
    (status: number): Reply =>
    (context) => {
      const sent = `${context.req.headers.authorization ?? ''} ${String(context.req.headers['x-api-key'] ?? '')}`
      reply.error(status, 'UNAUTHORIZED', `Invalid token: ${sent}`, {
        errors: [{ header: sent, [KEY]: KEY }],
      })(context)
    }

  it.each(['bearer', 'x-api-key'] as const)(
    'keeps it out of the error built from an echoing %s reply',
    async (authHeader) => {
      server.enqueue(echoKey(401))
      const { client } = clientFor({ authHeader })

      const error = await failureOf(client.get('/v1/billing/balance'))

      expect(server.requests[0]?.body).toBe('')
      expect(error.serviceMessage).toContain('Invalid token')
      for (const text of [
        error.message,
        String(error),
        JSON.stringify(error),
        error.stack ?? '',
        error.serviceMessage ?? '',
        JSON.stringify(error.errors),
      ]) {
        expect(text).not.toContain(KEY)
      }
    },
  )

  it('keeps it out of onRetry infos and network errors', async () => {
    server.enqueue(echoKey(503), reply.reset(), echoKey(503), reply.hangUp(), reply.reset())
    const { client, retries } = clientFor()

    const error = await failureOf(client.get('/v1/billing/balance'))

    expect(retries).toHaveLength(4)
    expect(JSON.stringify(retries)).not.toContain(KEY)
    expect(JSON.stringify(error)).not.toContain(KEY)
    expect(String(error)).not.toContain(KEY)
  })
})

describe('pagination', () => {
  const run = (n: number) => ({ id: `run-${n}`, status_code: 'succeeded' })
  const page = (items: number[], next: string | null) =>
    reply.json(200, { items: items.map(run), first: 'c1', next, previous: null })
  const cursorsSent = () =>
    server.requests.map((request) => new URL(request.url, server.url).searchParams.get('pq'))

  it('follows next through pq across 3 pages and stops at next: null', async () => {
    server.enqueue(page([1, 2], 'c2'), page([3, 4], 'c3'), page([5], null))
    const { client } = clientFor()

    const ids: string[] = []
    for await (const item of client.list('/v1/runs', { params: { query: { limit: 2 } } })) {
      ids.push(item.id)
    }

    expect(ids).toEqual(['run-1', 'run-2', 'run-3', 'run-4', 'run-5'])
    expect(cursorsSent()).toEqual([null, 'c2', 'c3'])
    for (const request of server.requests) {
      expect(new URL(request.url, server.url).searchParams.get('limit')).toBe('2')
    }
  })

  it('offers the pages themselves, and resumes from a saved cursor', async () => {
    server.enqueue(page([3, 4], 'c3'), page([5], null))
    const { client } = clientFor()

    const nexts: (string | null)[] = []
    for await (const envelope of client.pages('/v1/runs', { params: { query: { pq: 'c2' } } })) {
      nexts.push(envelope.next)
    }

    expect(nexts).toEqual(['c3', null])
    expect(cursorsSent()).toEqual(['c2', 'c3'])
  })

  it('fetches no more pages once the consumer stops', async () => {
    server.enqueue(page([1, 2], 'c2'), page([3, 4], 'c3'))
    const { client } = clientFor()

    for await (const item of client.list('/v1/runs')) {
      expect(item.id).toBe('run-1')
      break
    }

    expect(server.requests).toHaveLength(1)
  })

  it('stops with BAD_RESPONSE when the service repeats a cursor', async () => {
    server.enqueue(page([1], 'c2'), page([2], 'c3'), page([3], 'c2'), page([4], 'c3'))
    const { client } = clientFor()

    const ids: string[] = []
    const error = await failureOf(
      (async () => {
        for await (const item of client.list('/v1/runs')) ids.push(item.id)
      })(),
    )

    expect(error).toMatchObject({ code: 'BAD_RESPONSE', path: '/v1/runs' })
    expect(ids).toEqual(['run-1', 'run-2', 'run-3'])
    expect(server.requests).toHaveLength(3)
  })

  it('passes a failing page on as a ServiceError', async () => {
    server.enqueue(page([1], 'c2'), reply.error(403, 'PERMISSION_DENIED', 'no'))
    const { client } = clientFor()

    const error = await failureOf(
      (async () => {
        for await (const _item of client.list('/v1/runs')) {
          // drain
        }
      })(),
    )

    expect(error.code).toBe('PERMISSION_DENIED')
  })
})

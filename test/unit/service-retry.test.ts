import { describe, expect, it } from 'vitest'
import {
  backoffCapMs,
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  isTransientStatus,
  parseRetryAfter,
  resolveRetryPolicy,
  retryAfterMsFrom,
  sleepUnlessAborted,
} from '../../src-main/service/retry'

const NOW = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    ['2', 2000],
    [' 120 ', 120_000],
    ['Wed, 21 Oct 2015 07:28:03 GMT', 3000],
    ['Wednesday, 21-Oct-15 07:28:05 GMT', 5000],
    ['Wed Oct 21 07:28:01 2015', 1000],
  ])('reads %j as %i ms', (value, ms) => {
    // The asctime form has no zone and is read as local time.
    const now = value.endsWith('2015') ? new Date(2015, 9, 21, 7, 28, 0).getTime() : NOW
    expect(parseRetryAfter(value, now)).toBe(ms)
  })

  it('treats a date in the past as no wait', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', NOW)).toBe(0)
  })

  it.each([null, '', '-1', '1.5', '2e3', 'soon', 'Wed, 99 Foo 2015 99:99:99 GMT'])(
    'ignores %j',
    (value) => {
      expect(parseRetryAfter(value, NOW)).toBeUndefined()
    },
  )

  it('measures a date against the Date header when the response has one', () => {
    const headers = new Headers({
      Date: 'Wed, 21 Oct 2015 07:28:00 GMT',
      'Retry-After': 'Wed, 21 Oct 2015 07:28:04 GMT',
    })
    // A local clock an hour fast must not turn the wait into zero.
    expect(retryAfterMsFrom(headers, NOW + 3_600_000)).toBe(4000)
    headers.delete('Date')
    expect(retryAfterMsFrom(headers, NOW)).toBe(4000)
  })
})

describe('full-jitter backoff', () => {
  const policy = DEFAULT_RETRY_POLICY

  it('doubles the cap from the base up to the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffCapMs(n, policy))).toEqual([
      500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ])
  })

  it('stays within [0, cap] for any random value', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const cap = backoffCapMs(attempt, policy)
      for (const r of [0, 1e-9, 0.25, 0.5, 0.999999, Math.random()]) {
        const delay = backoffDelayMs(attempt, policy, () => r)
        expect(delay).toBeGreaterThanOrEqual(0)
        expect(delay).toBeLessThanOrEqual(cap)
      }
    }
  })

  it('scales the random value onto the cap', () => {
    expect(backoffDelayMs(1, policy, () => 0)).toBe(0)
    expect(backoffDelayMs(1, policy, () => 0.5)).toBe(250)
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(1000)
  })

  it('keeps the bound even when the random source misbehaves', () => {
    expect(backoffDelayMs(2, policy, () => 7)).toBe(1000)
    expect(backoffDelayMs(2, policy, () => -1)).toBe(0)
  })
})

describe('resolveRetryPolicy', () => {
  it('defaults to the spec: 5 attempts, 500 ms base, 30 s maximum; 2 when nobody listens', () => {
    expect(resolveRetryPolicy()).toEqual({
      maxAttempts: 5,
      baseDelayMs: 500,
      maxDelayMs: 30_000,
      unreachableAttempts: 2,
    })
    expect(resolveRetryPolicy({ maxAttempts: undefined, baseDelayMs: 10 })).toEqual({
      maxAttempts: 5,
      baseDelayMs: 10,
      maxDelayMs: 30_000,
      unreachableAttempts: 2,
    })
    expect(() => resolveRetryPolicy({ unreachableAttempts: 0 })).toThrow(/unreachableAttempts/)
  })

  it.each([
    { maxAttempts: 0 },
    { maxAttempts: 6 },
    { maxAttempts: 2.5 },
    { baseDelayMs: -1 },
    { baseDelayMs: 100, maxDelayMs: 50 },
  ])('refuses %j', (partial) => {
    expect(() => resolveRetryPolicy(partial)).toThrow(RangeError)
  })
})

describe('isTransientStatus', () => {
  it('retries 429 and 5xx only', () => {
    expect([429, 500, 502, 503, 504, 599].every(isTransientStatus)).toBe(true)
    expect([200, 302, 400, 401, 403, 404, 408, 409, 422, 600].some(isTransientStatus)).toBe(false)
  })
})

describe('sleepUnlessAborted', () => {
  it('gives up at once on abort, even when the sleep ignores the signal', async () => {
    const controller = new AbortController()
    const waiting = sleepUnlessAborted(
      () => new Promise(() => undefined),
      60_000,
      controller.signal,
    )
    controller.abort(new Error('stop'))
    await expect(waiting).rejects.toThrow('stop')
  })

  it('refuses to start when already aborted', async () => {
    let slept = false
    const sleep = () => {
      slept = true
      return Promise.resolve()
    }
    await expect(sleepUnlessAborted(sleep, 10, AbortSignal.abort())).rejects.toBeDefined()
    expect(slept).toBe(false)
  })

  it('resolves when the sleep does', async () => {
    const seen: number[] = []
    const sleep = (ms: number) => {
      seen.push(ms)
      return Promise.resolve()
    }
    await sleepUnlessAborted(sleep, 42, new AbortController().signal)
    expect(seen).toEqual([42])
  })
})

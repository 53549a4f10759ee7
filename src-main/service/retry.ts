import { setTimeout as delay } from 'node:timers/promises'

export interface RetryPolicy {
  /** Attempts in total, the first one included. */
  maxAttempts: number
  baseDelayMs: number
  maxDelayMs: number
  /**
   * Attempts in total when the connection could not even be opened (refused, host unknown):
   * nothing listens there, and waiting seconds between five tries only delays telling the user
   * they are offline. One quick second try rides out a service that is just restarting.
   */
  unreachableAttempts: number
}

/** The service's retry guidance: at most 5 attempts for 5xx, 429 and network errors. */
export const SPEC_MAX_ATTEMPTS = 5

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: SPEC_MAX_ATTEMPTS,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  unreachableAttempts: 2,
}

export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>

export function resolveRetryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...definedOnly(partial) }
  const { maxAttempts, baseDelayMs, maxDelayMs, unreachableAttempts } = policy
  // More attempts than the guidance allows would make us the client that
  // keeps a struggling service down, so this is refused rather than clamped.
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > SPEC_MAX_ATTEMPTS) {
    throw new RangeError(
      `retry.maxAttempts must be a whole number from 1 to ${SPEC_MAX_ATTEMPTS}, got ${String(maxAttempts)}.`,
    )
  }
  if (!Number.isInteger(unreachableAttempts) || unreachableAttempts < 1) {
    throw new RangeError(
      `retry.unreachableAttempts must be a whole number from 1, got ${String(unreachableAttempts)}.`,
    )
  }
  if (!(baseDelayMs >= 0) || !(maxDelayMs >= baseDelayMs)) {
    throw new RangeError('retry delays must satisfy 0 <= baseDelayMs <= maxDelayMs.')
  }
  return policy
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, item]) => item !== undefined),
  ) as Partial<T>
}

/** The upper bound of the wait after the given failed attempt (1-based). */
export function backoffCapMs(failedAttempt: number, policy: RetryPolicy): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failedAttempt - 1))
}

/**
 * Full jitter: anywhere between 0 and the exponential cap, so that many
 * clients failing at the same moment do not come back at the same moment.
 */
export function backoffDelayMs(
  failedAttempt: number,
  policy: RetryPolicy,
  random: () => number,
): number {
  // A random source that strays outside [0, 1) must not break the bound.
  const r = Math.min(Math.max(random(), 0), 1)
  return Math.floor(r * backoffCapMs(failedAttempt, policy))
}

/**
 * `Retry-After` as milliseconds from `nowMs`: either delta-seconds or an
 * HTTP date. Anything else is ignored (undefined), so a garbled header falls
 * back to the jittered delay instead of failing the request.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // Date.parse accepts bare numbers like "1.5" as dates; an HTTP date always
  // names a weekday and a month.
  if (!/[a-z]/i.test(text)) return undefined
  const at = Date.parse(text)
  if (Number.isNaN(at)) return undefined
  return Math.max(0, at - nowMs)
}

/**
 * Reads `Retry-After` relative to the response's own `Date` header when it has
 * one, so that a skewed local clock does not stretch or shrink the wait.
 */
export function retryAfterMsFrom(headers: Headers, nowMs: number): number | undefined {
  const serverNow = Date.parse(headers.get('Date') ?? '')
  return parseRetryAfter(headers.get('Retry-After'), Number.isNaN(serverNow) ? nowMs : serverNow)
}

/** 5xx and 429 are worth another attempt; every other status is an answer. */
export function isTransientStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599)
}

export const defaultSleep: Sleep = (ms, signal) => delay(ms, undefined, { signal })

/**
 * Waits with `sleep`, but gives up the moment `signal` aborts even if an
 * injected `sleep` ignores the signal.
 */
export function sleepUnlessAborted(sleep: Sleep, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error)
      return
    }
    const onAbort = (): void => {
      reject(signal.reason as Error)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    sleep(ms, signal)
      .then(resolve, reject)
      .finally(() => {
        signal.removeEventListener('abort', onAbort)
      })
  })
}

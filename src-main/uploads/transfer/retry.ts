import { setTimeout as delay } from 'node:timers/promises'

export interface TransferRetryPolicy {
  /** Attempts in total for one part (or one POST to the service), the first one included. */
  attempts: number
  baseDelayMs: number
  /** The longest wait between attempts; a Retry-After asking for more fails instead. */
  maxDelayMs: number
  /** A part attempt that sends nothing and hears nothing for this long is given up. */
  stallTimeoutMs: number
}

/** In line with the service's guidance: at most 5 attempts, exponential backoff with jitter. */
export const DEFAULT_TRANSFER_RETRY: Readonly<TransferRetryPolicy> = {
  attempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  stallTimeoutMs: 60_000,
}

export function resolveRetry(partial: Partial<TransferRetryPolicy> = {}): TransferRetryPolicy {
  const policy = { ...DEFAULT_TRANSFER_RETRY }
  for (const key of Object.keys(policy) as (keyof TransferRetryPolicy)[]) {
    const value = partial[key]
    if (value !== undefined) policy[key] = value
  }
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) {
    throw new RangeError('retry.attempts must be a whole number of at least 1.')
  }
  if (!(policy.baseDelayMs >= 0) || !(policy.maxDelayMs >= policy.baseDelayMs)) {
    throw new RangeError('retry delays must satisfy 0 <= baseDelayMs <= maxDelayMs.')
  }
  if (!(policy.stallTimeoutMs > 0)) throw new RangeError('retry.stallTimeoutMs must be positive.')
  return policy
}

/** Full jitter, so that many parts failing at once do not all come back at once. */
export function backoffMs(failedAttempt: number, policy: TransferRetryPolicy): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failedAttempt - 1))
  return Math.floor(Math.random() * cap)
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date; undefined when absent or garbled. */
export function retryAfterMs(headers: Headers): number | undefined {
  const text = headers.get('Retry-After')?.trim()
  if (!text) return undefined
  if (/^\d+$/.test(text)) return Number(text) * 1000
  if (!/[a-z]/i.test(text)) return undefined
  const at = Date.parse(text)
  if (Number.isNaN(at)) return undefined
  const serverNow = Date.parse(headers.get('Date') ?? '')
  return Math.max(0, at - (Number.isNaN(serverNow) ? Date.now() : serverNow))
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal })
}

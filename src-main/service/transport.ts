import { readPrefix } from './body'
import {
  formatDuration,
  httpErrorMessage,
  parseErrorEnvelope,
  ServiceError,
  type FieldError,
  type ServiceErrorCode,
} from './errors'
import { describeNetworkFailure, failedBeforeSending } from './network'
import { redact, redactDeep, REDACTED } from '../log/redact'
import {
  backoffDelayMs,
  isTransientStatus,
  retryAfterMsFrom,
  sleepUnlessAborted,
  type RetryPolicy,
  type Sleep,
} from './retry'

export type AuthHeader = 'bearer' | 'x-api-key'

export interface RetryInfo {
  method: string
  path: string
  /** The attempt that just failed, from 1. */
  attempt: number
  maxAttempts: number
  /** How long the client waits before the next attempt. */
  delayMs: number
  status: number
  code: ServiceErrorCode
  message: string
  retryAfterMs?: number | undefined
}

/** One attempt, as a debug log may show it: never a header, never a key. */
export interface RequestLog {
  method: string
  /** The URL path; no query. */
  path: string
  /** The query as `name=value&…`, values of parameters named like credentials masked. */
  query: string
  /** From 1. */
  attempt: number
  /** HTTP status, or 0 when no answer arrived. */
  status: number
  /** Set when the attempt failed. */
  code?: ServiceErrorCode | undefined
  ms: number
  requestId?: string | null | undefined
}

export interface TransportConfig {
  apiKey: string
  authHeader: AuthHeader
  organizationId?: string | undefined
  userAgent: string
  timeoutMs: number
  retry: RetryPolicy
  fetch: typeof fetch
  sleep: Sleep
  random: () => number
  onRetry?: ((info: RetryInfo) => void) | undefined
  log?: ((entry: RequestLog) => void) | undefined
}

export interface SendOptions {
  /** Per-attempt timeout; the client's `timeoutMs` when absent. */
  timeoutMs?: number | undefined
  /** The caller's signal; the request's own signal when absent. */
  signal?: AbortSignal | undefined
}

/** A `fetch` for openapi-fetch: retries, timeouts, auth, and a ServiceError for every failure. */
export type Transport = (request: Request, options?: SendOptions) => Promise<Response>

/** Why one attempt did not produce a usable response. */
interface Failure {
  status: number
  code: ServiceErrorCode
  serviceMessage?: string | null
  errors?: FieldError[] | null
  requestId?: string | null
  retryAfterMs?: number | undefined
  /** Another attempt could get a different answer. */
  transient: boolean
  /** Nothing left this machine, so even a POST without a key may be sent again. */
  notSent?: boolean
  /** The service may have done the work although we did not get its answer. */
  mayHaveActed?: boolean
  /** The service looked at the request and refused it. */
  refused?: boolean
  /** A whole sentence or two for the user, with what to do. */
  message: string
  /** For network failures and timeouts: what happened, to say that the outcome is unknown. */
  what?: string
  cause?: unknown
}

// Gateways report 502/504 when the upstream did not answer in time, which is
// after it received the request; 500 can come from a crash after the work began.
const AMBIGUOUS_STATUS = new Set([500, 502, 504])
const NULL_BODY_STATUS = new Set([204, 205])

export function createTransport(config: TransportConfig): Transport {
  const { retry: policy } = config
  const secrets = [config.apiKey]

  function prepareHeaders(original: Headers): Headers {
    const headers = new Headers(original)
    if (config.authHeader === 'bearer') headers.set('Authorization', `Bearer ${config.apiKey}`)
    else headers.set('x-api-key', config.apiKey)
    // A per-call X-Organization-Id (the spec allows one on every operation) wins.
    if (config.organizationId && !headers.has('X-Organization-Id')) {
      headers.set('X-Organization-Id', config.organizationId)
    }
    if (!headers.has('Accept')) headers.set('Accept', 'application/json')
    if (!headers.has('User-Agent')) headers.set('User-Agent', config.userAgent)
    return headers
  }

  return async function send(request, options = {}) {
    const url = new URL(request.url)
    const method = request.method.toUpperCase()
    const path = redact(url.pathname, secrets)
    const signal = options.signal ?? request.signal
    const timeoutMs = options.timeoutMs ?? config.timeoutMs
    const headers = prepareHeaders(request.headers)
    // Buffered once so that every attempt sends the same bytes.
    const body = request.body === null ? undefined : await request.arrayBuffer()
    const isPost = method === 'POST'
    const hasIdempotencyKey = headers.has('Idempotency-Key')

    const logAttempt = (result: Response | Failure, attempt: number, started: number): void => {
      if (!config.log) return
      try {
        config.log({
          method,
          path,
          query: safeQuery(url.searchParams, secrets),
          attempt,
          status: result.status,
          ...(result instanceof Response ? {} : { code: result.code }),
          ms: Math.round(performance.now() - started),
          requestId: result instanceof Response ? requestIdOf(result.headers) : result.requestId,
        })
      } catch {
        // A failing observer must not change what happens to the request.
      }
    }

    const toError = (failure: Failure, attempts: number, outcomeUnknown: boolean): ServiceError => {
      const lostAnswer = outcomeUnknown && failure.what !== undefined
      const code = lostAnswer ? 'OUTCOME_UNKNOWN' : failure.code
      let message = lostAnswer
        ? `${failure.what ?? ''} after the request was sent, so it is unknown whether the service acted on it. Look the result up before sending it again.`
        : failure.message
      if (outcomeUnknown && !lostAnswer) {
        message +=
          ' The service may already have acted on it; look the result up before sending it again.'
      }
      if (failure.retryAfterMs !== undefined) {
        message += ` The service asked to wait ${formatDuration(failure.retryAfterMs)}.`
      }
      if (attempts > 1) message += ` Tried ${attempts} times.`
      return new ServiceError(
        redact(message, secrets),
        {
          status: failure.status,
          code,
          serviceMessage:
            typeof failure.serviceMessage === 'string'
              ? redact(failure.serviceMessage, secrets)
              : null,
          errors: failure.errors ? (redactDeep(failure.errors, secrets) as FieldError[]) : null,
          requestId: failure.requestId ?? null,
          method,
          path,
          retryAfterMs: failure.retryAfterMs,
          attempts,
          outcomeUnknown,
        },
        failure.cause === undefined ? undefined : { cause: failure.cause },
      )
    }

    // A POST's result is in doubt once an attempt may have done the work, and
    // stays so until the service answers the same request with a refusal.
    let outcomeUnknown = false
    for (let attempt = 1; ; attempt++) {
      // Checked before the first attempt too: an already-aborted call sends nothing.
      if (isAborted(signal)) throw toError(abortedFailure(signal), attempt - 1, outcomeUnknown)
      const started = performance.now()
      const result = await attemptOnce(url, method, headers, body, signal, timeoutMs)
      logAttempt(result, attempt, started)
      if (result instanceof Response) return result
      const failure = result
      if (isPost) {
        if (failure.mayHaveActed) outcomeUnknown = true
        else if (failure.refused) outcomeUnknown = false
      }

      const mayRepeat = !isPost || hasIdempotencyKey || failure.notSent
      const attempts = failure.notSent
        ? Math.min(policy.maxAttempts, policy.unreachableAttempts)
        : policy.maxAttempts
      if (!failure.transient || !mayRepeat || attempt >= attempts) {
        throw toError(failure, attempt, outcomeUnknown)
      }
      // Waiting less than the service asked only earns another refusal, and
      // waiting longer than maxDelayMs would hold the caller hostage: give the
      // wait back to the caller in `retryAfterMs` instead.
      if (failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxDelayMs) {
        throw toError(failure, attempt, outcomeUnknown)
      }
      const delayMs = failure.retryAfterMs ?? backoffDelayMs(attempt, policy, config.random)
      if (config.onRetry) {
        const interim = toError(failure, attempt, outcomeUnknown)
        try {
          config.onRetry({
            method,
            path,
            attempt,
            maxAttempts: attempts,
            delayMs,
            status: interim.status,
            code: interim.code,
            message: interim.message,
            retryAfterMs: interim.retryAfterMs,
          })
        } catch {
          // A failing observer must not change what happens to the request.
        }
      }
      try {
        await sleepUnlessAborted(config.sleep, delayMs, signal)
      } catch (error) {
        if (!signal.aborted) throw error
        throw toError(abortedFailure(signal), attempt, outcomeUnknown)
      }
    }
  }

  async function attemptOnce(
    url: URL,
    method: string,
    headers: Headers,
    body: ArrayBuffer | undefined,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<Response | Failure> {
    const timeout = AbortSignal.timeout(timeoutMs)
    const interrupted = (): Failure | undefined => {
      if (signal.aborted) return { ...abortedFailure(signal), mayHaveActed: true }
      if (timeout.aborted) return timeoutFailure(timeoutMs)
      return undefined
    }
    let response: Response
    try {
      response = await config.fetch(url, {
        method,
        headers,
        body: body ?? null,
        signal: AbortSignal.any([signal, timeout]),
        // A redirect would carry the key to wherever it points.
        redirect: 'manual',
      })
    } catch (error) {
      return interrupted() ?? networkFailure(url, error)
    }
    if (!response.ok) return httpFailure(response)

    let text: string
    try {
      text = await response.text()
    } catch (error) {
      return interrupted() ?? badBody(response, 'the body broke off part-way', true, error)
    }
    let parsed: { value: unknown } | null = null
    if (text.trim() !== '') {
      // Parsed here, the one place that still knows the request, so the error can say which
      // one; the client takes the value from `parsedBodies` instead of parsing it again.
      try {
        parsed = { value: JSON.parse(text) }
      } catch (error) {
        return badBody(response, 'the body is not valid JSON', false, error)
      }
    }
    const answer = new Response(NULL_BODY_STATUS.has(response.status) ? null : text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
    if (parsed !== null) parsedBodies.set(answer, parsed.value)
    return answer
  }
}

/**
 * The JSON of each successful answer, as the transport parsed it to check it. A list page of
 * evaluations is megabytes: parsing it once instead of twice is most of the client's own time.
 */
export const parsedBodies = new WeakMap<Response, unknown>()

// Names that carry credentials in query strings elsewhere (presigned URLs, OAuth callbacks).
const SECRET_PARAM = /key|token|secret|signature|sig$|password|auth|credential|^x-amz-/i

function safeQuery(params: URLSearchParams, secrets: readonly string[]): string {
  return [...params]
    .map(
      ([name, value]) =>
        `${redact(name, secrets)}=${SECRET_PARAM.test(name) ? REDACTED : redact(value, secrets)}`,
    )
    .join('&')
}

// A call, unlike `signal.aborted`, is not narrowed across the awaits that follow.
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted
}

function requestIdOf(headers: Headers): string | null {
  return headers.get('Service-Request-Id') ?? headers.get('X-Request-Id')
}

async function httpFailure(response: Response): Promise<Failure> {
  const { status, headers } = response
  const {
    code: sentCode,
    serviceMessage,
    errors,
  } = parseErrorEnvelope(await readPrefix(response.body))
  const code = sentCode ?? `HTTP_${status}`
  return {
    status,
    code,
    serviceMessage,
    errors,
    requestId: requestIdOf(headers),
    retryAfterMs: retryAfterMsFrom(headers, Date.now()),
    transient: isTransientStatus(status),
    mayHaveActed: AMBIGUOUS_STATUS.has(status),
    // 408 and 429 turn a request away before looking at it.
    refused: status >= 400 && status < 500 && status !== 408 && status !== 429,
    message: httpErrorMessage(status, code, serviceMessage),
  }
}

function networkFailure(url: URL, error: unknown): Failure {
  const notSent = failedBeforeSending(error)
  const reason = describeNetworkFailure(error)
  const what = `The connection to the service at ${url.origin} broke (${reason})`
  return {
    status: 0,
    code: 'NETWORK_ERROR',
    transient: true,
    notSent,
    mayHaveActed: !notSent,
    message: notSent
      ? `Could not reach the service at ${url.origin} (${reason}). Check the network connection and the service address of this profile.`
      : `${what}. Check the network connection, then try again.`,
    // Refused before sending is not a lost answer, even after an earlier attempt that was.
    what: notSent ? undefined : what,
    cause: error,
  }
}

function timeoutFailure(timeoutMs: number): Failure {
  const what = `The service did not answer within ${formatDuration(timeoutMs)}`
  return {
    status: 0,
    code: 'TIMEOUT',
    transient: true,
    mayHaveActed: true,
    message: `${what}. Check the network connection, or try again later.`,
    what,
  }
}

function abortedFailure(signal: AbortSignal): Failure {
  return {
    status: 0,
    code: 'ABORTED',
    transient: false,
    message: 'The request was canceled.',
    cause: signal.reason,
  }
}

function badBody(response: Response, what: string, transient: boolean, cause: unknown): Failure {
  return {
    status: response.status,
    code: 'BAD_RESPONSE',
    requestId: requestIdOf(response.headers),
    transient,
    // The status said the work was done; only its result is lost.
    mayHaveActed: true,
    message: `The service's answer could not be read: ${what}. Try again; if it keeps happening, something between here and the service is interfering.`,
    cause,
  }
}

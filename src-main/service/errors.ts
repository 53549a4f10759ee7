/** Codes the client gives failures that did not come with an answer from the service. */
export type ClientErrorCode =
  'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'OUTCOME_UNKNOWN' | 'BAD_RESPONSE'

/** The service's own codes are open-ended; `HTTP_<status>` stands in when it sent none. */
export type ServiceErrorCode = ClientErrorCode | (string & {})

export type FieldError = Record<string, unknown>

export interface ServiceErrorFields {
  /** HTTP status, or 0 when no response arrived. */
  status: number
  code: ServiceErrorCode
  /** The envelope's own `message`, which the service may reword at any release. */
  serviceMessage: string | null
  /** Per-field details (422). */
  errors: FieldError[] | null
  requestId: string | null
  method: string
  /** The URL path without its query. */
  path: string
  /** What the service asked us to wait (`Retry-After`), when it said. */
  retryAfterMs?: number | undefined
  attempts: number
  /**
   * The service may have acted on this request and we do not know the result
   * (a paid POST whose answer was lost). Look the result up before sending it
   * again; with the same idempotency key, sending it again is also safe.
   */
  outcomeUnknown: boolean
}

export class ServiceError extends Error implements ServiceErrorFields {
  override readonly name = 'ServiceError'
  readonly status: number
  readonly code: ServiceErrorCode
  readonly serviceMessage: string | null
  readonly errors: FieldError[] | null
  readonly requestId: string | null
  readonly method: string
  readonly path: string
  readonly retryAfterMs?: number | undefined
  readonly attempts: number
  readonly outcomeUnknown: boolean

  constructor(message: string, fields: ServiceErrorFields, options?: ErrorOptions) {
    super(message, options)
    this.status = fields.status
    this.code = fields.code
    this.serviceMessage = fields.serviceMessage
    this.errors = fields.errors
    this.requestId = fields.requestId
    this.method = fields.method
    this.path = fields.path
    if (fields.retryAfterMs !== undefined) this.retryAfterMs = fields.retryAfterMs
    this.attempts = fields.attempts
    this.outcomeUnknown = fields.outcomeUnknown
  }

  /** What a log line or the IPC boundary may carry: no cause, no stack. */
  toJSON(): ServiceErrorFields & { name: string; message: string } {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      code: this.code,
      serviceMessage: this.serviceMessage,
      errors: this.errors,
      requestId: this.requestId,
      method: this.method,
      path: this.path,
      retryAfterMs: this.retryAfterMs,
      attempts: this.attempts,
      outcomeUnknown: this.outcomeUnknown,
    }
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError
}

export interface ErrorEnvelope {
  code: string | null
  serviceMessage: string | null
  errors: FieldError[] | null
}

const EMPTY_ENVELOPE: ErrorEnvelope = { code: null, serviceMessage: null, errors: null }

/**
 * Reads what it can of an error body. Proxies answer with HTML, bodies get
 * cut off, and a misconfigured server may send an array or a bare string:
 * none of that may throw, it only leaves fields null.
 */
export function parseErrorEnvelope(text: string): ErrorEnvelope {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return EMPTY_ENVELOPE
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return EMPTY_ENVELOPE
  const { code, message, errors } = body as Record<string, unknown>
  return {
    code: typeof code === 'string' && code.trim() !== '' ? code.trim() : null,
    serviceMessage: typeof message === 'string' ? message : null,
    errors: Array.isArray(errors) ? errors.filter(isFieldError) : null,
  }
}

function isFieldError(value: unknown): value is FieldError {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

interface Advice {
  summary: string
  action: string
}

const BY_CODE: Record<string, Advice> = {
  UNAUTHORIZED: {
    summary: 'The service rejected the API key',
    action: 'Check the key of this profile.',
  },
  PERMISSION_DENIED: {
    summary: 'The API key is not allowed to do this',
    action: 'Use a key that holds the needed scope.',
  },
  EMAIL_NOT_VERIFIED: {
    summary: 'The account has not confirmed its email address',
    action: 'Confirm the email address, then try again.',
  },
  ORGANIZATION_MEMBERSHIP_REQUIRED: {
    summary: 'The key is not a member of the selected organization',
    action: 'Check the organization of this profile.',
  },
  ROLE_UNRESOLVED: {
    summary: "The service could not work out the key's role in the organization",
    action: 'Check the membership in the organization.',
  },
  IMPERSONATION_READ_ONLY: {
    summary: 'This session may only read',
    action: 'Use a key that may make changes.',
  },
  INSUFFICIENT_CREDIT: {
    summary: 'The organization has too little credit for this',
    action: 'Check the balance and top up.',
  },
  RUN_NOT_FOUND: {
    summary: 'The service has no such run in this organization',
    action: 'Check the run id and the organization of this profile.',
  },
  MODEL_UNAVAILABLE: {
    summary: 'The model is unavailable at its provider right now',
    action: 'Try again later, or pick another model.',
  },
}

const BY_STATUS: Record<number, Advice | undefined> = {
  400: { summary: 'The service could not accept the request', action: 'Check the values sent.' },
  401: BY_CODE.UNAUTHORIZED,
  402: BY_CODE.INSUFFICIENT_CREDIT,
  403: {
    summary: 'The service refused access',
    action: "Check the key's permissions and the organization of this profile.",
  },
  404: {
    summary: 'The service did not find what was asked for',
    action: 'Check the id; it may have been deleted or belong to another organization.',
  },
  409: {
    summary: 'The request conflicts with the current state on the service',
    action: 'Refresh, then try again.',
  },
  422: {
    summary: 'The service found invalid fields in the request',
    action: 'See the field details.',
  },
  429: { summary: 'The service is throttling requests', action: 'Wait a moment, then try again.' },
  503: {
    summary: 'The service is unavailable right now',
    action: "Try again later; the service's readiness status shows which part is down.",
  },
}

// For these the envelope's message says what exactly was wrong with the request.
const SHOW_SERVICE_MESSAGE = new Set([400, 409, 422])
const SERVICE_MESSAGE_MAX = 300

function adviceForStatus(status: number): Advice {
  const known = BY_STATUS[status]
  if (known) return known
  if (status >= 300 && status < 400) {
    return {
      summary: 'The service answered with a redirect, which is not followed with credentials',
      action: 'Check the service address of this profile.',
    }
  }
  if (status >= 500) {
    return { summary: 'The service failed to handle the request', action: 'Try again later.' }
  }
  return { summary: 'The service refused the request', action: 'Check the request.' }
}

/** A plain sentence for an HTTP error, naming the code and what to do. */
export function httpErrorMessage(
  status: number,
  code: string,
  serviceMessage: string | null,
): string {
  const { summary, action } = BY_CODE[code] ?? adviceForStatus(status)
  const text = `${summary} (${code}). ${action}`
  if (serviceMessage === null || !SHOW_SERVICE_MESSAGE.has(status)) return text
  const said = oneLine(serviceMessage, SERVICE_MESSAGE_MAX)
  return said === '' ? text : `${text} The service said: ${said}`
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`
}

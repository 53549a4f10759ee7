import type { SyncSummary } from '../../../src-shared/domain/sync'
import type { IpcError } from '../../../src-shared/ipc/result'

/** Where the advice leads, when a button can take the person there. */
export type ErrorFix = 'settings' | 'retry'

/**
 * Where the failure happened, for advice that is true of it: `action` when the person asked for
 * something (a button, a form) that nothing tries again unless they do; `background` for the
 * work Atelier does on its own and tries again by itself (the sync).
 */
export type ErrorContext = 'action' | 'background'

/** An error as people read it: what happened, what to do, and the details that help. */
export interface PlainError {
  code: string
  /** What happened, in a few words: a toast's title. */
  title: string
  /** What happened and what to do, in a sentence or two: a banner's text. */
  text: string
  /** What goes under the title where both are shown (a toast): the text without the title. */
  detail: string
  /** Field by field, for validation problems. */
  issues: { path: string; message: string }[]
  fix: ErrorFix | null
}

interface Words {
  title: string
  /**
   * What to do. Left out when Atelier's own message already says it better (it names the flow,
   * the amount, the field): then the message is the text, word for word.
   */
  advice?: string
  /** The advice instead, for a failure of the work Atelier tries again by itself. */
  backgroundAdvice?: string
  fix?: ErrorFix
}

const KEY_INVALID: Words = {
  title: 'The API key is not valid',
  advice: 'Add it again in Settings.',
  fix: 'settings',
}
const KEY_FORBIDDEN: Words = {
  title: 'The API key may not do this',
  advice: "Check the profile's organization in Settings, or add a key that holds the permission.",
  fix: 'settings',
}
const NO_CREDIT: Words = {
  title: 'Not enough credit',
  advice: 'Add credit to the organization, or run fewer or cheaper nodes.',
}
const OFFLINE: Words = {
  title: 'The service cannot be reached',
  advice: 'Check the internet connection, then try again. What was synced stays available.',
  backgroundAdvice:
    'Check the internet connection. What was synced stays available, and Atelier tries again by itself.',
  fix: 'retry',
}
const NOT_VALID: Words = {
  title: 'Some values are not valid',
  advice: 'Correct them, then try again.',
}
const BUSY: Words = { title: 'The service is busy', advice: 'Wait a moment, then try again.' }
const DOWN: Words = {
  title: 'The service is unavailable right now',
  advice: 'Try again in a few minutes.',
  fix: 'retry',
}

/**
 * By code, never by message: the main process's own codes and the service's pass through IPC
 * as they are (`IpcErrorCode`), and the sync's summary carries the same ones.
 */
const BY_CODE: Record<string, Words> = {
  UNAUTHORIZED: KEY_INVALID,
  KEY_REJECTED: KEY_INVALID,
  HTTP_401: KEY_INVALID,
  PERMISSION_DENIED: KEY_FORBIDDEN,
  FORBIDDEN: KEY_FORBIDDEN,
  KEY_FORBIDDEN: KEY_FORBIDDEN,
  ORGANIZATION_MEMBERSHIP_REQUIRED: KEY_FORBIDDEN,
  HTTP_403: KEY_FORBIDDEN,
  INSUFFICIENT_CREDIT: NO_CREDIT,
  HTTP_402: NO_CREDIT,
  OFFLINE,
  NETWORK_ERROR: OFFLINE,
  TIMEOUT: OFFLINE,
  SERVICE_UNREACHABLE: OFFLINE,
  RATE_LIMITED: BUSY,
  HTTP_429: BUSY,
  SERVICE_UNAVAILABLE: DOWN,
  HTTP_503: DOWN,
  INVALID_ARGUMENT: NOT_VALID,
  VALIDATION_FAILED: NOT_VALID,
  BAD_REQUEST: NOT_VALID,
  HTTP_422: NOT_VALID,
  MODEL_UNAVAILABLE: {
    title: 'The model is unavailable right now',
    advice: 'Try again later, or pick another model.',
  },
  // Atelier's own messages name what is wrong and what to do: they are kept as they are.
  FLOW_INVALID: { title: 'The flow has problems' },
  SEARCH_INVALID_QUERY: { title: 'The search cannot be read' },
  SEARCH_INVALID_CURSOR: { title: 'The search has changed' },
  CONFLICT: { title: 'Changed somewhere else' },
  FLOW_RUN_CONFLICT: { title: 'Changed somewhere else' },
  RUN_REFUSED: { title: 'The run did not start' },
  READ_ONLY: { title: 'This flow is read-only' },
  FLOW_NOT_SYNCED: { title: 'Not on this computer yet', fix: 'retry' },
  NOT_FOUND: { title: 'Not found' },
  FLOW_NOT_FOUND: { title: 'Flow not found' },
  FLOW_RUN_NOT_FOUND: { title: 'That run has ended' },
  UNAVAILABLE: { title: 'Not available yet' },
  DISCONNECTED: { title: 'The connection to Atelier was lost' },
  MESSAGE_TOO_LARGE: { title: 'Too much to send at once' },
  INTERNAL: { title: 'Something went wrong inside Atelier' },
}

const UNKNOWN: Words = { title: 'That did not work' }

const sentence = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`)

/** Validation problems as one line: "prompt: is required; width: must be 64 or more". */
function issuesLine(issues: readonly { path: string; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map(({ path, message }) => (path && path !== '(arguments)' ? `${path}: ${message}` : message))
    .join('; ')
}

/**
 * The one mapping from an error code to plain words, for toasts, banners and inline errors. The
 * context is what the person did (the default) unless the caller is Atelier's own background
 * work: only that is tried again by itself.
 */
export function explainError(error: IpcError, context: ErrorContext = 'action'): PlainError {
  const words = BY_CODE[error.code] ?? UNKNOWN
  const advice = context === 'background' ? (words.backgroundAdvice ?? words.advice) : words.advice
  const issues = error.issues ?? []
  let text: string
  let detail: string
  if (advice === undefined) {
    text = error.message.trim() === '' ? sentence(words.title) : error.message
    detail = error.message.trim()
  } else if (issues.length > 0 && words === NOT_VALID) {
    detail = `${sentence(issuesLine(issues))} ${advice}`
    text = `${sentence(`${words.title}: ${issuesLine(issues)}`)} ${advice}`
  } else {
    text = `${sentence(words.title)} ${advice}`
    detail = advice
  }
  return { code: error.code, title: words.title, text, detail, issues, fix: words.fix ?? null }
}

/** The text alone, where a line of an error is shown (a banner, a field's problem). */
export function errorText(error: IpcError, context: ErrorContext = 'action'): string {
  return explainError(error, context).text
}

/**
 * A sync that did not end well, in the same words; null when there is nothing to say (it went
 * well, or it was stopped because Atelier is closing).
 */
export function explainSyncFailure(last: SyncSummary): PlainError | null {
  if (last.outcome === 'ok' || last.outcome === 'aborted') return null
  const code =
    last.code ??
    (last.outcome === 'offline'
      ? 'OFFLINE'
      : last.outcome === 'unauthorized'
        ? 'UNAUTHORIZED'
        : 'SYNC_FAILED')
  // The sync runs again by itself (on a timer, sooner while offline).
  const plain = explainError({ code, message: last.message ?? '' }, 'background')
  return plain.title === UNKNOWN.title ? { ...plain, title: 'The sync stopped' } : plain
}

/**
 * Atelier's log: `<home>/logs/atelier.log`, one JSON object a line (pino), shared by the app and
 * the `atelier` command. One entry point, `openLogger`.
 *
 * Decisions, and why:
 *
 * - Synchronous writes (`writeSync` on a file opened for appending), no worker thread and no
 *   buffer: the lines that matter most are the ones just before a crash. Logging is at `info`
 *   by default, where it is a handful of lines a sync, so the cost does not matter; at `debug`
 *   it is one line a request, still small next to the request itself.
 * - Size: when a line would take the file past 5 MiB (or it is past that when opened), it is
 *   renamed `atelier.log.1`, replacing the previous one, and a new file starts. One generation
 *   is enough to see what happened before the last restart. Two processes (the app and the
 *   command) may append to the same file; O_APPEND keeps their lines whole.
 * - Levels: error, warn, info (default), debug. `--log-level` wins over `ATELIER_LOG_LEVEL`.
 *   The command refuses a bad value (exit 2, through commander); the app, with no command line
 *   to refuse, falls back to info and says why in the log (`resolveLogLevel`).
 * - Keys never reach the file, by two independent means: pino's `redact` censors fields named
 *   like credentials (`REDACT_PATHS`) before serializing, and every finished line goes through
 *   `redact` (`./redact`, which the service client uses for its errors too) with each secret
 *   given to `addSecret` (in its plain, JSON, URL, base64 and base64url forms) and any
 *   `Bearer <token>`, so a key inside a message, an error's text or a stack is masked too. The service client adds its own key: whoever makes a
 *   client with a `log` hook calls `addSecret(apiKey)`.
 * - Files are created owner-only (0600 in a 0700 folder): lines carry prompts and file names.
 * - A log that cannot be written never stops the work: the line is dropped.
 */
import type { Logger } from './logger'

export { LOG_FILE, LOGS_DIR, logFilePath, openLogger, REDACT_PATHS } from './logger'
export type { LogFields, Logger, OpenLoggerOptions } from './logger'
export {
  DEFAULT_LOG_LEVEL,
  isLogLevel,
  LOG_LEVEL_ENV,
  LOG_LEVELS,
  resolveLogLevel,
  type LogLevel,
  type ResolvedLogLevel,
} from './levels'
export { MAX_LOG_BYTES } from './destination'

/**
 * What the log reads of one request: the service client's `RequestLog` has these and more, and
 * the rest go into the line as they are. Declared here so that the log needs nothing of the
 * service.
 */
export interface RequestLine {
  method: string
  path: string
  query: string
  status: number
  ms: number
}

/**
 * The service client's `log` hook writing one debug line per attempt. Failed attempts are
 * logged at debug too: the failure itself reaches whoever made the call, who decides whether it
 * is worth a warning.
 */
export function requestLogger(logger: Logger): (entry: RequestLine) => void {
  const log = logger.child({ component: 'service' })
  return (entry) => {
    if (!log.isEnabled('debug')) return
    const query = entry.query === '' ? '' : `?${entry.query}`
    log.debug(`${entry.method} ${entry.path}${query} ${entry.status} ${entry.ms} ms`, {
      ...entry,
    })
  }
}

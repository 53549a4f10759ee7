import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pino, type Logger as PinoLogger } from 'pino'
import { MAX_LOG_BYTES, RotatingFile } from './destination'
import { DEFAULT_LOG_LEVEL, type LogLevel } from './levels'
import { redact, REDACTED } from './redact'

export const LOGS_DIR = 'logs'
export const LOG_FILE = 'atelier.log'

export function logFilePath(home: string): string {
  return join(home, LOGS_DIR, LOG_FILE)
}

export type LogFields = Record<string, unknown>

/** Leveled, structured logging into `<home>/logs/atelier.log`, one JSON object a line. */
export interface Logger {
  readonly level: LogLevel
  readonly file: string
  error(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  debug(message: string, fields?: LogFields): void
  isEnabled(level: LogLevel): boolean
  /** A logger that adds `bindings` to each of its lines and shares everything else. */
  child(bindings: LogFields): Logger
  /**
   * Masks this value, and its base64, URL and JSON encodings, in every line written from now
   * on, by this logger, its parent and its children.
   */
  addSecret(secret: string | null | undefined): void
  /** Lines logged after this are dropped. Idempotent. */
  close(): void
}

export interface OpenLoggerOptions {
  home: string
  level?: LogLevel
  /** Masked from the first line on, e.g. the key of the profile in use. */
  secrets?: readonly (string | null | undefined)[]
  /** Where the file is set aside as `.1`; 5 MiB by default. */
  maxBytes?: number
  /** Added to every line, e.g. `{ process: 'cli' }`. */
  bindings?: LogFields
}

/**
 * Field names whose value is a credential wherever they appear (top level or one level down).
 * pino censors these before serializing; the pass over the finished line catches the rest.
 */
export const REDACT_PATHS: readonly string[] = [
  'authorization',
  'Authorization',
  'apiKey',
  'api_key',
  'key',
  'token',
  'password',
  'secret',
  'headers.authorization',
  'headers.Authorization',
  'headers["x-api-key"]',
  'headers["X-Api-Key"]',
  '*.authorization',
  '*.Authorization',
  '*.apiKey',
  '*.api_key',
  '*.key',
  '*.token',
  '*.password',
  '*.secret',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.headers["x-api-key"]',
]

/** The forms a key can take once it has been through an encoder on its way into a line. */
function encodings(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1)
  const forms = [
    secret,
    json,
    encodeURIComponent(secret),
    Buffer.from(secret, 'utf8').toString('base64'),
    Buffer.from(secret, 'utf8').toString('base64url'),
  ]
  return [...new Set(forms)]
}

interface Shared {
  destination: RotatingFile
  /** Longest first, so that no form is cut by a shorter one that it contains. */
  secrets: string[]
  closed: boolean
}

class AtelierLogger implements Logger {
  constructor(
    private readonly pino: PinoLogger,
    private readonly shared: Shared,
    readonly level: LogLevel,
  ) {}

  get file(): string {
    return this.shared.destination.file
  }

  error(message: string, fields?: LogFields): void {
    this.pino.error(fields ?? {}, message)
  }

  warn(message: string, fields?: LogFields): void {
    this.pino.warn(fields ?? {}, message)
  }

  info(message: string, fields?: LogFields): void {
    this.pino.info(fields ?? {}, message)
  }

  debug(message: string, fields?: LogFields): void {
    this.pino.debug(fields ?? {}, message)
  }

  isEnabled(level: LogLevel): boolean {
    return this.pino.isLevelEnabled(level)
  }

  child(bindings: LogFields): Logger {
    return new AtelierLogger(this.pino.child(bindings), this.shared, this.level)
  }

  addSecret(secret: string | null | undefined): void {
    if (!secret) return
    const all = new Set([...this.shared.secrets, ...encodings(secret)])
    this.shared.secrets = [...all].sort((a, b) => b.length - a.length)
  }

  close(): void {
    if (this.shared.closed) return
    this.shared.closed = true
    this.shared.destination.close()
  }
}

/** Opens (creating the folder when missing) the log of this home. */
export function openLogger(options: OpenLoggerOptions): Logger {
  const level = options.level ?? DEFAULT_LOG_LEVEL
  const file = logFilePath(options.home)
  mkdirSync(join(options.home, LOGS_DIR), { recursive: true, mode: 0o700 })
  const destination = new RotatingFile(file, options.maxBytes ?? MAX_LOG_BYTES)
  const shared: Shared = { destination, secrets: [], closed: false }
  const instance = pino(
    {
      level,
      base: { pid: process.pid, ...options.bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      hooks: {
        // The last word on every line, whatever put the key there (a message, an error's text, a
        // URL, a field with an unforeseen name): what reaches the file is what this returns.
        streamWrite: (line) => (shared.closed ? '' : redact(line, shared.secrets)),
      },
    },
    {
      write: (line: string) => {
        if (line !== '') destination.write(line)
      },
    },
  )
  const logger = new AtelierLogger(instance, shared, level)
  for (const secret of options.secrets ?? []) logger.addSecret(secret)
  return logger
}

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const DEFAULT_LOG_LEVEL: LogLevel = 'info'

/** The environment variable read when no `--log-level` is given. */
export const LOG_LEVEL_ENV = 'ATELIER_LOG_LEVEL'

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value)
}

export interface ResolvedLogLevel {
  level: LogLevel
  /** Set when the environment named a level that does not exist: said in the log, not fatal. */
  problem?: string
}

/**
 * The option wins over the environment, which wins over the default. The app has no command
 * line to refuse, so a bad value in the environment falls back to the default with a reason
 * to log rather than stopping the start.
 */
export function resolveLogLevel(
  option: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedLogLevel {
  const chosen = option ?? env[LOG_LEVEL_ENV]
  if (chosen === undefined || chosen === '') return { level: DEFAULT_LOG_LEVEL }
  const normalized = chosen.trim().toLowerCase()
  if (isLogLevel(normalized)) return { level: normalized }
  return {
    level: DEFAULT_LOG_LEVEL,
    problem: `${option === undefined ? LOG_LEVEL_ENV : '--log-level'} is "${chosen.slice(0, 40)}", which is not a log level (${LOG_LEVELS.join(', ')}); using ${DEFAULT_LOG_LEVEL}.`,
  }
}

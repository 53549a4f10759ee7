/** Attempts of a quality gate's loop when its node's config does not say (`max_attempts`). */
export const DEFAULT_MAX_ATTEMPTS = 3
/** More attempts than this is taken for a typo: each attempt may cost money. */
export const MAX_ATTEMPTS_LIMIT = 20

/** Whether `config.max_attempts` holds a number of attempts Atelier will run. */
export const isAttempts = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_ATTEMPTS_LIMIT

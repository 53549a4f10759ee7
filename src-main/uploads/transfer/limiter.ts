import { Limiter } from '../../limiter'

/**
 * Bounds how many parts are in flight at once. One limiter is shared by every file of an upload
 * session, so the bound holds across files, not per file.
 */
export interface PartLimiter {
  /**
   * Waits for a free slot and answers its release (call it once, when the part is done). Rejects
   * with the signal's reason when the signal aborts first; no slot is held then.
   */
  acquire(signal: AbortSignal): Promise<() => void>
}

export interface CountingLimiter extends PartLimiter {
  /** Slots held right now. */
  readonly inFlight: number
  /** Callers waiting for a slot. */
  readonly waiting: number
}

/** A first-come, first-served semaphore with `max` slots (the app's `Limiter`, one priority). */
export function createPartLimiter(max: number): CountingLimiter {
  return new Limiter(max)
}

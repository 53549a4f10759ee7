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

interface Waiter {
  grant: () => void
}

/** A first-come, first-served semaphore with `max` slots. */
export function createPartLimiter(max: number): CountingLimiter {
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`A part limiter needs at least one slot, got ${String(max)}.`)
  }
  let inFlight = 0
  const queue: Waiter[] = []

  const releaser = (): (() => void) => {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = queue.shift()
      // The slot passes straight to the next waiter, so nobody can jump the queue meanwhile.
      if (next) next.grant()
      else inFlight--
    }
  }

  return {
    get inFlight() {
      return inFlight
    },
    get waiting() {
      return queue.length
    },
    acquire(signal) {
      if (signal.aborted) return Promise.reject(signal.reason as Error)
      if (inFlight < max) {
        inFlight++
        return Promise.resolve(releaser())
      }
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          grant: () => {
            signal.removeEventListener('abort', onAbort)
            resolve(releaser())
          },
        }
        function onAbort(): void {
          const index = queue.indexOf(waiter)
          if (index !== -1) queue.splice(index, 1)
          reject(signal.reason as Error)
        }
        signal.addEventListener('abort', onAbort, { once: true })
        queue.push(waiter)
      })
    },
  }
}

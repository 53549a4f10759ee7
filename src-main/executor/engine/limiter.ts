/**
 * A counting semaphore whose waiters get slots by priority, highest first, and in the order they
 * came among equals. The scheduler gives each node the length of the longest chain still behind
 * it, so when slots are short the node that holds up the most work starts first (critical path
 * first), and a long chain is not starved by a wide fan of short branches. A waiter whose signal
 * aborts leaves the queue and rejects with the signal's reason.
 */
export class Limiter {
  private active = 0
  /** Highest priority first; equal priorities in arrival order. */
  private readonly waiting: { priority: number; grant: () => void }[] = []

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`A concurrency limit must be a whole number of 1 or more, not ${limit}.`)
    }
  }

  acquire(signal: AbortSignal, priority = 0): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error)
    if (this.active < this.limit) {
      this.active++
      return Promise.resolve(this.releaser())
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        priority,
        grant: () => {
          signal.removeEventListener('abort', onAbort)
          this.active++
          resolve(this.releaser())
        },
      }
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter)
        if (at >= 0) this.waiting.splice(at, 1)
        reject(signal.reason as Error)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.splice(this.placeFor(priority), 0, waiter)
    })
  }

  /** The index after every waiter of the same or a higher priority (binary search). */
  private placeFor(priority: number): number {
    let low = 0
    let high = this.waiting.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((this.waiting[mid]?.priority ?? 0) >= priority) low = mid + 1
      else high = mid
    }
    return low
  }

  private releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      this.active--
      this.waiting.shift()?.grant()
    }
  }
}

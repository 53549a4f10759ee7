/**
 * A counting semaphore: the flow runner's slots (global, this machine's, per model) and the
 * upload's parts in flight and files being hashed. One entry, `Limiter`.
 *
 * Decisions, and why:
 *
 * - Waiters get slots by priority, highest first, and in the order they came among equals. The
 *   scheduler gives each node the length of the longest chain still behind it, so when slots are
 *   short the node that holds up the most work starts first (critical path first), and a long
 *   chain is not starved by a wide fan of short branches. Uploads use one priority: first come,
 *   first served.
 * - A released slot passes straight to the next waiter, so nobody can jump the queue meanwhile.
 * - A waiter whose signal aborts leaves the queue and rejects with the signal's reason. The
 *   limiter hangs one listener on each signal its waiters share, not one per waiter: 250 nodes of
 *   a flow waiting on the run's signal were 250 listeners, and Node warned of a leak past 10.
 */
export class Limiter {
  private active = 0
  /** Highest priority first; equal priorities in arrival order. */
  private readonly queue: Waiter[] = []
  /** The waiters of each signal, with the one listener that signal carries for them. */
  private readonly bySignal = new Map<AbortSignal, { waiters: Set<Waiter>; onAbort: () => void }>()

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`A concurrency limit must be a whole number of 1 or more, not ${limit}.`)
    }
  }

  /** Slots held right now. */
  get inFlight(): number {
    return this.active
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.queue.length
  }

  /**
   * Waits for a free slot and answers its release (call it once, when the work is done). Rejects
   * with the signal's reason when the signal aborts first; no slot is held then.
   */
  acquire(signal: AbortSignal, priority = 0): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error)
    if (this.active < this.limit) {
      this.active++
      return Promise.resolve(this.releaser())
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        priority,
        signal,
        grant: () => {
          this.forget(waiter)
          resolve(this.releaser())
        },
        reject,
      }
      this.listen(waiter)
      this.queue.splice(this.placeFor(priority), 0, waiter)
    })
  }

  private listen(waiter: Waiter): void {
    const { signal } = waiter
    let entry = this.bySignal.get(signal)
    if (!entry) {
      const waiters = new Set<Waiter>()
      const onAbort = () => {
        this.bySignal.delete(signal)
        for (const aborted of waiters) {
          const at = this.queue.indexOf(aborted)
          if (at >= 0) this.queue.splice(at, 1)
          aborted.reject(signal.reason as Error)
        }
      }
      entry = { waiters, onAbort }
      this.bySignal.set(signal, entry)
      signal.addEventListener('abort', onAbort, { once: true })
    }
    entry.waiters.add(waiter)
  }

  /** The waiter got its slot: its signal's listener goes once no other waiter needs it. */
  private forget(waiter: Waiter): void {
    const entry = this.bySignal.get(waiter.signal)
    if (!entry) return
    entry.waiters.delete(waiter)
    if (entry.waiters.size > 0) return
    this.bySignal.delete(waiter.signal)
    waiter.signal.removeEventListener('abort', entry.onAbort)
  }

  /** The index after every waiter of the same or a higher priority (binary search). */
  private placeFor(priority: number): number {
    let low = 0
    let high = this.queue.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((this.queue[mid]?.priority ?? 0) >= priority) low = mid + 1
      else high = mid
    }
    return low
  }

  private releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.queue.shift()
      // The slot passes straight to the next waiter, so nobody can jump the queue meanwhile.
      if (next) next.grant()
      else this.active--
    }
  }
}

interface Waiter {
  priority: number
  signal: AbortSignal
  grant: () => void
  reject: (reason: Error) => void
}

/**
 * A counting semaphore with a FIFO queue: the order nodes became ready is the order they get a
 * slot, so a long chain is not starved by a wide fan. A waiter whose signal aborts leaves the
 * queue and rejects with the signal's reason.
 */
export class Limiter {
  private active = 0
  private readonly waiting: { grant: () => void }[] = []

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`A concurrency limit must be a whole number of 1 or more, not ${limit}.`)
    }
  }

  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error)
    if (this.active < this.limit) {
      this.active++
      return Promise.resolve(this.releaser())
    }
    return new Promise((resolve, reject) => {
      const waiter = {
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
      this.waiting.push(waiter)
    })
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

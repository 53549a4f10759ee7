import { MediaStoreError } from './errors'

interface Job {
  keys: readonly string[]
  promise: Promise<unknown>
  controller: AbortController
  waiters: number
  settled: boolean
}

export function abortedError(): MediaStoreError {
  return new MediaStoreError('ABORTED', 'The media store work was aborted by its caller.')
}

/**
 * Work that concurrent callers asking for the same thing share: the first caller starts it, the
 * others wait on the same promise. A caller whose signal aborts stops waiting at once; the work
 * itself is aborted only when no caller waits for it any more, so one impatient screen never
 * cancels a download another still needs.
 */
export class SharedWork {
  private readonly jobs = new Map<string, Job>()

  run<T>(
    keys: readonly string[],
    start: (signal: AbortSignal) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortedError())
    let job = keys.map((key) => this.jobs.get(key)).find((found) => found !== undefined)
    if (!job) {
      const controller = new AbortController()
      const created: Job = {
        keys,
        controller,
        waiters: 0,
        settled: false,
        promise: Promise.resolve(),
      }
      created.promise = start(controller.signal).finally(() => {
        created.settled = true
        for (const key of created.keys) {
          if (this.jobs.get(key) === created) this.jobs.delete(key)
        }
      })
      for (const key of keys) this.jobs.set(key, created)
      job = created
    }
    return this.join(job, signal) as Promise<T>
  }

  private async join(job: Job, signal?: AbortSignal): Promise<unknown> {
    job.waiters += 1
    let onAbort = () => {}
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => {
        reject(abortedError())
      }
    })
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      return await (signal ? Promise.race([job.promise, aborted]) : job.promise)
    } finally {
      signal?.removeEventListener('abort', onAbort)
      job.waiters -= 1
      if (job.waiters === 0 && !job.settled) job.controller.abort()
    }
  }

  /** Aborts every job and waits until each has cleaned up after itself. */
  async abortAll(): Promise<void> {
    const jobs = new Set(this.jobs.values())
    for (const job of jobs) job.controller.abort()
    await Promise.allSettled([...jobs].map((job) => job.promise))
  }
}

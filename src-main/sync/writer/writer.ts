import { Worker } from 'node:worker_threads'
import { endWorker, firstWord, workerEntry } from '../../app/worker'
import type { Mirror } from '../../db'
import { writeIncrementalPage, type IncrementalPage } from '../collections'
import type { FromThread, ThreadError, ToThread, WriterData } from './protocol'

export type PageWrites = 'worker' | 'main-thread'

export interface PageCounts {
  written: number
  removed: number
}

/** Writes the pages of a sync, each with its cursor, in the order they are given. */
export interface PageWriter {
  /** Where the pages are written. */
  readonly where: PageWrites
  /** Why a worker was asked for and this writes on the main thread instead. */
  readonly fallback?: string
  /** Rejects with the write's error (SQLite's `code` kept); the page is then not written. */
  write: (page: IncrementalPage, now: number) => Promise<PageCounts>
  /** Waits for the pages handed over, then closes the thread's connection. Idempotent. */
  close: () => Promise<void>
}

/** How long the thread may take to start (tsx compiles it on a first run) before the fallback. */
export const START_TIMEOUT_MS = 30_000
/** How long `close` waits for the thread to finish its pages and close before it is stopped. */
export const CLOSE_TIMEOUT_MS = 30_000
/**
 * Handing a page over copies it on this thread (a structured clone): 500 runs cost about 8 ms
 * in one message and 100 evaluations 20 to 120 ms, each a block of its own. So a page crosses
 * in parts sized to take about PART_TARGET_MS to copy, from the cost per record measured so far
 * for its collection, with a turn of the event loop between them.
 */
export const PART_TARGET_MS = 2
/** Records in a collection's first part, before any cost was measured. */
export const FIRST_PART = 20

/** The pages written on the calling thread, as before there was a writer. */
export function mainThreadWriter(mirror: Mirror, fallback?: string): PageWriter {
  return {
    where: 'main-thread',
    ...(fallback === undefined ? {} : { fallback }),
    // A throw in the executor rejects, as a write in the thread would.
    write: (page) =>
      new Promise((resolve) => {
        resolve(writeIncrementalPage(mirror, page))
      }),
    close: () => Promise.resolve(),
  }
}

/**
 * A thread of its own that writes the pages into `mirror`'s file, so that the main thread stays
 * free while a big sync is written. When no thread can be started (a build without its entry,
 * or it fails to load), the writer writes on the main thread and `fallback` says why: the sync
 * works the same, only less smoothly.
 */
export async function startPageWriter(mirror: Mirror): Promise<PageWriter> {
  const entry = workerEntry(import.meta.url, './thread-entry.mjs', './sync-page-writer.js')
  if (entry === null) {
    return mainThreadWriter(mirror, 'this build has no page writer thread next to it')
  }
  const worker = new Worker(entry, { workerData: { file: mirror.file } satisfies WriterData })
  const ready = await firstWord(
    worker,
    (message: FromThread) => (message.type === 'ready' ? null : `it said "${message.type}" first`),
    START_TIMEOUT_MS,
  )
  const problem = 'problem' in ready ? ready.problem : ready.value
  if (problem !== null) {
    await worker.terminate()
    return mainThreadWriter(mirror, `the page writer thread could not be used: ${problem}`)
  }
  return new ThreadWriter(worker)
}

interface Waiting {
  resolve: (counts: PageCounts) => void
  reject: (error: Error) => void
}

class ThreadWriter implements PageWriter {
  readonly where = 'worker'
  private nextId = 1
  private readonly waiting = new Map<number, Waiting>()
  /** Set once the thread is gone: every later write fails with it. */
  private stopped: Error | null = null
  private closing: Promise<void> | null = null
  /** The pages being handed over, in turn. */
  private handing: Promise<void> = Promise.resolve()
  /** By collection: what copying one record into a message took, lately. */
  private readonly copyMs = new Map<string, number>()

  constructor(private readonly worker: Worker) {
    worker.on('message', (message: FromThread) => {
      this.receive(message)
    })
    worker.on('error', (error: Error) => {
      this.stop(new Error(`The mirror's page writer failed: ${error.message}`, { cause: error }))
    })
    worker.on('exit', (code) => {
      this.stop(new Error(`The mirror's page writer stopped (exit code ${code}).`))
    })
  }

  write(page: IncrementalPage, now: number): Promise<PageCounts> {
    if (this.stopped) return Promise.reject(this.stopped)
    if (this.closing) return Promise.reject(new Error("The mirror's page writer is closed."))
    const id = this.nextId++
    const written = new Promise<PageCounts>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
    })
    // One page's parts after another's: the thread writes pages in the order their last part came.
    this.handing = this.handing
      .then(() => this.handOver(id, page, now))
      .catch((error: unknown) => {
        // Not sent (a record that cannot be copied): this page fails, the next ones go on.
        this.waiting.get(id)?.reject(error instanceof Error ? error : new Error(String(error)))
        this.waiting.delete(id)
      })
    return written
  }

  private async handOver(id: number, page: IncrementalPage, now: number): Promise<void> {
    const { items, collection } = page
    let at = 0
    for (;;) {
      if (this.stopped) return
      const perRecord = this.copyMs.get(collection)
      const size =
        perRecord === undefined
          ? FIRST_PART
          : Math.floor(PART_TARGET_MS / Math.max(perRecord, 1e-6))
      const count = Math.min(items.length - at, Math.max(1, size))
      const records = at === 0 && count === items.length ? items : items.slice(at, at + count)
      at += count
      const last = at >= items.length
      const started = performance.now()
      if (last) {
        this.worker.postMessage({
          type: 'page',
          id,
          page: { ...page, items: records },
          now,
        } satisfies ToThread)
      } else {
        this.worker.postMessage({ type: 'records', id, records } satisfies ToThread)
      }
      if (count > 0) {
        // Leaning to the latest: records of one collection differ in size along a sync.
        const sample = (performance.now() - started) / count
        this.copyMs.set(
          collection,
          perRecord === undefined ? sample : 0.6 * perRecord + 0.4 * sample,
        )
      }
      if (last) return
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown()
    return this.closing
  }

  private async shutDown(): Promise<void> {
    await this.handing
    if (this.stopped) return
    // Messages are handled in order: the pages handed over before this are written first.
    await endWorker(
      this.worker,
      () => {
        this.worker.postMessage({ type: 'close' } satisfies ToThread)
      },
      CLOSE_TIMEOUT_MS,
    )
  }

  private receive(message: FromThread): void {
    if (message.type !== 'written' && message.type !== 'failed') return
    const waiting = this.waiting.get(message.id)
    if (!waiting) return
    this.waiting.delete(message.id)
    if (message.type === 'written') {
      waiting.resolve({ written: message.written, removed: message.removed })
    } else {
      waiting.reject(errorFrom(message.error))
    }
  }

  private stop(error: Error): void {
    this.stopped ??= error
    for (const { reject } of this.waiting.values()) reject(this.stopped)
    this.waiting.clear()
  }
}

/** The thread's error as an Error here, with the same name, message and code. */
function errorFrom(error: ThreadError): Error {
  const made = new Error(error.message)
  made.name = error.name
  if (error.code !== undefined) Object.assign(made, { code: error.code })
  return made
}

import type { IncrementalPage } from '../collections'

/** What the thread is started with. */
export interface WriterData {
  /** The mirror's file, which the thread opens a connection of its own to. */
  file: string
}

export type ToThread =
  /** The first records of page `id`: the rest and the page itself follow. */
  | { type: 'records'; id: number; records: readonly unknown[] }
  | {
      type: 'page'
      id: number
      /** Its `items` are the last records: the page's are the `records` sent before, then these. */
      page: IncrementalPage
      /** The engine's clock at the hand-over: the cursor's times are the app's, not the thread's. */
      now: number
    }
  | { type: 'close' }

/** An error as it crosses the thread: what the engine reads of it (SQLite's code included). */
export interface ThreadError {
  name: string
  message: string
  code?: string
}

export type FromThread =
  | { type: 'ready' }
  | { type: 'written'; id: number; written: number; removed: number }
  | { type: 'failed'; id: number; error: ThreadError }
  | { type: 'closed' }

export function threadError(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) }
  const code = (error as { code?: unknown }).code
  return {
    name: error.name,
    message: error.message,
    ...(typeof code === 'string' ? { code } : {}),
  }
}

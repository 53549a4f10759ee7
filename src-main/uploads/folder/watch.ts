import { watch } from 'chokidar'
import { basename } from 'node:path'
import {
  startFolderUpload,
  type FolderUpload,
  type FolderUploadOptions,
  type FolderUploadSummary,
} from './upload'

/** A watch is of the whole folder: it names no files. */
export interface FolderWatchOptions extends Omit<FolderUploadOptions, 'files'> {
  /** Told after every pass: the first over the whole folder, then one per burst of changes. */
  onPass?: ((summary: FolderUploadSummary) => void) | undefined
  /** Quiet time after the last change before a pass starts (default 1 s). */
  settleMs?: number | undefined
}

export interface FolderWatch {
  /** Ends the watch: the pass under way is canceled (the next upload of the folder goes on). */
  stop(): Promise<void>
  /** Settles when the watch has stopped; rejects if a pass could not run at all. */
  done: Promise<void>
}

/**
 * A hot folder: uploads the folder, then keeps watching it and uploads what appears or changes.
 * Each pass is a whole `startFolderUpload` on the same manifest, so a file already sent is
 * neither hashed nor sent again, and the scan's filters (hidden, system, patterns, media) apply
 * the same way to new files. A file is taken once it stopped growing (chokidar's
 * awaitWriteFinish), so a copy in progress is not sent half-written.
 */
export function watchFolder(options: FolderWatchOptions): FolderWatch {
  const settleMs = options.settleMs ?? 1_000
  let current: FolderUpload | null = null
  let again = false
  let stopped = false
  let timer: NodeJS.Timeout | null = null
  let finish: () => void = () => undefined
  let fail: (error: unknown) => void = () => undefined
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve
    fail = reject
  })

  const watcher = watch(options.root, {
    ignoreInitial: true,
    // Hidden and system names are never uploaded; not watching them saves work.
    ignored: (path) => basename(path).startsWith('.'),
    awaitWriteFinish: { stabilityThreshold: Math.min(settleMs, 2_000), pollInterval: 100 },
  })

  // A function, not a condition on the variables: they change while the pass is awaited.
  const changedMeanwhile = () => again && !stopped
  const pass = async (): Promise<void> => {
    if (stopped) return
    if (current) {
      again = true
      return
    }
    do {
      again = false
      current = startFolderUpload(options)
      try {
        options.onPass?.(await current.done)
      } finally {
        current = null
      }
    } while (changedMeanwhile())
  }
  const schedule = () => {
    if (stopped) return
    if (timer) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = null
      pass().catch((error: unknown) => {
        void stop().then(() => {
          fail(error)
        })
      })
    }, settleMs)
  }
  watcher.on('add', schedule).on('change', schedule).on('addDir', schedule)

  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    if (timer) clearTimeout(timer)
    current?.cancel()
    await watcher.close()
    finish()
  }

  // The first pass waits for the watcher's own first look at the folder: a file that appeared
  // before that look counts as already there (ignoreInitial), so a pass started earlier could
  // miss it and no event would ever name it. On a busy machine that look takes seconds.
  watcher.once('ready', () => {
    pass().catch((error: unknown) => {
      void stop().then(() => {
        fail(error)
      })
    })
  })
  return { stop, done }
}

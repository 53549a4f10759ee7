import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Worker } from 'node:worker_threads'

/**
 * Where a worker thread's code is, seen from the module that starts it (`moduleUrl`, its
 * `import.meta.url`):
 *
 * - from the TypeScript sources (`atelier`, the tests), `bootstrap`, a small `.mjs` beside that
 *   module which has tsx compile the thread: a worker does not inherit the loader of the thread
 *   that started it;
 * - from a bundle, `bundled` (`<name>.js`) beside the bundle's entries, built as an input of its
 *   own of the main build (electron.vite.config.ts).
 *
 * Null when the bundle has no such file: the caller then does the work on its own thread.
 */
export function workerEntry(moduleUrl: string, bootstrap: string, bundled: string): URL | null {
  const here = new URL(moduleUrl)
  if (here.pathname.endsWith('.ts')) return new URL(bootstrap, here)
  // The bundler decides where the starting module lands: in an entry beside the thread's file,
  // or in a shared chunk one folder below it (`out/main/chunks/`).
  for (const candidate of [new URL(bundled, here), new URL(`../${bundled}`, here)]) {
    if (existsSync(fileURLToPath(candidate))) return candidate
  }
  return null
}

/**
 * The first message that `read` makes something of (`undefined`: keep waiting), or why the
 * thread never sent one: it failed to load, exited, or was silent for `timeoutMs`.
 */
export function firstWord<T>(
  worker: Worker,
  // The thread's messages are its protocol's, which each caller names in its `read`.
  read: (message: never) => T | undefined,
  timeoutMs: number,
): Promise<{ value: T } | { problem: string }> {
  return new Promise((resolve) => {
    const settle = (outcome: { value: T } | { problem: string }) => {
      clearTimeout(timer)
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
      resolve(outcome)
    }
    const onMessage = (message: unknown) => {
      const value = read(message as never)
      if (value !== undefined) settle({ value })
    }
    const onError = (error: Error) => {
      settle({ problem: `it failed to start: ${error.message}` })
    }
    const onExit = (code: number) => {
      settle({ problem: `it exited (code ${code}) before it was ready` })
    }
    const timer = setTimeout(() => {
      settle({ problem: `it was not ready within ${timeoutMs / 1000} s` })
    }, timeoutMs)
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.on('exit', onExit)
  })
}

/**
 * Sends the thread its last message (`close` posts it) and waits for the thread to exit, ending
 * it after `timeoutMs`: messages are handled in order, so the work handed over before is done.
 */
export async function endWorker(
  worker: Worker,
  close: () => void,
  timeoutMs: number,
): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      resolve()
    })
  })
  close()
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => {
      resolve('late')
    }, timeoutMs)
  })
  try {
    if ((await Promise.race([exited, late])) === 'late') await worker.terminate()
  } finally {
    clearTimeout(timer)
  }
}

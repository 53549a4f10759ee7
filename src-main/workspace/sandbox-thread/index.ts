import { Worker } from 'node:worker_threads'
import { endWorker, firstWord, workerEntry } from '../../app/worker'
import type { SandboxKeys } from '../../sandbox'
import type { FromSandboxThread, SandboxThreadData, ToSandboxThread } from './protocol'

/**
 * The app's local sandbox (the backend of a new user, or one started from Settings), run in a
 * worker thread of its own rather than in the services' thread. Why: the sandbox is the service
 * in miniature, and answering the sync's requests (routing, validating, SQLite, JSON) is real
 * work; in the services' thread every window call waited behind it, so the first screen of a
 * warm start, drawn while the start's sync ran, came late, and the machine's second core sat
 * idle. Across the thread boundary only the address, the organization and the keys cross (the
 * keys stay in this process, in memory, as before).
 *
 * From the sources (`atelier`, the tests) the thread's entry is `thread-entry.mjs`, which has tsx
 * compile it; from a bundle, `local-sandbox.js` beside the bundle's entries (the main build's
 * input of that name). Without one, the sandbox runs in the calling thread, as it did before.
 */
export interface LocalSandbox {
  url: string
  orgId: string
  keys: SandboxKeys
  close: () => Promise<void>
}

export const SANDBOX_START_TIMEOUT_MS = 60_000
export const SANDBOX_CLOSE_TIMEOUT_MS = 30_000

export async function startSandboxThread(dataDir: string, port = 0): Promise<LocalSandbox> {
  const entry = workerEntry(import.meta.url, './thread-entry.mjs', './local-sandbox.js')
  if (entry === null) {
    // Loaded on demand: Fastify is only needed when the sandbox runs.
    const { startSandbox } = await import('../../sandbox')
    return startSandbox({ dataDir, port })
  }
  const worker = new Worker(entry, { workerData: { dataDir, port } satisfies SandboxThreadData })
  const word = await firstWord(
    worker,
    (message: FromSandboxThread) => (message.type === 'closed' ? undefined : message),
    SANDBOX_START_TIMEOUT_MS,
  )
  if ('problem' in word) {
    await worker.terminate()
    throw new Error(`The local sandbox's thread could not start: ${word.problem}.`)
  }
  if (word.value.type !== 'ready') {
    await worker.terminate()
    // The sandbox's own failure (its database locked or damaged, its native module missing),
    // with its code, as it was when the sandbox started in this thread.
    const { message, code } = word.value
    throw Object.assign(new Error(message), code ? { code } : {})
  }
  const { url, orgId, keys } = word.value
  let closing: Promise<void> | null = null
  return {
    url,
    orgId,
    keys,
    close: () =>
      (closing ??= endWorker(
        worker,
        () => {
          worker.postMessage({ type: 'close' } satisfies ToSandboxThread)
        },
        SANDBOX_CLOSE_TIMEOUT_MS,
      )),
  }
}

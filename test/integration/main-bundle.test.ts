import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The desktop app's main build (`out/main`, as `npm start` and `npm run dist` build it) runs its
 * services in the bundled `services-thread.js`. Electron cannot run here, but that thread is
 * plain Node: started on its own, it must open the local sandbox and answer the window's calls.
 * (It once could not: the bundle imported a path Node's ESM loader refuses, and looked for the
 * contract where the bundler had not put it, so a new user's app had no service at all.)
 */

const root = join(import.meta.dirname, '..', '..')
const thread = join(root, 'out', 'main', 'services-thread.js')
let home: string

beforeAll(() => {
  // out/ is built once per test run by test/global-setup.ts, as `npm run build` builds it.
  home = mkdtempSync(join(tmpdir(), 'atelier-main-bundle-'))
})

afterAll(() => {
  rmSync(home, { recursive: true, force: true })
})

interface Message {
  type: string
  id?: number
  result?: { ok: boolean; value?: unknown; error?: { code: string } }
}

describe('the bundled services thread', () => {
  it('opens the local sandbox and answers calls, then closes', async () => {
    expect(existsSync(thread)).toBe(true)
    const worker = new Worker(pathToFileURL(thread), {
      workerData: { home, fallbackToSandbox: true, canChooseFolder: false },
    })
    const messages: Message[] = []
    const next = (type: string) =>
      new Promise<Message>((resolve, reject) => {
        const found = messages.find((m) => m.type === type)
        if (found) {
          resolve(found)
          return
        }
        const timer = setTimeout(() => {
          reject(new Error(`no "${type}" from the thread`))
        }, 60_000)
        const onMessage = (message: Message) => {
          if (message.type !== type) return
          clearTimeout(timer)
          worker.off('message', onMessage)
          resolve(message)
        }
        worker.on('message', onMessage)
      })
    worker.on('message', (message: Message) => messages.push(message))
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve))
    try {
      await next('ready')
      worker.postMessage({
        type: 'call',
        id: 1,
        channel: 'app.getInfo',
        args: undefined,
        context: { shell: 'electron' },
      })
      const info = await next('result')
      expect(info.result).toMatchObject({
        ok: true,
        value: { shell: 'electron', backend: { kind: 'sandbox', label: 'Local sandbox' } },
      })
      worker.postMessage({ type: 'close' })
      await next('closed')
      expect(await exited).toBe(0)
    } finally {
      await worker.terminate()
    }
  }, 120_000)
})

import { parentPort, workerData } from 'node:worker_threads'
import { startSandbox } from '../../sandbox'
import type { FromSandboxThread, SandboxThreadData, ToSandboxThread } from './protocol'

/*
 * The app's local sandbox in a thread of its own: its Fastify, its SQLite and the validators it
 * compiles at each route's first request run here, beside the app's services rather than
 * between the window's calls (see index.ts for why).
 */

const port = parentPort
if (port === null) throw new Error('The local sandbox thread runs in a worker thread.')
const { dataDir, port: listenOn = 0 } = workerData as SandboxThreadData
const send = (message: FromSandboxThread) => {
  port.postMessage(message)
}

try {
  const sandbox = await startSandbox({ dataDir, port: listenOn })
  // The one message there is: close.
  port.once('message', (_message: ToSandboxThread) => {
    void sandbox.close().finally(() => {
      send({ type: 'closed' })
      port.close()
    })
  })
  send({ type: 'ready', url: sandbox.url, orgId: sandbox.orgId, keys: sandbox.keys })
} catch (error) {
  const code = (error as { code?: unknown } | null)?.code
  send({
    type: 'failed',
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  })
  port.close()
}

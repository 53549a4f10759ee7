import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { ipcFail } from '../../src-shared/ipc'
import { toCrossing } from './crossing'
import type { Ask, FromThread, Snapshot, ThreadData, ToThread } from './protocol'
import { openServices, type OpenedServices } from './services'

/*
 * The services thread: the host, its core (sync, flow runs, uploads, the mirror and the ledger)
 * and every channel's handler run here, so that their work never holds the main thread, which
 * only passes calls, answers and events along. See index.ts.
 */

if (parentPort === null) throw new Error('The services thread runs in a worker thread.')
const port: MessagePort = parentPort
const data = workerData as ThreadData
const send = (message: FromThread) => {
  port.postMessage(message)
}

let nextAsk = 1
const asking = new Map<number, { resolve: (value: unknown) => void; reject: (e: Error) => void }>()
const ask = (question: Ask): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const id = nextAsk++
    asking.set(id, { resolve, reject })
    send({ type: 'ask', id, ask: question })
  })

/** The call's answer; one that is not plain data (a handler's bug) still gets an answer. */
function answer(id: number, channel: string, result: unknown): void {
  try {
    send({ type: 'result', id, result: result as never })
  } catch {
    send({
      type: 'result',
      id,
      result: ipcFail({
        code: 'INTERNAL',
        message: `Atelier hit an unexpected problem while answering ${channel}. Try again; if it keeps happening, restart Atelier.`,
      }),
    })
  }
}

function serve(services: OpenedServices): void {
  const { host } = services
  const snapshot = (): Snapshot => ({ notices: host.notices, syncStatus: host.syncStatus() })
  host.onEvent((event, payload) => {
    const withSnapshot = event === 'sync.status' || event === 'app.notice'
    send({ type: 'event', event, payload, ...(withSnapshot ? { snapshot: snapshot() } : {}) })
  })
  port.on('message', (message: ToThread) => {
    if (message.type === 'call') {
      const { id, channel, args, context } = message
      void services.dispatch(channel, args, context).then((result) => {
        answer(id, channel, result)
      })
    } else if (message.type === 'answer') {
      const waiting = asking.get(message.id)
      asking.delete(message.id)
      if (message.error !== undefined) waiting?.reject(new Error(message.error))
      else waiting?.resolve(message.value)
    } else {
      void services.close().finally(() => {
        send({ type: 'closed' })
        port.close()
      })
    }
  })
  send({ type: 'ready', snapshot: snapshot() })
}

async function start(): Promise<void> {
  let services: OpenedServices
  try {
    services = await openServices(data, {
      openExternal: async (url) => {
        await ask({ what: 'openExternal', url })
      },
      ...(data.canChooseFolder
        ? { chooseFolder: async () => (await ask({ what: 'chooseFolder' })) as string | null }
        : {}),
    })
  } catch (error) {
    send({ type: 'failed', error: toCrossing(error) })
    // The port stays open (a listener holds it) until the main thread, having read why, ends
    // this thread: a thread that ended by itself could be taken for one that crashed.
    port.on('message', () => undefined)
    return
  }
  serve(services)
}

void start()

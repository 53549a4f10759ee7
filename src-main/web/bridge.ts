import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocket, WebSocketServer, type RawData } from 'ws'
// The leaves, not the ipc index: the index brings the channels' zod contract, which this thread
// (the browser mode's HTTP side) never checks against and would build at every start.
import { IPC_EVENTS, type IpcEventName, type IpcEvents } from '../../src-shared/ipc/events'
import { ipcFail } from '../../src-shared/ipc/result'
import type { Logger } from '../log'
import type { AppServices } from '../services-thread'

export const BRIDGE_PATH = '/bridge'

/** Far above any call of the contract (a search query is a few hundred bytes). */
export const BRIDGE_MAX_MESSAGE_BYTES = 1024 * 1024

/** A page that reconnects says so: it has had the notices, but may have missed a status. */
export const RESUME_PARAM = 'resume'

export interface Bridge {
  /** Takes over an upgrade request that has passed the server's checks. */
  accept: (request: IncomingMessage, socket: Duplex, head: Buffer) => void
  readonly connections: number
  close: () => void
}

interface Call {
  id: number | string
  channel: string
  args: unknown
}

const badMessage = (message: string) => ipcFail({ code: 'BAD_MESSAGE', message })

const NOT_STARTED =
  "Atelier's services could not start; the terminal that runs `atelier web` says why."

type BridgeServices = Pick<AppServices, 'dispatch' | 'onEvent' | 'syncStatus' | 'notices'>

/** A call as the page sends it, or what is wrong with it, in words a developer can act on. */
function parseCall(
  data: RawData,
  isBinary: boolean,
): Call | { id: Call['id'] | null; error: string } {
  const shape =
    'Send JSON text: { "id": <number or string>, "channel": "<domain>.<verb>", "args": … }.'
  if (isBinary) return { id: null, error: `The bridge does not take binary messages. ${shape}` }
  let json: unknown
  try {
    const bytes = Buffer.isBuffer(data)
      ? data
      : Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.from(data)
    json = JSON.parse(bytes.toString('utf8'))
  } catch {
    return { id: null, error: `This message is not valid JSON. ${shape}` }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { id: null, error: `This message is not a JSON object. ${shape}` }
  }
  const { id, channel, args } = json as Record<string, unknown>
  const validId =
    (typeof id === 'number' && Number.isSafeInteger(id)) ||
    (typeof id === 'string' && id.length > 0 && id.length <= 100)
  if (!validId) return { id: null, error: `This message has no valid id. ${shape}` }
  if (typeof channel !== 'string') return { id, error: `This message names no channel. ${shape}` }
  return { id, channel, args }
}

/**
 * The IPC contract over one WebSocket per page: a call `{ id, channel, args }` is answered
 * `{ id, result }` with exactly what `dispatchIpc` gives the Electron transport (so the same
 * validation and the same errors), and the core's events go to every page as
 * `{ event, payload }`. A message that is not a call is answered BAD_MESSAGE; one past
 * `BRIDGE_MAX_MESSAGE_BYTES` closes that socket (1009), as the page's side never sends one.
 */
export function createBridge(options: {
  /**
   * The calls' handlers and the events: the host's, which stay across switches of profile.
   * While they start, a page is already served: its calls and welcome wait for them.
   */
  services: Promise<BridgeServices>
  logger: Logger
}): Bridge {
  const { logger } = options
  let started: BridgeServices | undefined
  let unsubscribe = () => {}
  const starting = options.services.then((services) => {
    started = services
    unsubscribe = services.onEvent((event, payload) => {
      if (!(IPC_EVENTS as readonly string[]).includes(event)) return
      for (const socket of sockets) push(socket, event, payload)
    })
    return services
  })
  // Heard by each call; the host tells the terminal why they could not start.
  starting.catch(() => undefined)
  const whenStarted = async () => started ?? starting
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: BRIDGE_MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
  })
  const sockets = new Set<WebSocket>()

  const send = (socket: WebSocket, message: object) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message))
  }
  const push = <E extends IpcEventName>(socket: WebSocket, event: E, payload: IpcEvents[E]) => {
    send(socket, { event, payload })
  }

  const onCall = async (socket: WebSocket, data: RawData, isBinary: boolean) => {
    const call = parseCall(data, isBinary)
    if ('error' in call) {
      send(socket, { id: call.id, result: badMessage(call.error) })
      return
    }
    const services = await whenStarted().catch(() => null)
    if (!services) {
      send(socket, { id: call.id, result: ipcFail({ code: 'UNAVAILABLE', message: NOT_STARTED }) })
      return
    }
    // Validated and run by `dispatchIpc` in the services' thread, which logs what failed.
    const result = await services.dispatch(call.channel, call.args, { shell: 'web' })
    send(socket, { id: call.id, result })
  }

  const welcome = async (socket: WebSocket, request: IncomingMessage) => {
    const services = await whenStarted()
    const resumed = new URL(request.url ?? '/', 'http://localhost').searchParams.has(RESUME_PARAM)
    if (resumed) {
      // The status is whole in every event, so repeating the latest one catches the page up.
      push(socket, 'sync.status', services.syncStatus())
      return
    }
    // Notices raised before the page could listen (a mirror rebuilt at start) are told again.
    for (const notice of services.notices) push(socket, 'app.notice', notice)
  }

  return {
    accept: (request, socket, head) => {
      server.handleUpgrade(request, socket, head, (ws) => {
        sockets.add(ws)
        ws.on('message', (data, isBinary) => {
          onCall(ws, data, isBinary).catch((error: unknown) => {
            logger.error('a bridge message could not be answered', { err: error })
          })
        })
        // A message past the limit or a broken frame: ws closes this socket and says why here.
        ws.on('error', (error) => {
          logger.warn('a bridge connection was closed for a bad message', { err: error })
        })
        ws.on('close', () => sockets.delete(ws))
        // Services that failed to start are the host's to tell; the page's calls hear it.
        welcome(ws, request).catch(() => undefined)
      })
    },
    get connections() {
      return sockets.size
    },
    close: () => {
      unsubscribe()
      for (const socket of sockets) socket.terminate()
      sockets.clear()
      server.close()
    },
  }
}

/**
 * `window.atelier` in the browser mode (`atelier web`), over the server's WebSocket: the same
 * shape as the Electron preload's, built from the same channel and event lists. It installs
 * itself only when the page has no `window.atelier` (the desktop preload comes first) and the
 * served page carries the bridge marker, so a page opened on its own still says it is not
 * connected. Imported first by main.tsx, so it is in place before the app reads it.
 *
 * Calls never throw, as the renderer reads results and does not catch: a call waits for the
 * socket to open, and one the socket cannot carry (it dropped, the connection failed, the
 * message is too big) is answered with a failure (DISCONNECTED, MESSAGE_TOO_LARGE). A dropped
 * socket reconnects, waiting longer each time up to 5 s.
 */
import type { AtelierApi } from '../../src-shared/ipc/api'
import { buildApi } from '../../src-shared/ipc/build-api'
import { IPC_EVENTS } from '../../src-shared/ipc/events'
import type { IpcResult } from '../../src-shared/ipc/result'

// Only the lists and types come from the contract: the bundle stays free of zod, the server validates.

const MARKER = 'atelier-bridge'
const RETRY_FIRST_MS = 250
const RETRY_MAX_MS = 5000

type Answer = (result: IpcResult<unknown>) => void

const fail = (code: string, message: string): IpcResult<never> => ({
  ok: false,
  error: { code, message },
})

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}

function createWebBridge(url: URL, maxBytes: number): AtelierApi {
  const pending = new Map<number, Answer>()
  /** Calls made while the socket was not open, sent as soon as it is. */
  let queued: string[] = []
  let nextId = 1
  let socket: WebSocket | null = null
  let retryMs = RETRY_FIRST_MS
  let connectedOnce = false
  const listeners = new Map<string, Set<(payload: unknown) => void>>()

  const dropAll = () => {
    const answers = [...pending.values()]
    pending.clear()
    queued = []
    for (const answer of answers) {
      answer(
        fail(
          'DISCONNECTED',
          'The connection to Atelier was lost. Check that `atelier web` is still running, then try again.',
        ),
      )
    }
  }

  const onMessage = (event: MessageEvent) => {
    if (typeof event.data !== 'string') return
    let message: unknown
    try {
      message = JSON.parse(event.data)
    } catch {
      return
    }
    if (!isRecord(message)) return
    if (typeof message.event === 'string') {
      for (const listener of listeners.get(message.event) ?? []) listener(message.payload)
      return
    }
    if (typeof message.id === 'number') {
      const answer = pending.get(message.id)
      pending.delete(message.id)
      answer?.(message.result as IpcResult<unknown>)
    }
  }

  const connect = () => {
    const target = new URL(url)
    // A page that reconnects has had the notices; the server sends it the latest status instead.
    if (connectedOnce) target.searchParams.set('resume', '1')
    const ws = new WebSocket(target)
    socket = ws
    ws.addEventListener('open', () => {
      connectedOnce = true
      retryMs = RETRY_FIRST_MS
      const waiting = queued
      queued = []
      for (const text of waiting) ws.send(text)
    })
    ws.addEventListener('message', onMessage)
    ws.addEventListener('close', () => {
      socket = null
      dropAll()
      setTimeout(connect, retryMs)
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)
    })
  }

  const call = (channel: string, args: unknown): Promise<IpcResult<unknown>> =>
    new Promise((resolve) => {
      const id = nextId++
      let text: string
      try {
        text = JSON.stringify({ id, channel, args })
      } catch {
        resolve(fail('INVALID_ARGUMENT', `The arguments of ${channel} cannot be sent to Atelier.`))
        return
      }
      if (new TextEncoder().encode(text).length > maxBytes) {
        resolve(
          fail(
            'MESSAGE_TOO_LARGE',
            `The arguments of ${channel} are too large to send to Atelier.`,
          ),
        )
        return
      }
      pending.set(id, resolve)
      if (socket?.readyState === WebSocket.OPEN) socket.send(text)
      else queued.push(text)
    })

  const on = (event: string, listener: (payload: unknown) => void) => {
    if (!(IPC_EVENTS as readonly string[]).includes(event)) return () => undefined
    const set = listeners.get(event) ?? new Set()
    listeners.set(event, set)
    set.add(listener)
    return () => {
      set.delete(listener)
    }
  }
  connect()
  return buildApi(call, on as AtelierApi['on'])
}

const marker = document.querySelector<HTMLMetaElement>(`meta[name="${MARKER}"]`)
if (window.atelier === undefined && marker !== null) {
  const url = new URL(marker.content, location.href)
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  const maxBytes = Number(marker.dataset.maxBytes) || 1024 * 1024
  Object.defineProperty(window, 'atelier', {
    value: createWebBridge(url, maxBytes),
    writable: false,
    configurable: false,
    enumerable: true,
  })
}

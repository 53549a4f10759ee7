import { contextBridge, ipcRenderer } from 'electron'
import { buildApi } from '../src-shared/ipc/build-api'
import {
  IPC_EVENT_PREFIX,
  IPC_EVENTS,
  type IpcEventName,
  type IpcEvents,
} from '../src-shared/ipc/events'
import type { IpcResult } from '../src-shared/ipc/result'

// Only the channel list and types come from the contract: the preload stays free of zod, and main
// validates.
function on<E extends IpcEventName>(
  event: E,
  listener: (payload: IpcEvents[E]) => void,
): () => void {
  if (!(IPC_EVENTS as readonly string[]).includes(event)) return () => undefined
  const wrapped = (_event: Electron.IpcRendererEvent, payload: IpcEvents[E]) => {
    listener(payload)
  }
  ipcRenderer.on(IPC_EVENT_PREFIX + event, wrapped)
  return () => {
    ipcRenderer.removeListener(IPC_EVENT_PREFIX + event, wrapped)
  }
}

// The renderer gets a domain-shaped API, never ipcRenderer or a raw channel name.
const api = buildApi(
  (channel, args) => ipcRenderer.invoke(channel, args) as Promise<IpcResult<unknown>>,
  on,
)

contextBridge.exposeInMainWorld('atelier', api)

import { contextBridge, ipcRenderer, webUtils } from 'electron'
import { buildApi } from '../src-shared/ipc/build-api'
import {
  IPC_EVENT_PREFIX,
  IPC_EVENTS,
  type IpcEventName,
  type IpcEvents,
} from '../src-shared/ipc/events'
import type { DroppedFiles } from '../src-shared/ipc/api'
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

// Where a dropped file or folder lies, for the Assets page to upload it (Electron 32's webUtils:
// `File.path` is gone). Only a File the page holds is answered, and Chromium gives a path only
// to one the person dropped or chose; nothing here reads or opens a file.
const files = {
  pathOf: (file) => {
    try {
      const path = webUtils.getPathForFile(file)
      return path === '' ? null : path
    } catch {
      // Not a File at all.
      return null
    }
  },
} satisfies DroppedFiles

contextBridge.exposeInMainWorld('atelierFiles', files)

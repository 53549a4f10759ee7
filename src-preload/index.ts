import { contextBridge, ipcRenderer } from 'electron'
import type { AtelierApi } from '../src-shared/ipc/api'
import type { IpcArgs, IpcChannel, IpcValue } from '../src-shared/ipc/contract'
import {
  IPC_EVENT_PREFIX,
  IPC_EVENTS,
  type IpcEventName,
  type IpcEvents,
} from '../src-shared/ipc/events'
import type { IpcResult } from '../src-shared/ipc/result'

// Only types come from the contract: the preload bundle stays free of zod, and main validates.
function invoke<C extends IpcChannel>(
  channel: C,
  args?: IpcArgs<C>,
): Promise<IpcResult<IpcValue<C>>> {
  return ipcRenderer.invoke(channel, args) as Promise<IpcResult<IpcValue<C>>>
}

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
const api = {
  app: {
    getInfo: () => invoke('app.getInfo'),
    openExternal: (args) => invoke('app.openExternal', args),
  },
  account: {
    summary: () => invoke('account.summary'),
  },
  sync: {
    getStatus: () => invoke('sync.getStatus'),
    start: () => invoke('sync.start'),
  },
  search: {
    query: (args) => invoke('search.query', args),
  },
  flows: {
    list: () => invoke('flows.list'),
    get: (args) => invoke('flows.get', args),
    create: (args) => invoke('flows.create', args),
    save: (args) => invoke('flows.save', args),
    rename: (args) => invoke('flows.rename', args),
    delete: (args) => invoke('flows.delete', args),
    restore: (args) => invoke('flows.restore', args),
    import: (args) => invoke('flows.import', args),
    export: (args) => invoke('flows.export', args),
    saveVersion: (args) => invoke('flows.saveVersion', args),
    restoreVersion: (args) => invoke('flows.restoreVersion', args),
    check: (args) => invoke('flows.check', args),
    palette: () => invoke('flows.palette'),
  },
  flowRuns: {
    start: (args) => invoke('flowRuns.start', args),
    cancel: (args) => invoke('flowRuns.cancel', args),
  },
  media: {
    preview: (args) => invoke('media.preview', args),
  },
  on,
} satisfies AtelierApi

contextBridge.exposeInMainWorld('atelier', api)

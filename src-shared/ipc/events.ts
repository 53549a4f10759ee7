import type { SyncStatus } from '../domain/sync'

/** Events the main process pushes to the renderer: name → payload. */
export interface IpcEvents {
  'app.notice': { level: 'info' | 'warning' | 'error'; message: string }
  /** The whole status at every change; progress alone at most ten times a second. */
  'sync.status': SyncStatus
}

export type IpcEventName = keyof IpcEvents

export const IPC_EVENTS = ['app.notice', 'sync.status'] as const satisfies readonly IpcEventName[]

/** The prefix that keeps pushed events apart from invoke channels on the wire. */
export const IPC_EVENT_PREFIX = 'event:'

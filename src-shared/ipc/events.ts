import type { UploadProgressEvent } from '../domain/assets'
import type { FlowRunEventMessage } from '../domain/flow-editor'
import type { SyncStatus } from '../domain/sync'

/** Events the main process pushes to the renderer: name → payload. */
export interface IpcEvents {
  'app.notice': { level: 'info' | 'warning' | 'error'; message: string }
  /** The whole status at every change; progress alone at most ten times a second. */
  'sync.status': SyncStatus
  /** Every event of a flow run started from the editor, as it happens. */
  'flowRuns.event': FlowRunEventMessage
  /** A folder upload as it moves: at most ten a second per upload, files only when they change. */
  'uploads.progress': UploadProgressEvent
  /** The mirror's assets or folders changed outside a sync (a held delete sent or refused). */
  'assets.changed': { reason: 'deleted' | 'delete-failed' | 'uploaded' }
}

export type IpcEventName = keyof IpcEvents

export const IPC_EVENTS = [
  'app.notice',
  'sync.status',
  'flowRuns.event',
  'uploads.progress',
  'assets.changed',
] as const satisfies readonly IpcEventName[]

/** The prefix that keeps pushed events apart from invoke channels on the wire. */
export const IPC_EVENT_PREFIX = 'event:'

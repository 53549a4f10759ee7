import type { AccountSummary } from '../domain/app'
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
  /**
   * `written`: an upload's new assets are in the mirror, as the service confirmed them (their
   * folders may still be on their way); `uploaded`: the sync after the upload has ended too.
   */
  'assets.changed': { reason: 'deleted' | 'delete-failed' | 'uploaded' | 'written' }
  /**
   * Records the app itself just made or changed (a flow run's runs, a re-run, a submitted
   * evaluation) are in the mirror, before any sync: the lists showing them read again.
   */
  'mirror.changed': { collections: MirrorChange[] }
  /** The account read again after something charged or refunded credit: every view shows it. */
  'account.changed': AccountSummary
}

/** What `mirror.changed` names: the lists that read again. */
export type MirrorChange = 'runs' | 'evaluations' | 'assets' | 'workflows'

export type IpcEventName = keyof IpcEvents

export const IPC_EVENTS = [
  'app.notice',
  'sync.status',
  'flowRuns.event',
  'uploads.progress',
  'assets.changed',
  'mirror.changed',
  'account.changed',
] as const satisfies readonly IpcEventName[]

/** The prefix that keeps pushed events apart from invoke channels on the wire. */
export const IPC_EVENT_PREFIX = 'event:'

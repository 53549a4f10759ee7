import type { SyncStatus } from '../../src-shared/domain/sync'
import type { IpcEventName, IpcEvents, IpcResult } from '../../src-shared/ipc'
import type { IpcCallContext } from '../ipc'
import type { LogLevel } from '../log'
import type { GivenService } from '../workspace'

export type Notice = IpcEvents['app.notice']

/** What the thread is started with (a structured clone: data only). */
export interface ThreadData {
  home: string
  logLevel?: LogLevel
  profile?: string
  fallbackToSandbox: boolean
  service?: GivenService
  /** Whether the main thread has a folder dialog to ask (the desktop window has). */
  canChooseFolder: boolean
}

/** What the window should know at once: kept on the main thread, refreshed with every event. */
export interface Snapshot {
  notices: readonly Notice[]
  syncStatus: SyncStatus
}

/** Asks only the main thread can answer (Electron's shell and dialogs live there). */
export type Ask = { what: 'openExternal'; url: string } | { what: 'chooseFolder' }

export type ToThread =
  | { type: 'call'; id: number; channel: string; args: unknown; context: IpcCallContext }
  | { type: 'answer'; id: number; value?: unknown; error?: string }
  | { type: 'close' }

/** An error as it crosses: enough to make the same kind of error again on the other side. */
export interface CrossingError {
  kind: 'secrets' | 'service' | 'other'
  name: string
  message: string
  code?: string
  status?: number
  isInputError?: boolean
}

export type FromThread =
  | { type: 'ready'; snapshot: Snapshot }
  | { type: 'failed'; error: CrossingError }
  | { type: 'result'; id: number; result: IpcResult<unknown> }
  | { type: 'event'; event: IpcEventName; payload: unknown; snapshot?: Snapshot }
  | { type: 'ask'; id: number; ask: Ask }
  | { type: 'closed' }

/**
 * The background sync as the window sees it.
 *
 * - `idle`: nothing running; the mirror is as fresh as `lastOkAt`.
 * - `syncing`: a sync (or what runs right after it: outbox, downloads) is under way; see `progress`.
 * - `offline`: the service could not be reached; everything synced so far is still browsable,
 *   and Atelier tries again on its own (`nextAt`).
 * - `unauthorized`: the service refused the key (401/403); only a change in Settings helps.
 * - `error`: the service answered with something else that stopped the sync; `message` says what.
 */
export type SyncStatusState = 'idle' | 'syncing' | 'offline' | 'unauthorized' | 'error'

export const SYNC_STATUS_STATES = [
  'idle',
  'syncing',
  'offline',
  'unauthorized',
  'error',
] as const satisfies readonly SyncStatusState[]

export interface SyncProgressStatus {
  /** What is being brought up to date, in the sync's words: `runs`, `assets`, `catalogs`… */
  collection: string
  /** Records done so far in this collection. */
  done: number
  /** Left out when unknown (the service's lists carry no count): show an indeterminate bar. */
  total?: number
  /** Which collection of how many, from 1: a rough overall position. */
  step: number
  steps: number
}

/** How the last finished sync went. */
export interface SyncSummary {
  outcome: 'ok' | 'offline' | 'unauthorized' | 'aborted' | 'failed'
  /** Epoch milliseconds. */
  finishedAt: number
  elapsedMs: number
  /** New or changed records received, over all collections. */
  fetched: number
  /** Records removed because the service deleted them. */
  deleted: number
  /** Plain words, when the outcome is not ok. */
  message: string | null
  /** The service's or the client's error code, when the outcome is not ok. */
  code: string | null
}

export interface SyncStatus {
  state: SyncStatusState
  /** Epoch milliseconds of the last sync that finished ok, from the mirror; null before any. */
  lastOkAt: number | null
  last: SyncSummary | null
  /** Set while syncing. */
  progress: SyncProgressStatus | null
  /** When the next automatic sync starts (epoch milliseconds); null while one runs or none is due. */
  nextAt: number | null
}

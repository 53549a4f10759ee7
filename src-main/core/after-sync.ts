import type { Databases } from '../db'
import type { Logger } from '../log'
import type { ServiceClient } from '../service'
import type { SyncResult } from '../sync'

/** What a step run after each sync gets. */
export interface AfterSyncContext {
  /** How the pull itself went; a step that needs the service can skip when it was not ok. */
  result: SyncResult
  client: ServiceClient
  databases: Databases
  /** The profile the sync ran for: the outbox and the cursors are kept per profile. */
  profile: string
  orgId: string
  /** Aborted when Atelier closes: stop soon, leave the ledger consistent. */
  signal: AbortSignal
  logger: Logger
  /** Shown in the sync status under the step's name; leave `total` out when unknown. */
  progress: (done: number, total?: number) => void
}

/**
 * A step run after each sync (not after one stopped by closing), in list order, while the status
 * still says `syncing`: the outbox replay and the downloads of new outputs belong here. A step
 * that throws is logged and the next one runs; it never changes the sync's outcome.
 */
export interface AfterSyncHook {
  /** In the user's words ("outbox", "media"): the status shows it as the collection. */
  name: string
  /** What the step did, in a line for people and whole for `--json`; nothing when it skipped. */
  run: (context: AfterSyncContext) => Promise<AfterSyncOutcome | undefined>
  /** Releases what the step holds open (a media store); called once, when the core closes. */
  close?: () => Promise<void>
}

export interface AfterSyncOutcome {
  summary: string
  report: object
}

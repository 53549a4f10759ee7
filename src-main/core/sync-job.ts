import type { SyncProgressStatus } from '../../src-shared/domain/sync'
import type { Databases } from '../db'
import type { Logger } from '../log'
import type { ServiceClient } from '../service'
import { SYNC_COLLECTIONS, SyncEngine, type SyncCollection } from '../sync'
import type { AfterSyncHook } from './after-sync'
import type { SyncJob } from './sync-schedule'

export interface SyncJobOptions {
  client: ServiceClient
  databases: Databases
  profile: string
  orgId: string
  clock: () => number
  logger: Logger
  afterSync: readonly AfterSyncHook[]
  /** Read at each sync: Settings may have changed them since the last one. */
  collections: () => readonly SyncCollection[]
  mediaDownloads: () => boolean
}

/**
 * One whole sync as the scheduler runs it: the pull of every chosen collection, then the
 * after-sync steps in order, each under its own step number so the status counts them all.
 * A step that fails is logged and the next one runs; a sync stopped by closing runs no more.
 */
export function syncJob(options: SyncJobOptions): SyncJob {
  const { client, databases, profile, orgId, clock, logger, afterSync } = options
  const steps = SYNC_COLLECTIONS.length + afterSync.length
  return async (signal, progress) => {
    // A function, not the property: the steps' awaits can change it under the compiler's eyes.
    const stopped = () => signal.aborted
    const sync = logger.child({ component: 'sync' })
    const engine = new SyncEngine({
      client,
      mirror: databases.mirror,
      profileName: profile,
      orgId,
      clock,
      onProgress: (p) => {
        sync.debug(`${p.collection} ${p.phase}: ${p.done} records, ${p.pages} pages`, { ...p })
        const status: SyncProgressStatus = {
          collection: p.collection,
          done: p.done,
          step: SYNC_COLLECTIONS.indexOf(p.collection) + 1,
          steps,
        }
        if (p.total !== undefined) status.total = p.total
        progress(status)
      },
    })
    const result = await engine.syncAll({ signal, collections: options.collections() })
    if (result.state === 'aborted') return result
    for (const [index, hook] of afterSync.entries()) {
      if (stopped()) break
      if (hook.name === 'media' && !options.mediaDownloads()) continue
      const step = SYNC_COLLECTIONS.length + index + 1
      progress({ collection: hook.name, done: 0, step, steps })
      try {
        await hook.run({
          result,
          client,
          databases,
          profile,
          orgId,
          signal,
          logger: logger.child({ component: hook.name }),
          progress: (done, total) => {
            progress({
              collection: hook.name,
              done,
              step,
              steps,
              ...(total === undefined ? {} : { total }),
            })
          },
        })
      } catch (error) {
        if (stopped()) break
        logger.warn(`the after-sync step "${hook.name}" failed`, { err: error })
      }
    }
    return result
  }
}

/**
 * When every collection was last brought up to date: the oldest of the cursors' times, and only
 * once the tombstones have a cursor, since the engine walks them after every collection they
 * delete from. A sync stopped half-way therefore never counts.
 */
export function lastFullSync(databases: Databases, profile: string, orgId: string): number | null {
  const cursors = databases.mirror.syncCursors.list(profile, orgId)
  if (!cursors.some((c) => c.collection === 'tombstones')) return null
  let oldest: number | null = null
  for (const { lastSyncMs } of cursors) {
    if (lastSyncMs === null) return null
    oldest = oldest === null ? lastSyncMs : Math.min(oldest, lastSyncMs)
  }
  return oldest
}

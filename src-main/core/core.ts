import type { AccountSummary } from '../../src-shared/domain/app'
import type { SearchQuery, SearchResult } from '../../src-shared/domain/search'
import type { SyncProgressStatus, SyncStatus } from '../../src-shared/domain/sync'
import type { IpcEvents } from '../../src-shared/ipc'
import { openDatabases, type Databases, type DbNotice } from '../db'
import { EventBus, type EventSink } from '../events/bus'
import { openFlowEditor, type FlowEditor } from '../flows'
import { requestLogger, type Logger } from '../log'
import { MirrorSearch } from '../search'
import { RunsList } from '../review/runs-list'
import { RunPageService } from '../review/run-page'
import { EvaluationReview } from '../review/evaluations'
import { openAssetManager, type AssetManager } from '../review/assets'
import { osKeychain } from '../secrets'
import {
  createServiceClient,
  isServiceError,
  type ServiceClient,
  type ServiceClientOptions,
} from '../service'
import { SYNC_COLLECTIONS, SyncEngine, type SyncCollection } from '../sync'
import {
  OFFLINE_BACKOFF,
  SYNC_INTERVAL_MS,
  SyncScheduler,
  type SchedulerOptions,
  type SyncJob,
} from './sync-schedule'
import type { AfterSyncHook } from './after-sync'
import type { Backend } from './backend'
import { MEDIA_CAP_BYTES, MEDIA_DIR, mediaStep, outboxStep } from './steps'
import { realTimers, type Timers } from './timers'

export interface CoreOptions {
  home: string
  backend: Backend
  logger: Logger
  /** Epoch milliseconds. */
  clock?: () => number
  /** The waits between syncs; a test moves them on by hand. */
  timers?: Timers
  intervalMs?: number
  backoff?: { initialMs: number; maxMs: number }
  /** Defaults to the outbox replay, then the media downloads (`steps.ts`). */
  afterSync?: readonly AfterSyncHook[]
  /** Passed on to the service client, e.g. fewer retries in tests. */
  client?: Pick<ServiceClientOptions, 'retry' | 'timeoutMs'>
  /** What Settings chose (`src-main/settings`); `intervalMs` above wins over its interval. */
  settings?: Partial<CoreSettings>
  /**
   * The first sync waits this long (0, the default: it starts at once). A window's first screen
   * reads the mirror in the same thread the sync and the embedded sandbox run in: started
   * together, the sync's two dozen requests delay that screen by about a second.
   */
  firstSyncAfterMs?: number
}

/** What the user sets in Settings and the core follows while it runs (`applySettings`). */
export interface CoreSettings {
  intervalMs: number
  /** The collections each sync walks; the others keep what the mirror has. */
  collections: readonly SyncCollection[]
  /** False: the after-sync step named `media` is skipped. */
  mediaDownloads: boolean
  /** The output store's cap: read at open by the editor, before each pass by the media step. */
  mediaCapBytes: number
}

export interface Core {
  readonly databases: Databases
  readonly client: ServiceClient
  readonly orgId: string
  /** What opening the databases had to do (a mirror rebuilt), for a window that opens later. */
  readonly notices: readonly IpcEvents['app.notice'][]
  syncStatus: () => SyncStatus
  /** Starts a sync or joins the running one; resolves with the status once it has ended. */
  syncNow: () => Promise<SyncStatus>
  /** Offline search of this organization's records in the mirror (`query` already checked). */
  search: (query: SearchQuery) => SearchResult
  /**
   * The profile, the organization and its balance. The balance is read from the service at most
   * every `BALANCE_TTL_MS`, and again after each sync and flow run; null when it cannot be.
   */
  accountSummary: () => Promise<AccountSummary>
  /** The flow editor's services (`src-main/flows`); their run events go out as `flowRuns.event`. */
  readonly flows: FlowEditor
  /** The Runs section's list over the mirror (`src-main/review/runs-list`). */
  readonly runs: RunsList
  /** One run's page: detail, refresh, cancel, re-run, redeliver (`src-main/review/run-page`). */
  readonly runPage: RunPageService
  /** The Evaluations section: list, page, feedback through the outbox, submit (`src-main/review/evaluations`). */
  readonly evaluations: EvaluationReview
  /** The Assets section: assets, folders, uploads and watched folders (`src-main/review/assets`). */
  readonly assets: AssetManager
  /** Followed from the next sync on; a new interval also plans the next sync anew. */
  applySettings: (settings: Partial<CoreSettings>) => void
  /** Every `sync.status` and `app.notice` from now on; returns the unsubscribe. */
  onEvent: (sink: EventSink) => () => void
  /** Cancels the flow runs, aborts the running sync, plans no more, closes the databases. Idempotent. */
  close: () => Promise<void>
}

/**
 * When every collection was last brought up to date: the oldest of the cursors' times, and only
 * once the tombstones have a cursor, since the engine walks them after every collection they
 * delete from. A sync stopped half-way therefore never counts.
 */
function lastFullSync(databases: Databases, profile: string, orgId: string): number | null {
  const cursors = databases.mirror.syncCursors.list(profile, orgId)
  if (!cursors.some((c) => c.collection === 'tombstones')) return null
  let oldest: number | null = null
  for (const { lastSyncMs } of cursors) {
    if (lastSyncMs === null) return null
    oldest = oldest === null ? lastSyncMs : Math.min(oldest, lastSyncMs)
  }
  return oldest
}

/** How long a balance read from the service is shown before it is read again. */
export const BALANCE_TTL_MS = 30_000
/** Per attempt: the sidebar waits for this, so it gives up sooner than a sync. */
const ACCOUNT_TIMEOUT_MS = 10_000

interface AccountReader {
  summary: () => Promise<AccountSummary>
  /** The next summary reads the balance again: a sync or a flow run may have changed it. */
  invalidate: () => void
  close: () => void
}

/**
 * The balance, kept briefly so that every window asking does not cost a request, and the
 * organization's name, asked once (it is not in the mirror). While the sync says offline the
 * service is not asked at all: the answer would only come after the client's retries.
 */
function accountReader(options: {
  backend: Backend
  client: ServiceClient
  clock: () => number
  logger: Logger
  offline: () => boolean
}): AccountReader {
  const { backend, client, clock, logger } = options
  const orgId = backend.organizationId
  const closing = new AbortController()
  let organizationName: string | null = null
  // Set once the service answered the account call, name or not: it is not asked again.
  let accountAsked = false
  let cached: { balanceMicro: number | null; at: number } | null = null
  /** The read under way, for callers of the same generation to join. */
  let reading: { generation: number; balance: Promise<number | null> } | null = null
  let generation = 0

  const readBalance = async (): Promise<number | null> => {
    try {
      const balance = await client.get('/v1/billing/balance', {
        signal: closing.signal,
        timeoutMs: ACCOUNT_TIMEOUT_MS,
      })
      const value = Number(balance.balance)
      return Number.isFinite(value) ? Math.round(value * 1_000_000) : null
    } catch (error) {
      logger.debug('the balance could not be read', { err: error })
      return null
    }
  }

  const readName = async (): Promise<void> => {
    if (accountAsked) return
    try {
      const account = await client.get('/v1/account', {
        signal: closing.signal,
        timeoutMs: ACCOUNT_TIMEOUT_MS,
      })
      const mine = [account.organization, ...account.organizations].find((o) => o.id === orgId)
      organizationName = mine?.name ?? null
      accountAsked = true
    } catch (error) {
      // Unreachable: ask again next time. Any answer (a service without this call): leave it.
      if (isServiceError(error) && error.status !== 0) accountAsked = true
      logger.debug('the account could not be read', { err: error })
    }
  }

  const read = (): Promise<number | null> => {
    const started = generation
    const balance = Promise.all([readBalance(), readName()]).then(([balanceMicro]) => {
      // Invalidated while reading: this answer may predate what changed, so it is not kept.
      if (started === generation) cached = { balanceMicro, at: clock() }
      if (reading?.balance === balance) reading = null
      return balanceMicro
    })
    reading = { generation: started, balance }
    return balance
  }

  const summaryOf = (balanceMicro: number | null): AccountSummary => ({
    profileName: backend.info.kind === 'sandbox' ? null : backend.profile,
    organization: { id: orgId, name: organizationName },
    balanceMicro,
    backendKind: backend.info.kind,
  })

  return {
    summary: async () => {
      if (cached !== null && clock() - cached.at < BALANCE_TTL_MS) {
        return summaryOf(cached.balanceMicro)
      }
      if (options.offline() || closing.signal.aborted) return summaryOf(null)
      const balance = reading?.generation === generation ? reading.balance : read()
      return summaryOf(await balance)
    },
    invalidate: () => {
      generation++
      cached = null
    },
    close: () => {
      closing.abort()
    },
  }
}

/** What the main process owns besides the window: the databases, the client, the background sync. */
export function openCore(options: CoreOptions): Core {
  const { backend, logger: parent } = options
  const logger = parent.child({ component: 'core' })
  logger.addSecret(backend.apiKey)
  const clock = options.clock ?? Date.now
  const events = new EventBus((event, error) => {
    logger.warn('an event listener failed', { event, err: error })
  })
  const { emit } = events

  const notices: IpcEvents['app.notice'][] = []
  const onNotice = (notice: DbNotice) => {
    logger.warn(notice.message, { code: notice.code, file: notice.file, movedTo: notice.movedTo })
    const event = { level: 'warning' as const, message: notice.message }
    notices.push(event)
    emit('app.notice', event)
  }
  const databases = openDatabases(options.home, { onNotice, clock })
  const settings: CoreSettings = {
    intervalMs: SYNC_INTERVAL_MS,
    collections: SYNC_COLLECTIONS,
    mediaDownloads: true,
    mediaCapBytes: MEDIA_CAP_BYTES,
    ...options.settings,
  }
  if (options.intervalMs !== undefined) settings.intervalMs = options.intervalMs

  const orgId = backend.organizationId
  let scheduler: SyncScheduler | null = null
  const requestLog = requestLogger(parent)
  const client = createServiceClient({
    ...options.client,
    baseUrl: backend.info.url,
    apiKey: backend.apiKey,
    organizationId: orgId,
    log: (entry) => {
      requestLog(entry)
      if (entry.status >= 200 && entry.status < 300) scheduler?.noteSuccess()
    },
  })

  const account = accountReader({
    backend,
    client,
    clock,
    logger,
    offline: () => scheduler?.status().state === 'offline',
  })

  const flows = openFlowEditor({
    databases,
    client,
    profile: backend.profile,
    orgId,
    home: options.home,
    mediaDir: MEDIA_DIR,
    mediaMaxBytes: settings.mediaCapBytes,
    emit: (message) => {
      // First: the window asks for the balance as soon as it hears the run ended.
      if (message.event.type === 'flow-finished') account.invalidate()
      emit('flowRuns.event', message)
    },
    logger: logger.child({ component: 'flows' }),
    clock,
  })

  const afterSync = options.afterSync ?? [
    outboxStep(),
    mediaStep(options.home, () => settings.mediaCapBytes),
  ]
  const steps = SYNC_COLLECTIONS.length + afterSync.length
  const job: SyncJob = async (signal, progress) => {
    // A function, not the property: the steps' awaits can change it under the compiler's eyes.
    const stopped = () => signal.aborted
    const sync = logger.child({ component: 'sync' })
    const engine = new SyncEngine({
      client,
      mirror: databases.mirror,
      profileName: backend.profile,
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
    const result = await engine.syncAll({ signal, collections: settings.collections })
    if (result.state === 'aborted') return result
    for (const [index, hook] of afterSync.entries()) {
      if (stopped()) break
      if (hook.name === 'media' && !settings.mediaDownloads) continue
      const step = SYNC_COLLECTIONS.length + index + 1
      progress({ collection: hook.name, done: 0, step, steps })
      try {
        await hook.run({
          result,
          client,
          databases,
          profile: backend.profile,
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

  const schedulerOptions: SchedulerOptions = {
    job,
    logger,
    clock,
    timers: options.timers ?? realTimers,
    intervalMs: settings.intervalMs,
    backoff: options.backoff ?? OFFLINE_BACKOFF,
    lastOkAt: lastFullSync(databases, backend.profile, orgId),
    onStatus: (status) => {
      // A sync that ended may have brought runs that spent credit; told before the window asks.
      if (status.state !== 'syncing') account.invalidate()
      emit('sync.status', status)
    },
  }
  const running = new SyncScheduler(schedulerOptions)
  scheduler = running
  // The first sync starts now (or once the first screen has had the thread, see
  // `firstSyncAfterMs`); after a rebuilt mirror it is a full one, the cursors being gone.
  const firstReason = notices.length > 0 ? 'the mirror was rebuilt' : 'start'
  if (options.firstSyncAfterMs) running.syncAfter(options.firstSyncAfterMs, firstReason)
  else void running.syncNow(firstReason)

  const assets = openAssetManager({
    client,
    databases,
    profile: backend.profile,
    orgId,
    home: options.home,
    logger: logger.child({ component: 'assets' }),
    clock,
    emit,
    syncNow: () => running.syncNow('assets uploaded'),
  })

  let searcher: MirrorSearch | null = null
  let closing: Promise<void> | null = null
  return {
    databases,
    client,
    orgId,
    notices,
    flows,
    runs: new RunsList(databases.mirror, { orgId }),
    runPage: new RunPageService({
      databases,
      client,
      profile: backend.profile,
      orgId,
      keychain: osKeychain(),
      offline: () => running.status().state === 'offline',
      onBalanceChange: () => {
        account.invalidate()
      },
      logger: logger.child({ component: 'run-page' }),
    }),
    evaluations: new EvaluationReview({
      databases,
      client,
      profile: backend.profile,
      orgId,
      isOffline: () => running.status().state === 'offline',
    }),
    assets,
    syncStatus: () => running.status(),
    syncNow: () => running.syncNow(),
    search: (query) => {
      searcher ??= new MirrorSearch(databases.mirror, { now: clock })
      return searcher.searchChecked({ orgId }, query)
    },
    accountSummary: () => account.summary(),
    applySettings: (changed) => {
      Object.assign(settings, changed)
      // The scheduler reads its options' interval each time it plans; a sync now plans afresh,
      // and brings what a collection just switched on holds.
      schedulerOptions.intervalMs = settings.intervalMs
      void running.syncNow('the settings changed')
    },
    onEvent: events.on,
    close: () => {
      closing ??= (async () => {
        // First: the runs' last events and records need the sinks and the databases.
        account.close()
        // Its held deletes need the client, its uploads the ledger.
        await assets.close().catch((error: unknown) => {
          logger.warn('the uploads did not close cleanly', { err: error })
        })
        await flows.close().catch((error: unknown) => {
          logger.warn('the flow runs did not close cleanly', { err: error })
        })
        await running.close()
        for (const hook of afterSync) {
          await hook.close?.().catch((error: unknown) => {
            logger.warn(`the after-sync step "${hook.name}" did not close cleanly`, { err: error })
          })
        }
        events.clear()
        databases.close()
        logger.info('closed')
      })()
      return closing
    },
  }
}

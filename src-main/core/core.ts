import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { AccountSummary } from '../../src-shared/domain/app'
import type { SearchQuery, SearchResult } from '../../src-shared/domain/search'
import type { SyncStatus } from '../../src-shared/domain/sync'
import type { IpcEvents } from '../../src-shared/ipc'
import { openDatabases, type Databases, type DbNotice } from '../db'
import { EventBus, type EventSink } from '../events/bus'
import { openFlowEditor, type FlowEditor } from '../flows'
import { openRemix, RemixError, type Remix } from '../flows/remix'
import { entryPath } from '../media-store/files'
import { ProvenanceError, readProvenance } from '../provenance'
import {
  provenanceOfAsset,
  provenanceOfOutput,
  provenanceOfRun,
  type RecordSources,
} from '../provenance/records'
import { openOutputExports, type OutputExports } from '../provenance/records-export'
import { MediaStore } from '../media-store'
import { ledgerPins } from '../sync'
import {
  importWorkflowFile,
  looksLikeComfyWorkflow,
  workflowImports,
  type WorkflowImports,
} from '../workflows'
import { requestLogger, type Logger } from '../log'
import { MirrorSearch } from '../search'
import { changedByReplay } from '../outbox'
import { RunsList } from '../review/runs-list'
import { RunPageService } from '../review/run-page'
import { EvaluationReview } from '../review/evaluations'
import { BatchesService, type BatchReview } from '../review/batches'
import { openAssetManager, type AssetManager } from '../review/assets'
import { osKeychain } from '../secrets'
import { createServiceClient, type ServiceClient, type ServiceClientOptions } from '../service'
import { SYNC_COLLECTIONS, type SyncCollection } from '../sync'
import { accountReader, type AccountReader } from './account'
import type { AfterSyncHook } from './after-sync'
import type { Backend } from './backend'
import { MEDIA_CAP_BYTES, MEDIA_DIR, mediaStep, outboxStep } from './steps'
import { lastFullSync, syncJob } from './sync-job'
import {
  healthProbe,
  OFFLINE_BACKOFF,
  SYNC_INTERVAL_MS,
  SyncScheduler,
  type SchedulerOptions,
} from './sync-schedule'
import { realTimers, type Timers } from './timers'
import { writeThrough, type WriteThrough } from './write-through'

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
  /** How often the service is asked whether it is back while offline; `PROBE_BACKOFF` by default. */
  probeBackoff?: { initialMs: number; maxMs: number }
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
  /** The flow that made a picture, opened as it ran (`src-main/flows/remix`). */
  readonly remix: Remix
  /** ComfyUI files imported as workflows, in the mirror at once (`src-main/workflows`). */
  readonly workflows: WorkflowImports
  /** Outputs saved from the app with their record inside (`src-main/provenance/records-export`). */
  readonly outputs: OutputExports
  /** The Runs section's list over the mirror (`src-main/review/runs-list`). */
  readonly runs: RunsList
  /** One run's page: detail, refresh, cancel, re-run, redeliver (`src-main/review/run-page`). */
  readonly runPage: RunPageService
  /** The Evaluations section: list, page, feedback through the outbox, submit (`src-main/review/evaluations`). */
  readonly evaluations: EvaluationReview
  /** The Batches section, from the mirror (`src-main/review/batches`). */
  readonly batches: BatchReview
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
 * What every step of `openCore` shares: the options, the core's own logger, clock and event
 * bus, the settings it follows, and `opened`, where each step puts what it opened. Closing goes
 * through `opened` alone, so a core that failed halfway closes exactly what had opened.
 */
interface CoreContext {
  readonly options: CoreOptions
  readonly backend: Backend
  readonly orgId: string
  /** The caller's logger: the request log writes under it, not under `component: core`. */
  readonly parent: Logger
  readonly logger: Logger
  readonly clock: () => number
  readonly events: EventBus
  readonly notices: IpcEvents['app.notice'][]
  /** Changed in place by `applySettings`: the sync job and the media step read it each time. */
  readonly settings: CoreSettings
  readonly opened: Opened
}

/** What must be closed, filled in as it opens; the scheduler is also read by the client and the account. */
interface Opened {
  databases?: Databases
  account?: AccountReader
  writeThrough?: WriteThrough
  flows?: FlowEditor
  afterSync?: readonly AfterSyncHook[]
  scheduler?: SyncScheduler
  assets?: AssetManager
}

interface Storage {
  databases: Databases
  client: ServiceClient
}

interface Sync {
  scheduler: SyncScheduler
  /** Kept: the scheduler reads its interval from here each time it plans (`applySettings`). */
  schedulerOptions: SchedulerOptions
}

interface Review {
  runs: RunsList
  runPage: RunPageService
  evaluations: EvaluationReview
  batches: BatchReview
}

/** What the main process owns besides the window: the databases, the client, the background sync. */
export function openCore(options: CoreOptions): Core {
  const context = beginCore(options)
  try {
    const storage = openStorage(context)
    const account = openAccount(context, storage)
    const written = openWriteThrough(context, storage, account)
    const flows = openFlows(context, storage, written)
    const afterSync = afterSyncSteps(context)
    const sync = startSync(context, storage, account, afterSync)
    const assets = openAssets(context, storage, sync)
    const review = openReview(context, storage, written, sync)
    return coreOf(context, { storage, account, flows, sync, assets, review })
  } catch (error) {
    // No core is returned to close: what opened closes here, in the order `close` uses.
    closeOpened(context).catch((closeError: unknown) => {
      context.logger.warn('what opened did not close cleanly', { err: closeError })
    })
    throw error
  }
}

/**
 * Establishes the core's logger, with the key among its secrets before any line is written,
 * its clock, its event bus and the settings it starts from. Nothing is opened yet.
 */
function beginCore(options: CoreOptions): CoreContext {
  const { backend, logger: parent } = options
  const logger = parent.child({ component: 'core' })
  logger.addSecret(backend.apiKey)
  const events = new EventBus((event, error) => {
    logger.warn('an event listener failed', { event, err: error })
  })
  const settings: CoreSettings = {
    intervalMs: SYNC_INTERVAL_MS,
    collections: SYNC_COLLECTIONS,
    mediaDownloads: true,
    mediaCapBytes: MEDIA_CAP_BYTES,
    ...options.settings,
  }
  if (options.intervalMs !== undefined) settings.intervalMs = options.intervalMs
  return {
    options,
    backend,
    orgId: backend.organizationId,
    parent,
    logger,
    clock: options.clock ?? Date.now,
    events,
    notices: [],
    settings,
    opened: {},
  }
}

/**
 * Opens the databases, whose notices (a damaged mirror rebuilt) are logged, kept for a window
 * that opens later and pushed, and makes the app's one service client, whose every success
 * tells the scheduler the service answers again.
 */
function openStorage(context: CoreContext): Storage {
  const { options, backend, orgId, logger, clock, events, notices, opened } = context
  const onNotice = (notice: DbNotice) => {
    logger.warn(notice.message, { code: notice.code, file: notice.file, movedTo: notice.movedTo })
    const event = { level: 'warning' as const, message: notice.message }
    notices.push(event)
    events.emit('app.notice', event)
  }
  const databases = openDatabases(options.home, { onNotice, clock })
  opened.databases = databases
  const requestLog = requestLogger(context.parent)
  const client = createServiceClient({
    ...options.client,
    baseUrl: backend.info.url,
    apiKey: backend.apiKey,
    organizationId: orgId,
    log: (entry) => {
      requestLog(entry)
      if (entry.status >= 200 && entry.status < 300) opened.scheduler?.noteSuccess()
    },
  })
  return { databases, client }
}

/** The account summary's reader, which asks nothing of the service while the sync says offline. */
function openAccount(context: CoreContext, { client }: Storage): AccountReader {
  const { backend, clock, logger, opened } = context
  const account = accountReader({
    backend,
    client,
    clock,
    logger,
    offline: () => opened.scheduler?.status().state === 'offline',
  })
  opened.account = account
  return account
}

/**
 * What the app does itself goes into the mirror as the service answers, and is told to the
 * window (`mirror.changed`, `account.changed`): no view waits for a sync to show it.
 */
function openWriteThrough(
  context: CoreContext,
  { databases, client }: Storage,
  account: AccountReader,
): WriteThrough {
  const { logger, events, opened } = context
  const written = writeThrough({
    client,
    mirror: databases.mirror,
    account,
    emit: events.emit,
    logger: logger.child({ component: 'write-through' }),
  })
  opened.writeThrough = written
  return written
}

/**
 * The flow editor's services; the remote runs of a flow run go into the mirror as they are made
 * and end, and the write-through reads the balance once after its end.
 */
function openFlows(context: CoreContext, storage: Storage, written: WriteThrough): FlowEditor {
  const { options, backend, orgId, logger, clock, events, settings, opened } = context
  const flows = openFlowEditor({
    ...storage,
    profile: backend.profile,
    orgId,
    home: options.home,
    mediaDir: MEDIA_DIR,
    mediaMaxBytes: settings.mediaCapBytes,
    emit: (message) => {
      // The balance after a flow run is read once, by the write-through (`account.changed`).
      events.emit('flowRuns.event', message)
      written.flowRunEvent(message)
    },
    logger: logger.child({ component: 'flows' }),
    clock,
    // Read at each call: the scheduler opens after the editor.
    isOffline: () => opened.scheduler?.status().state === 'offline',
  })
  opened.flows = flows
  return flows
}

/** The steps run after each sync: the caller's, or the outbox replay then the media downloads. */
function afterSyncSteps(context: CoreContext): readonly AfterSyncHook[] {
  const { options, settings, opened, events } = context
  const afterSync = options.afterSync ?? [
    // A rating sent from the outbox must leave the page's "pending" at once, not at a reopen.
    outboxStep((report) => {
      const collections = changedByReplay(report)
      if (collections.length > 0) events.emit('mirror.changed', { collections })
    }),
    mediaStep(options.home, () => settings.mediaCapBytes),
  ]
  opened.afterSync = afterSync
  return afterSync
}

/**
 * The background sync and its schedule, its last success read from the mirror's cursors, and
 * the first sync started (or planned, see `firstSyncAfterMs`). A sync that ended may have
 * brought runs that spent credit, so the balance is read again.
 */
function startSync(
  context: CoreContext,
  { databases, client }: Storage,
  account: AccountReader,
  afterSync: readonly AfterSyncHook[],
): Sync {
  const { options, backend, orgId, logger, clock, events, notices, settings, opened } = context
  const job = syncJob({
    client,
    databases,
    profile: backend.profile,
    orgId,
    clock,
    logger,
    afterSync,
    collections: () => settings.collections,
    mediaDownloads: () => settings.mediaDownloads,
  })
  const schedulerOptions: SchedulerOptions = {
    job,
    logger,
    clock,
    timers: options.timers ?? realTimers,
    intervalMs: settings.intervalMs,
    backoff: options.backoff ?? OFFLINE_BACKOFF,
    lastOkAt: lastFullSync(databases, backend.profile, orgId),
    probe: healthProbe(client),
    ...(options.probeBackoff ? { probeBackoff: options.probeBackoff } : {}),
    onStatus: (status) => {
      // Told before the window asks for the balance.
      if (status.state !== 'syncing') account.invalidate()
      events.emit('sync.status', status)
    },
  }
  const scheduler = new SyncScheduler(schedulerOptions)
  opened.scheduler = scheduler
  // After a rebuilt mirror the first sync is a full one, the cursors being gone.
  const firstReason = notices.length > 0 ? 'the mirror was rebuilt' : 'start'
  if (options.firstSyncAfterMs) scheduler.syncAfter(options.firstSyncAfterMs, firstReason)
  else void scheduler.syncNow(firstReason)
  return { scheduler, schedulerOptions }
}

/** The Assets section; uploads that finished ask for a sync, which brings the new assets. */
function openAssets(context: CoreContext, storage: Storage, { scheduler }: Sync): AssetManager {
  const { options, backend, orgId, logger, clock, events, opened } = context
  const assets = openAssetManager({
    ...storage,
    profile: backend.profile,
    orgId,
    home: options.home,
    logger: logger.child({ component: 'assets' }),
    clock,
    emit: events.emit,
    syncNow: () => scheduler.syncNow('assets uploaded'),
    offline: () => scheduler.status().state === 'offline',
  })
  opened.assets = assets
  return assets
}

/**
 * The review features over the mirror: the Runs list, one run's page, the Evaluations section;
 * what the run page and a submitted evaluation write or charge is told through `written`.
 */
function openReview(
  context: CoreContext,
  { databases, client }: Storage,
  written: WriteThrough,
  { scheduler }: Sync,
): Review {
  const { backend, orgId, logger } = context
  const offline = () => scheduler.status().state === 'offline'
  return {
    runs: new RunsList(databases.mirror, { orgId }),
    runPage: new RunPageService({
      databases,
      client,
      profile: backend.profile,
      orgId,
      keychain: osKeychain(),
      offline,
      onBalanceChange: written.balanceChanged,
      onRunWritten: written.runWritten,
      logger: logger.child({ component: 'run-page' }),
    }),
    evaluations: new EvaluationReview({
      databases,
      client,
      profile: backend.profile,
      orgId,
      isOffline: offline,
      onWritten: written.changed,
      onBalanceChange: written.balanceChanged,
    }),
    batches: new BatchesService(databases.mirror, { orgId }),
  }
}

/** The core as its callers see it, over the parts the steps opened. */
function coreOf(
  context: CoreContext,
  parts: {
    storage: Storage
    account: AccountReader
    flows: FlowEditor
    sync: Sync
    assets: AssetManager
    review: Review
  },
): Core {
  const { orgId, clock, events, notices, settings } = context
  const { storage, account, sync } = parts
  const { scheduler } = sync
  let searcher: MirrorSearch | null = null
  let closing: Promise<void> | null = null
  return {
    ...storage,
    orgId,
    notices,
    flows: parts.flows,
    remix: openRemixOf(context, storage, parts.flows),
    outputs: openOutputExports({
      sources: storage.databases,
      openMedia: () =>
        new MediaStore({
          dir: join(context.options.home, MEDIA_DIR),
          maxBytes: settings.mediaCapBytes,
          isPinned: ledgerPins(storage.databases.ledger),
        }),
    }),
    workflows: workflowImports({
      client: storage.client,
      mirror: storage.databases.mirror,
      orgId,
      changed: (collections) => {
        events.emit('mirror.changed', { collections })
      },
    }),
    ...parts.review,
    assets: parts.assets,
    syncStatus: () => scheduler.status(),
    syncNow: () => scheduler.syncNow(),
    search: (query) => {
      searcher ??= new MirrorSearch(storage.databases.mirror, { now: clock })
      return searcher.searchChecked({ orgId }, query)
    },
    accountSummary: () => account.summary(),
    applySettings: (changed) => {
      Object.assign(settings, changed)
      // The scheduler reads its options' interval each time it plans; a sync now plans afresh,
      // and brings what a collection just switched on holds.
      sync.schedulerOptions.intervalMs = settings.intervalMs
      void scheduler.syncNow('the settings changed')
    },
    onEvent: events.on,
    close: () => {
      closing ??= closeOpened(context)
      return closing
    },
  }
}

/**
 * Remix: the records from the ledger and the mirror, files read as they are dropped, pictures
 * found in the media store by content, and ComfyUI files imported as workflows.
 */
function openRemixOf(context: CoreContext, storage: Storage, flows: FlowEditor): Remix {
  const { options, backend, orgId, events } = context
  const { ledger, mirror } = storage.databases
  const mediaPath = (sha256: string) => entryPath(join(options.home, MEDIA_DIR), sha256)
  // The media store's files by content, without opening its index (the editor owns that): an
  // asset a flow saved carries its record inside its own file.
  const sources: RecordSources = {
    ledger,
    mirror,
    media: { owners: () => [], has: (sha256) => existsSync(mediaPath(sha256)), path: mediaPath },
  }
  const scope = { profile: backend.profile, orgId }
  return openRemix({
    flows,
    localFlow: (id) => {
      const record = ledger.localFlows.get(scope, id)
      return record && record.deletedMs === null ? { id: record.id, name: record.name } : null
    },
    localMedia: (sha256) => {
      const path = mediaPath(sha256)
      return existsSync(path) ? path : null
    },
    sources: {
      ofRun: (runId, index) => provenanceOfRun(sources, runId, index),
      ofAsset: (assetId) => provenanceOfAsset(sources, assetId),
      ofOutput: (output) => provenanceOfOutput(sources, output),
      ofFile: (bytes) => {
        try {
          return readProvenance(bytes)
        } catch (error) {
          // A picture too broken to read: said as the reader says it, not as an internal error.
          if (error instanceof ProvenanceError) {
            throw new RemixError('PROVENANCE_MALFORMED_FILE', error.message)
          }
          throw error
        }
      },
    },
    workflows: {
      looksLikeWorkflow: (bytes) => looksLikeComfyWorkflow(bytes),
      importFile: async (file) => {
        const { workflow } = await importWorkflowFile(
          {
            client: storage.client,
            mirror,
            orgId,
            changed: (collections) => {
              events.emit('mirror.changed', { collections })
            },
          },
          file,
        )
        return { id: workflow.id, name: workflow.name }
      },
    },
  })
}

/**
 * Closes what opened, in this order: the account's reads; the assets (their held deletes need
 * the client, their uploads the ledger) and the flow runs, whose last events and records need
 * the sinks and the databases; the writes through to the mirror; the sync; the after-sync
 * steps; the listeners; the databases.
 */
async function closeOpened({ logger, events, opened }: CoreContext): Promise<void> {
  opened.account?.close()
  await opened.assets?.close().catch((error: unknown) => {
    logger.warn('the uploads did not close cleanly', { err: error })
  })
  await opened.flows?.close().catch((error: unknown) => {
    logger.warn('the flow runs did not close cleanly', { err: error })
  })
  // After the flow runs: their last events are written through before the databases close.
  await opened.writeThrough?.close()
  await opened.scheduler?.close()
  for (const hook of opened.afterSync ?? []) {
    await hook.close?.().catch((error: unknown) => {
      logger.warn(`the after-sync step "${hook.name}" did not close cleanly`, { err: error })
    })
  }
  events.clear()
  opened.databases?.close()
  logger.info('closed')
}

import type { ReferenceRecord, Solution } from '../../src-shared/api'
import { timeMs, type Mirror } from '../db'
import { isServiceError, type ServiceClient } from '../service'
import {
  CATALOG_PATHS,
  INCREMENTAL,
  SOLUTIONS,
  SYNC_COLLECTIONS,
  writeIncrementalPage,
  type Incremental,
  type IncrementalCollection,
  type IncrementalPage,
  type Keyed,
  type SyncCollection,
} from './collections'
import { eachBounded, fetchRunDetails, isRunGone, type RunDetailsReport } from './details'
import { listPages, prefetched, type ListPage, type Query } from './pages'
import { startPageWriter, type PageCounts, type PageWriter, type PageWrites } from './writer'

export { SYNC_COLLECTIONS, type SyncCollection } from './collections'

export const PAGE_LIMIT = 500
/** How many runs a sync fetches the details of, at most, unless told otherwise. */
export const DETAILS_LIMIT = 200
/** How many runs have their details fetched at the same time. */
export const DETAILS_CONCURRENCY = 4
/** A page this big starts the page writer's thread: smaller syncs are not worth one. */
export const WORKER_PAGE_MIN = 100

export type SyncPhase = 'start' | 'page' | 'done'

export interface SyncProgress {
  collection: SyncCollection
  phase: SyncPhase
  /**
   * Records handled so far in this collection (boundary re-reads not counted). A sync that
   * resumes a first full sync counts the records the mirror already holds as done; for
   * `run-details` it counts runs.
   */
  done: number
  /**
   * How many `done` will reach: done-before plus what the service counted from the cursor on
   * (`X-Total-Count`, asked for on the first page). Absent when the service does not count:
   * show an indeterminate bar. The `done` event settles it to `done`, since records changed
   * during the sync can make the first count a little off.
   */
  total?: number
  pages: number
}

export interface CollectionReport {
  collection: SyncCollection
  pages: number
  /** New or changed records received (re-reads of the cursor's own record are left out). */
  fetched: number
  /** Rows the mirror wrote or removed. */
  written: number
  /** Records removed by tombstones. */
  tombstones: number
}

export type SyncState = 'ok' | 'offline' | 'unauthorized' | 'aborted' | 'failed'

export interface SyncResult {
  state: SyncState
  /** Plain words for people when state is not ok. */
  message?: string
  /** The service's or client's error code when state is not ok. */
  code?: string
  collections: CollectionReport[]
  elapsedMs: number
}

export interface SyncEngineOptions {
  client: ServiceClient
  mirror: Mirror
  profileName: string
  orgId: string
  clock?: () => number
  onProgress?: (progress: SyncProgress) => void
  /** At most this many runs get their details fetched per sync (default 200). */
  detailsLimit?: number
  /** Runs whose details are fetched at the same time (default 4). */
  detailsConcurrency?: number
  /**
   * Where the collections' pages are written: `worker` (the default) starts the page writer's
   * thread (`writer/`) at the first page of WORKER_PAGE_MIN records or more, so a big sync does
   * not hold the main thread; `main-thread` writes them here.
   */
  pageWrites?: PageWrites
  /** Told where the pages went once the writer is started (a fallback says why). */
  onPageWriter?: (writer: Pick<PageWriter, 'where' | 'fallback'>) => void
  /**
   * The catalogs (the service's lists of codes: statuses, units, model types…) are read again
   * only when the mirror's copy is older than this (default CATALOGS_MAX_AGE_MS; 0: always).
   */
  catalogsMaxAgeMs?: number
}

/**
 * The catalogs change with the service's releases, not with anyone's work: reading their 13
 * lists at every sync made them most of an idle sync's requests.
 */
export const CATALOGS_MAX_AGE_MS = 60 * 60 * 1000

class Stop extends Error {
  constructor(
    readonly state: Exclude<SyncState, 'ok'>,
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

/** A collection being synced: its report and what its progress events say. */
interface Running {
  report: CollectionReport
  /** Counted as done before this sync started (a resumed first sync). */
  before: number
  done: number
  total: number | undefined
}

/**
 * Pulls the service into the mirror, one collection after another. Every page is written with
 * its cursor in one transaction, so whatever stops a sync (a kill, an abort, the network), the
 * next one starts after the last page that committed: nothing is skipped, and the records
 * re-read at the boundary are filtered out or rewritten unchanged.
 */
export class SyncEngine {
  private readonly client: ServiceClient
  private readonly mirror: Mirror
  private readonly profileName: string
  private readonly orgId: string
  private readonly clock: () => number
  private readonly onProgress: ((progress: SyncProgress) => void) | undefined
  private readonly detailsLimit: number
  private readonly detailsConcurrency: number
  /** The newest runs written by this engine's runs pass, oldest first, at most detailsLimit. */
  private changedRuns: string[] = []
  private readonly counts = new Map<string, () => number>()
  private readonly pageWrites: PageWrites
  private readonly onPageWriter: SyncEngineOptions['onPageWriter']
  private readonly catalogsMaxAgeMs: number
  /** The sync's page writer, once a page called for it; closed when the sync ends. */
  private writer: Promise<PageWriter> | null = null

  constructor(options: SyncEngineOptions) {
    this.client = options.client
    this.mirror = options.mirror
    this.profileName = options.profileName
    this.orgId = options.orgId
    this.clock = options.clock ?? Date.now
    this.onProgress = options.onProgress
    this.detailsLimit = Math.max(0, Math.floor(options.detailsLimit ?? DETAILS_LIMIT))
    this.detailsConcurrency = Math.max(
      1,
      Math.floor(options.detailsConcurrency ?? DETAILS_CONCURRENCY),
    )
    this.pageWrites = options.pageWrites ?? 'worker'
    this.onPageWriter = options.onPageWriter
    this.catalogsMaxAgeMs = options.catalogsMaxAgeMs ?? CATALOGS_MAX_AGE_MS
  }

  /** Every collection (or the ones named), in dependency order; stops at the first failure. */
  async syncAll(
    options: { signal?: AbortSignal; collections?: readonly SyncCollection[] } = {},
  ): Promise<SyncResult> {
    const started = this.clock()
    const wanted = new Set(options.collections ?? SYNC_COLLECTIONS)
    const reports: CollectionReport[] = []
    this.changedRuns = []
    try {
      for (const name of SYNC_COLLECTIONS) {
        if (!wanted.has(name)) continue
        const report = emptyReport(name)
        reports.push(report)
        try {
          await this.run(name, report, options.signal)
        } catch (error) {
          const stop = toStop(error, options.signal)
          return {
            state: stop.state,
            message: stop.message,
            ...(stop.code === undefined ? {} : { code: stop.code }),
            collections: reports,
            elapsedMs: this.clock() - started,
          }
        }
      }
    } finally {
      await this.closeWriter()
    }
    return { state: 'ok', collections: reports, elapsedMs: this.clock() - started }
  }

  /** One collection; throws a ServiceError (or an abort) as it comes. */
  async syncCollection(name: SyncCollection, signal?: AbortSignal): Promise<CollectionReport> {
    const report = emptyReport(name)
    try {
      await this.run(name, report, signal)
    } finally {
      await this.closeWriter()
    }
    return report
  }

  /**
   * The node runs, logs and callback deliveries of one run, every page, for when a run is
   * opened: whether or not a sync fetched them before. Throws a ServiceError as it comes (404
   * when the run is gone).
   */
  async syncRunDetails(
    runId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<RunDetailsReport> {
    return fetchRunDetails(
      { client: this.client, mirror: this.mirror, signal: options.signal },
      runId,
    )
  }

  private async run(
    name: SyncCollection,
    report: CollectionReport,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const running: Running = { report, before: 0, done: 0, total: undefined }
    if (name in INCREMENTAL) {
      running.before = this.doneBefore(name as IncrementalCollection)
      running.done = running.before
    }
    this.emit(running, 'start')
    if (name === 'catalogs') await this.syncCatalogs(running, signal)
    else if (name === 'solutions') await this.syncSolutions(running, signal)
    else if (name === 'run-details') await this.syncDetails(running, signal)
    else await this.syncIncremental(name, INCREMENTAL[name], running, signal)
    running.total = running.done
    this.emit(running, 'done')
  }

  private async syncIncremental(
    name: IncrementalCollection,
    spec: Incremental<never>,
    running: Running,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { report } = running
    const key = { profile: this.profileName, orgId: this.orgId, collection: name }
    const stored = this.mirror.syncCursors.get(key)
    let cursor: Keyed | null =
      stored?.updatedAt != null && stored.id != null
        ? { at: stored.updatedAt, id: stored.id }
        : null
    const query: Query = { sort_by: `${spec.field}:asc`, limit: spec.pageLimit ?? PAGE_LIMIT }
    // `>=`, not `>`: records sharing the cursor's time but not yet seen must come back.
    if (cursor) query.q = `${spec.field}>=${cursor.at}`
    const pages = listPages(this.client, spec.path, query, {
      signal,
      onTotal: (remaining) => {
        running.total = running.before + remaining
      },
    })
    for await (const page of prefetched(pages, isLastPage)) {
      if (signal?.aborted) throw signal.reason
      // The service sorts by (time, id), so only the first items can be at or before the cursor.
      const after = cursor
      let start = 0
      if (after !== null) {
        while (start < page.items.length) {
          const k = spec.key(page.items[start] as never)
          if (k === null || compareKeys(k, after) > 0) break
          start++
        }
      }
      const fresh = start === 0 ? page.items : page.items.slice(start)
      const lastKey = newestKey(spec, page.items)
      const last =
        lastKey !== null && (cursor === null || compareKeys(lastKey, cursor) > 0) ? lastKey : cursor
      const finished = page.next === null
      const { written, removed } = await this.writePage({
        collection: name,
        items: fresh,
        orgId: this.orgId,
        cursor: {
          ...key,
          updatedAt: last?.at ?? null,
          id: last?.id ?? null,
          fullSync: finished && stored?.lastFullSyncMs == null,
        },
      })
      cursor = last
      if (name === 'runs') this.noteChangedRuns(fresh)
      report.pages++
      report.fetched += fresh.length
      report.written += written
      report.tombstones += removed
      running.done = running.before + report.fetched
      this.emit(running, 'page')
    }
  }

  /**
   * A page and its cursor, by the page writer once one is running or a page is big enough to
   * start it, else here; either way in one transaction, before the next page is asked for.
   */
  private async writePage(page: IncrementalPage): Promise<PageCounts> {
    if (this.writer === null) {
      if (this.pageWrites === 'main-thread' || page.items.length < WORKER_PAGE_MIN) {
        return writeIncrementalPage(this.mirror, page)
      }
      this.writer = startPageWriter(this.mirror).then((writer) => {
        this.onPageWriter?.({
          where: writer.where,
          ...(writer.fallback === undefined ? {} : { fallback: writer.fallback }),
        })
        return writer
      })
    }
    const writer = await this.writer
    return writer.write(page, this.clock())
  }

  private async closeWriter(): Promise<void> {
    const writer = this.writer
    this.writer = null
    if (writer !== null) await (await writer).close()
  }

  /** Whole-replace collections are fetched whole first: replacing half would drop live records. */
  private async fetchWhole(
    path: string,
    query: Query,
    running: Running,
    signal: AbortSignal | undefined,
    onTotal?: (total: number) => void,
  ): Promise<unknown[]> {
    const records: unknown[] = []
    const pages = listPages(this.client, path, query, { signal, ...(onTotal ? { onTotal } : {}) })
    for await (const page of prefetched(pages, isLastPage)) {
      running.report.pages++
      for (const item of page.items) records.push(item)
    }
    return records
  }

  private async syncSolutions(running: Running, signal: AbortSignal | undefined): Promise<void> {
    const solutions = (await this.fetchWhole(
      SOLUTIONS.path,
      { sort_by: 'updated_at:asc', limit: PAGE_LIMIT },
      running,
      signal,
      (total) => {
        running.total = total
      },
    )) as Solution[]
    if (signal?.aborted) throw signal.reason
    running.report.written += this.mirror.transaction(() =>
      SOLUTIONS.write(this.mirror, solutions, this.orgId),
    )
    running.report.fetched = solutions.length
    running.done = solutions.length
    this.emit(running, 'page')
  }

  private async syncCatalogs(running: Running, signal: AbortSignal | undefined): Promise<void> {
    const key = { profile: this.profileName, orgId: this.orgId, collection: 'catalogs' }
    // When they were read, by this engine's clock (the cursor's own times are the mirror's).
    const readAt = Date.parse(this.mirror.syncCursors.get(key)?.updatedAt ?? '')
    const age = this.clock() - readAt
    if (age >= 0 && age < this.catalogsMaxAgeMs) return
    const fetched = await Promise.all(
      CATALOG_PATHS.map(async (path) => {
        const records = (await this.fetchWhole(
          `/v1/${path}`,
          { limit: PAGE_LIMIT },
          running,
          signal,
        )) as ReferenceRecord[]
        return [path.replace(/^catalogs\//, ''), records] as const
      }),
    )
    if (signal?.aborted) throw signal.reason
    running.report.written += this.mirror.transaction(() => {
      const readNow = new Date(this.clock()).toISOString()
      this.mirror.syncCursors.set({ ...key, updatedAt: readNow, id: null, fullSync: true })
      return fetched.reduce(
        (sum, [catalog, records]) =>
          sum + this.mirror.catalogs.replace({ orgId: this.orgId }, catalog, records),
        0,
      )
    })
    running.report.fetched = fetched.reduce((sum, [, records]) => sum + records.length, 0)
    running.done = running.report.fetched
    running.total = running.done
    this.emit(running, 'page')
  }

  /**
   * The details of the runs this sync changed (newest first) and of every unfinished run, at
   * most detailsLimit, skipping those fetched at the run's current updated_at. A run deleted on
   * the service meanwhile is skipped: its tombstone comes with the next sync.
   */
  private async syncDetails(running: Running, signal: AbortSignal | undefined): Promise<void> {
    const { report } = running
    const due =
      this.detailsLimit === 0
        ? []
        : this.mirror.runDetailsFetched.due(this.orgId, this.changedRuns, this.detailsLimit)
    running.total = due.length
    await eachBounded(due, this.detailsConcurrency, async (runId) => {
      if (signal?.aborted) throw signal.reason
      try {
        const details = await fetchRunDetails(
          { client: this.client, mirror: this.mirror, signal },
          runId,
        )
        report.pages += details.requests
        report.fetched += details.nodeRuns + details.logs + details.callbackDeliveries
        report.written += details.written
      } catch (error) {
        if (!isRunGone(error)) throw error
      }
      // For run-details, `done` counts runs, not records.
      running.done++
      this.emit(running, 'page')
    })
  }

  /** Keeps the ids of the newest runs written, for the details pass; bounded by its limit. */
  private noteChangedRuns(fresh: readonly unknown[]): void {
    if (this.detailsLimit === 0) return
    for (const run of fresh) {
      const id = (run as { id?: unknown }).id
      if (typeof id === 'string') this.changedRuns.push(id)
    }
    const over = this.changedRuns.length - this.detailsLimit
    if (over > 0) this.changedRuns.splice(0, over)
  }

  /** A first full sync that was stopped: what it wrote counts as done. */
  private doneBefore(name: IncrementalCollection): number {
    const { table, stored: storedOf } = INCREMENTAL[name]
    const count = storedOf
      ? () => storedOf(this.mirror, this.orgId)
      : table === null
        ? null
        : () => this.storedCount(table)
    if (count === null) return 0
    const key = { profile: this.profileName, orgId: this.orgId, collection: name }
    const stored = this.mirror.syncCursors.get(key)
    const resuming = stored !== null && stored.id !== null && stored.lastFullSyncMs === null
    return resuming ? count() : 0
  }

  /** The organization's rows of a mirror table. */
  private storedCount(table: string): number {
    let count = this.counts.get(table)
    if (!count) {
      const statement = this.mirror.db
        .prepare(`SELECT count(*) FROM ${table} WHERE org_id = ?`)
        .pluck()
      count = () => statement.get(this.orgId) as number
      this.counts.set(table, count)
    }
    return count()
  }

  private emit(running: Running, phase: SyncPhase): void {
    if (!this.onProgress) return
    const { report, done, total } = running
    this.onProgress({
      collection: report.collection,
      phase,
      done,
      ...(total === undefined ? {} : { total }),
      pages: report.pages,
    })
  }
}

const isLastPage = (page: ListPage) => page.next === null

/**
 * The key of the page's last record that has one. Records without the cursor's field (every
 * field of an evaluation is nullable, updated_at included) come after the others, as nulls
 * sort last: taking only the last record's key left the cursor where it was, so every sync
 * read the whole collection again (found against a service generated from the contract, seed 2).
 */
function newestKey(spec: Incremental<never>, items: readonly unknown[]): Keyed | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const key = spec.key(items[i] as never)
    if (key !== null) return key
  }
  return null
}

function emptyReport(collection: SyncCollection): CollectionReport {
  return { collection, pages: 0, fetched: 0, written: 0, tombstones: 0 }
}

/** The service's order: by time as an instant, then by id. */
function compareKeys(a: Keyed, b: Keyed): number {
  if (a.at !== b.at) {
    const at = timeMs(a.at, 'cursor') - timeMs(b.at, 'cursor')
    if (at !== 0) return at
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

function toStop(error: unknown, signal: AbortSignal | undefined): Stop {
  if (signal?.aborted || (isServiceError(error) && error.code === 'ABORTED')) {
    return new Stop('aborted', 'The sync was stopped; the next one resumes where it stopped.')
  }
  if (isServiceError(error)) {
    if (error.status === 0 && (error.code === 'NETWORK_ERROR' || error.code === 'TIMEOUT')) {
      return new Stop(
        'offline',
        'The service cannot be reached, so Atelier is working offline: everything already synced is still here. Sync again when the connection is back.',
        error.code,
      )
    }
    if (error.status === 401 || error.status === 403) {
      return new Stop(
        'unauthorized',
        `The service refused the profile's key (${error.code}). Check the key or its organization with \`atelier profile\`.`,
        error.code,
      )
    }
    return new Stop('failed', error.message, error.code)
  }
  return new Stop('failed', error instanceof Error ? error.message : String(error))
}

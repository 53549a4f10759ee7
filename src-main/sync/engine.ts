import type {
  AssetFolder,
  Evaluation,
  ReferenceRecord,
  Run,
  Tombstone,
  components,
} from '../../src-shared/api'
import { timeMs, type Mirror } from '../db'
import { isServiceError, type ServiceClient } from '../service'

type Asset = components['schemas']['Asset']
type Model = components['schemas']['Model']

/** What `syncAll` walks, in this order: what a record refers to is written before it. */
export const SYNC_COLLECTIONS = [
  'catalogs',
  'models',
  'asset-folders',
  'assets',
  'runs',
  'evaluations',
  'tombstones',
] as const
export type SyncCollection = (typeof SYNC_COLLECTIONS)[number]

export const PAGE_LIMIT = 500

export type SyncPhase = 'start' | 'page' | 'done'

/** `total` is left out: the list envelope carries no count, and counting would cost a full walk. */
export interface SyncProgress {
  collection: SyncCollection
  phase: SyncPhase
  /** Records fetched so far in this collection (boundary re-reads not counted). */
  done: number
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
}

interface Keyed {
  /** The cursor's time field, as the service wrote it. */
  at: string
  id: string
}

/** How one incrementally synced collection is read and written. */
interface Incremental<T> {
  path: string
  field: 'updated_at' | 'deleted_at'
  key: (item: T) => Keyed | null
  write: (
    mirror: Mirror,
    items: readonly T[],
    orgId: string,
  ) => { written: number; removed: number }
}

const byUpdated = (item: { id?: string | null; updated_at?: string | null }): Keyed | null =>
  typeof item.id === 'string' && typeof item.updated_at === 'string'
    ? { at: item.updated_at, id: item.id }
    : null

const INCREMENTAL: Record<Exclude<SyncCollection, 'catalogs'>, Incremental<never>> = {
  models: {
    path: '/v1/models',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Model[], orgId) => ({
      written: m.models.upsertPage(items, { orgId }),
      removed: 0,
    }),
  } satisfies Incremental<Model>,
  'asset-folders': {
    path: '/v1/asset-folders',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly AssetFolder[]) => ({
      written: m.assetFolders.upsertPage(items),
      removed: 0,
    }),
  } satisfies Incremental<AssetFolder>,
  assets: {
    path: '/v1/assets',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Asset[]) => ({ written: m.assets.upsertPage(items), removed: 0 }),
  } satisfies Incremental<Asset>,
  runs: {
    path: '/v1/runs',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Run[]) => ({ written: m.runs.upsertPage(items), removed: 0 }),
  } satisfies Incremental<Run>,
  evaluations: {
    path: '/v1/evaluations',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Evaluation[], orgId) => ({
      written: m.evaluations.upsertPage(items, { orgId }),
      removed: 0,
    }),
  } satisfies Incremental<Evaluation>,
  tombstones: {
    path: '/v1/tombstones',
    field: 'deleted_at',
    key: (t: Tombstone) => ({ at: t.deleted_at, id: t.id }),
    write: (m, items: readonly Tombstone[]) => ({
      written: 0,
      removed: m.applyTombstonePage(items),
    }),
  } satisfies Incremental<Tombstone>,
}

/** Reference catalogs: small, without tombstones, so each is read whole and replaced whole. */
const CATALOG_PATHS = [
  'catalogs/pricing-dimensions',
  'catalogs/model-types',
  'catalogs/rule-effects',
  'catalogs/units',
  'catalogs/variable-behaviors',
  'catalogs/variable-types',
  'catalogs/validators',
  'runs/target-types',
  'runs/sources',
  'runs/log-levels',
  'runs/statuses',
  'evaluations/statuses',
  'webhooks/event-types',
] as const

class Stop extends Error {
  constructor(
    readonly state: Exclude<SyncState, 'ok'>,
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

type LoosePages = (
  path: string,
  init: { params: { query: Record<string, string | number> }; signal?: AbortSignal },
) => AsyncGenerator<{ items: unknown[]; next: string | null }>

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

  constructor(options: SyncEngineOptions) {
    this.client = options.client
    this.mirror = options.mirror
    this.profileName = options.profileName
    this.orgId = options.orgId
    this.clock = options.clock ?? Date.now
    this.onProgress = options.onProgress
  }

  /** Every collection (or the ones named), in dependency order; stops at the first failure. */
  async syncAll(
    options: { signal?: AbortSignal; collections?: readonly SyncCollection[] } = {},
  ): Promise<SyncResult> {
    const started = this.clock()
    const wanted = new Set(options.collections ?? SYNC_COLLECTIONS)
    const reports: CollectionReport[] = []
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
    return { state: 'ok', collections: reports, elapsedMs: this.clock() - started }
  }

  /** One collection; throws a ServiceError (or an abort) as it comes. */
  async syncCollection(name: SyncCollection, signal?: AbortSignal): Promise<CollectionReport> {
    const report = emptyReport(name)
    await this.run(name, report, signal)
    return report
  }

  private async run(
    name: SyncCollection,
    report: CollectionReport,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    this.emit(report, 'start')
    if (name === 'catalogs') await this.syncCatalogs(report, signal)
    else await this.syncIncremental(name, INCREMENTAL[name], report, signal)
    this.emit(report, 'done')
  }

  private async syncIncremental(
    name: SyncCollection,
    spec: Incremental<never>,
    report: CollectionReport,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const key = { profile: this.profileName, orgId: this.orgId, collection: name }
    const stored = this.mirror.syncCursors.get(key)
    let cursor: Keyed | null =
      stored?.updatedAt != null && stored.id != null
        ? { at: stored.updatedAt, id: stored.id }
        : null
    const query: Record<string, string | number> = {
      sort_by: `${spec.field}:asc`,
      limit: PAGE_LIMIT,
    }
    // `>=`, not `>`: records sharing the cursor's time but not yet seen must come back.
    if (cursor) query.q = `${spec.field}>=${cursor.at}`
    const pages = (this.client.pages as unknown as LoosePages)(spec.path, {
      params: { query },
      ...(signal ? { signal } : {}),
    })
    let pending = pages.next()
    for (;;) {
      const result = await pending
      if (result.done) break
      const page = result.value
      // Fetching the next page while this one is written: the write is synchronous, the fetch
      // is not, so the network is kept busy. Its failure is seen at the next await.
      pending =
        page.next === null ? Promise.resolve({ done: true, value: undefined }) : pages.next()
      pending.catch(() => undefined)
      if (signal?.aborted) {
        await pages.return(undefined).catch(() => undefined)
        throw signal.reason
      }
      const after = cursor
      const fresh = page.items.filter((item) => {
        const k = spec.key(item as never)
        return k === null || after === null || compareKeys(k, after) > 0
      })
      let last = cursor
      for (const item of page.items) {
        const k = spec.key(item as never)
        if (k !== null && (last === null || compareKeys(k, last) > 0)) last = k
      }
      const finished = page.next === null
      const { written, removed } = this.mirror.transaction(() => {
        const counts =
          fresh.length > 0
            ? spec.write(this.mirror, fresh as never[], this.orgId)
            : { written: 0, removed: 0 }
        this.mirror.syncCursors.set({
          ...key,
          updatedAt: last?.at ?? null,
          id: last?.id ?? null,
          fullSync: finished && stored === null,
        })
        return counts
      })
      cursor = last
      report.pages++
      report.fetched += fresh.length
      report.written += written
      report.tombstones += removed
      this.emit(report, 'page')
    }
  }

  private async syncCatalogs(
    report: CollectionReport,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    // All fetched first, then one transaction: a catalog half replaced would drop live codes.
    const fetched = await Promise.all(
      CATALOG_PATHS.map(async (path) => {
        const records: ReferenceRecord[] = []
        const pages = (this.client.pages as unknown as LoosePages)(`/v1/${path}`, {
          params: { query: { limit: PAGE_LIMIT } },
          ...(signal ? { signal } : {}),
        })
        for await (const page of pages) {
          report.pages++
          records.push(...(page.items as ReferenceRecord[]))
        }
        return [path.replace(/^catalogs\//, ''), records] as const
      }),
    )
    if (signal?.aborted) throw signal.reason
    report.written += this.mirror.transaction(() =>
      fetched.reduce(
        (sum, [catalog, records]) =>
          sum + this.mirror.catalogs.replace({ orgId: this.orgId }, catalog, records),
        0,
      ),
    )
    report.fetched = fetched.reduce((sum, [, records]) => sum + records.length, 0)
    this.emit(report, 'page')
  }

  private emit(report: CollectionReport, phase: SyncPhase): void {
    this.onProgress?.({
      collection: report.collection,
      phase,
      done: report.fetched,
      pages: report.pages,
    })
  }
}

function emptyReport(collection: SyncCollection): CollectionReport {
  return { collection, pages: 0, fetched: 0, written: 0, tombstones: 0 }
}

/** The service's order: by time as an instant, then by id. */
function compareKeys(a: Keyed, b: Keyed): number {
  const at = timeMs(a.at, 'cursor') - timeMs(b.at, 'cursor')
  if (at !== 0) return at
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

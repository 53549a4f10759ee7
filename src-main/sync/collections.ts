import type {
  AssetFolder,
  Evaluation,
  Flow,
  Run,
  Solution,
  Tombstone,
  Workflow,
  components,
} from '../../src-shared/api'
import type { Mirror, SyncCursorUpdate } from '../db'

type Asset = components['schemas']['Asset']
type Model = components['schemas']['Model']

/**
 * What `syncAll` walks, in this order: what a record refers to is written before it (models,
 * flows and workflows before the runs and solutions that name them), deletions after every
 * collection they delete from, and the details of runs last.
 */
export const SYNC_COLLECTIONS = [
  'catalogs',
  'models',
  'asset-folders',
  'assets',
  'flows',
  'workflows',
  'solutions',
  'runs',
  'evaluations',
  'tombstones',
  'run-details',
] as const
export type SyncCollection = (typeof SYNC_COLLECTIONS)[number]

export interface Keyed {
  /** The cursor's time field, as the service wrote it. */
  at: string
  id: string
}

/** How one incrementally synced collection is read and written. */
export interface Incremental<T> {
  path: string
  field: 'updated_at' | 'deleted_at'
  key: (item: T) => Keyed | null
  write: (
    mirror: Mirror,
    items: readonly T[],
    orgId: string,
  ) => { written: number; removed: number }
  /** The mirror table whose rows of the organization count as done when a sync resumes. */
  table: string | null
  /** Records asked for per page, when not the engine's PAGE_LIMIT. */
  pageLimit?: number
}

const byUpdated = (item: { id?: string | null; updated_at?: string | null }): Keyed | null =>
  typeof item.id === 'string' && typeof item.updated_at === 'string'
    ? { at: item.updated_at, id: item.id }
    : null

export type IncrementalCollection = Exclude<
  SyncCollection,
  'catalogs' | 'solutions' | 'run-details'
>

/**
 * Collections with tombstones (or records that come back marked deleted) are synced from a
 * cursor: their deletions are learnt without reading them whole.
 */
export const INCREMENTAL: Record<IncrementalCollection, Incremental<never>> = {
  models: {
    path: '/v1/models',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Model[], orgId) => ({
      written: m.models.upsertPage(items, { orgId }),
      removed: 0,
    }),
    table: 'models',
  } satisfies Incremental<Model>,
  'asset-folders': {
    path: '/v1/asset-folders',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly AssetFolder[]) => ({
      written: m.assetFolders.upsertPage(items),
      removed: 0,
    }),
    table: 'asset_folders',
  } satisfies Incremental<AssetFolder>,
  assets: {
    path: '/v1/assets',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Asset[]) => ({ written: m.assets.upsertPage(items), removed: 0 }),
    table: 'assets',
  } satisfies Incremental<Asset>,
  flows: {
    path: '/v1/flows',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Flow[], orgId) => ({
      written: m.flows.upsertPage(items, { orgId }),
      removed: 0,
    }),
    table: 'flows',
  } satisfies Incremental<Flow>,
  workflows: {
    path: '/v1/comfyui-workflows',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Workflow[], orgId) => ({
      written: m.workflows.upsertPage(items, { orgId }),
      removed: 0,
    }),
    table: 'workflows',
  } satisfies Incremental<Workflow>,
  runs: {
    path: '/v1/runs',
    field: 'updated_at',
    key: byUpdated,
    write: (m, items: readonly Run[]) => ({ written: m.runs.upsertPage(items), removed: 0 }),
    table: 'runs',
  } satisfies Incremental<Run>,
  evaluations: {
    path: '/v1/evaluations',
    field: 'updated_at',
    // An evaluation with its judges is ~9 KB: a page of 500 is 4.6 MB, whose decoding and parse
    // (26 ms on a quiet machine) hold the services thread, and with it every window call, in one
    // piece. 100 a page keeps each under 5 ms.
    pageLimit: 100,
    key: byUpdated,
    write: (m, items: readonly Evaluation[], orgId) => ({
      written: m.evaluations.upsertPage(items, { orgId }),
      removed: 0,
    }),
    table: 'evaluations',
  } satisfies Incremental<Evaluation>,
  tombstones: {
    path: '/v1/tombstones',
    field: 'deleted_at',
    key: (t: Tombstone) => ({ at: t.deleted_at, id: t.id }),
    write: (m, items: readonly Tombstone[]) => ({
      written: 0,
      removed: m.applyTombstonePage(items),
    }),
    table: null,
  } satisfies Incremental<Tombstone>,
}

/** One page of an incremental collection, as the engine hands it to be written. */
export interface IncrementalPage {
  collection: IncrementalCollection
  /** The records after the cursor, in the service's order. */
  items: readonly unknown[]
  orgId: string
  /** Where the cursor stands once the page is in. */
  cursor: SyncCursorUpdate
}

/**
 * Writes a page and moves its cursor, in one transaction: a stop at any point resumes after
 * the last page that committed. The same function runs on the main thread and in the page
 * writer's thread (`writer/`), over the same repositories.
 */
export function writeIncrementalPage(
  mirror: Mirror,
  page: IncrementalPage,
): { written: number; removed: number } {
  return mirror.transaction(() => {
    const counts =
      page.items.length > 0
        ? INCREMENTAL[page.collection].write(mirror, page.items as never[], page.orgId)
        : { written: 0, removed: 0 }
    mirror.syncCursors.set(page.cursor)
    return counts
  })
}

/**
 * Solutions have no tombstones, so a cursor would never learn that one went away: they are few,
 * read whole and replaced whole.
 */
export const SOLUTIONS = {
  path: '/v1/solutions',
  write: (mirror: Mirror, items: readonly Solution[], orgId: string): number => {
    const written = mirror.solutions.upsertPage(items, { orgId })
    return (
      written +
      mirror.solutions.retainOnly(
        { orgId },
        items.map((s) => s.id),
      )
    )
  },
}

/** Reference catalogs: small, without tombstones, so each is read whole and replaced whole. */
export const CATALOG_PATHS = [
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

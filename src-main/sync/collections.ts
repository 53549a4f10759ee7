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
import type { MirroredRecord } from '../db/repositories/records'

type Asset = components['schemas']['Asset']
type Model = components['schemas']['Model']

/** The collections with tables of their own, in the order `syncAll` walks them. */
const OWN_TABLES = [
  'catalogs',
  'models',
  'asset-folders',
  'assets',
  'flows',
  'workflows',
  'solutions',
  'runs',
  'evaluations',
] as const

/**
 * The collections kept whole in the mirror's one `records` table, each registered here in one
 * line: `mirrored(name, path)`, the name being also the type its tombstones carry. Its sync,
 * its place in the order, its deletions and its reads (`mirror.records`) follow from the entry.
 */
export const MIRRORED = [mirrored('batches', '/v1/batches')] as const
export type MirroredCollection = (typeof MIRRORED)[number]['name']

const LAST = ['tombstones', 'run-details'] as const

export type SyncCollection =
  (typeof OWN_TABLES)[number] | MirroredCollection | (typeof LAST)[number]

/**
 * What `syncAll` walks, in this order: what a record refers to is written before it (models,
 * flows and workflows before the runs and solutions that name them), deletions after every
 * collection they delete from, and the details of runs last.
 */
export const SYNC_COLLECTIONS: readonly SyncCollection[] = [
  ...OWN_TABLES,
  ...MIRRORED.map((entry) => entry.name),
  ...LAST,
]

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
  /** In place of `table`, for a collection that shares its table: its records of the organization. */
  stored?: (mirror: Mirror, orgId: string) => number
  /** Records asked for per page, when not the engine's PAGE_LIMIT. */
  pageLimit?: number
}

// A declaration, not a const: `MIRRORED`, above it, calls `mirrored()` as the module loads.
function byUpdated(item: { id?: string | null; updated_at?: string | null }): Keyed | null {
  return typeof item.id === 'string' && typeof item.updated_at === 'string'
    ? { at: item.updated_at, id: item.id }
    : null
}

/**
 * A collection the mirror keeps whole in its `records` table, synced from an updated_at cursor
 * like the others; its tombstones remove it (`Mirror.applyTombstones`).
 */
function mirrored<const Name extends string>(
  name: Name,
  path: string,
): Incremental<MirroredRecord> & { name: Name } {
  return {
    name,
    path,
    field: 'updated_at',
    key: byUpdated,
    write: (m, items, orgId) => ({
      written: m.records.upsertPage({ collection: name, orgId }, items),
      removed: 0,
    }),
    table: null,
    stored: (m, orgId) => m.records.count({ collection: name, orgId }),
  }
}

/** The entries keyed by their names (Object.fromEntries would forget which names they are). */
function byName<Entry extends Incremental<never> & { name: string }>(
  entries: readonly Entry[],
): Record<Entry['name'], Incremental<never>> {
  const named = {} as Record<Entry['name'], Incremental<never>>
  for (const entry of entries) named[entry.name as Entry['name']] = entry
  return named
}

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
  ...byName(MIRRORED),
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

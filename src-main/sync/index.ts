/**
 * The sync engine: pulls the service into the mirror, incrementally and resumably. One entry
 * point, `SyncEngine`; `atelier sync` and the app's background sync both drive it. After a
 * pull, `MediaFetcher` (media.ts, whose header has its own decisions) downloads finished runs'
 * outputs and assets' thumbnails into the media store, so offline review shows real pixels.
 *
 * Decisions, and why:
 *
 * - One cursor per (profile, organization, collection) in `sync_cursors`: the newest
 *   (updated_at, id) written. It is advanced in the same transaction as the page it follows, so
 *   a kill at any point resumes after the last committed page with no gap; the next sync asks
 *   for `updated_at>=` the cursor and drops what is not after it, so nothing is written twice.
 * - The main thread stays free (issue 9): a sync's pages are written in a thread of their own
 *   (`writer/`, whose header has its decisions) from its first page of 100 records or more; a
 *   page of 500 runs held the main thread 70 to 600 ms. Writing them on the main thread in
 *   short slices instead was tried and measured: the commits' own work (FTS5 segment flushes,
 *   checkpoints) halved the sync's throughput and still left slices over 8 ms.
 * - Pages of 500 (the contract's most), the next one requested while the current one is
 *   written (pages.ts `prefetched`). better-sqlite3 writes synchronously, and `fetch` only puts
 *   a request on the wire a few microtask turns after it is made, so the prefetch yields one
 *   macrotask turn before the write: without that the request waited for the write, and the
 *   "pipelining" overlapped nothing.
 * - Collections, in dependency order: catalogs, models, asset folders, assets, flows,
 *   workflows, solutions, runs, evaluations, tombstones, run details. Flows and workflows are
 *   incremental (sort_by updated_at, with tombstones `flows` and `wfengine_workflows`).
 *   Solutions and the reference catalogs have no tombstones, so a cursor could never learn that
 *   one went away: they are small, read whole and replaced whole in one transaction.
 * - Tombstones come after every collection they delete from, with their own cursor on
 *   (deleted_at, id): a record deleted while it was being synced is still removed.
 * - Progress totals: the list envelope has no count, so the engine sends `Prefer: count=exact`
 *   (an assumed extension, see the contract) on the first page of each collection and reads
 *   `X-Total-Count`. `total` is done-before (the mirror's rows when a stopped first sync
 *   resumes, else 0) plus that count; a service that does not count gives no total and the bar
 *   is indeterminate. The `done` event settles total to done.
 * - Run details (node runs, logs, callback deliveries) are listed per run, one request each.
 *   `syncRunDetails(runId)` fetches them all when a run is opened. `syncAll` ends with a bounded
 *   pass: the runs this sync changed, newest first, plus every unfinished run, at most
 *   `detailsLimit` (200), a few at a time (`detailsConcurrency`, 4), skipping runs whose details
 *   were fetched at their current updated_at (marker table `run_details_fetched`). Older runs'
 *   details are not back-filled in the background: they come when the run is opened.
 * - Memory stays flat: pages are written as they come and let go; only the whole-replace
 *   collections (a few hundred records) and the ids of the last `detailsLimit` runs are held.
 * - A failed page touches nothing. Network failures (after the client's retries) end the sync
 *   as `offline`, 401/403 as `unauthorized`; the mirror stays as it was and fully readable.
 */
export {
  SyncEngine,
  SYNC_COLLECTIONS,
  CATALOGS_MAX_AGE_MS,
  PAGE_LIMIT,
  DETAILS_LIMIT,
  DETAILS_CONCURRENCY,
  WORKER_PAGE_MIN,
  type CollectionReport,
  type SyncCollection,
  type SyncEngineOptions,
  type SyncPhase,
  type SyncProgress,
  type SyncResult,
  type SyncState,
} from './engine'
export { type RunDetailsReport } from './details'
export { type PageWriter, type PageWrites } from './writer'
export {
  MediaFetcher,
  ledgerPins,
  outputMedia,
  assetMedia,
  type MediaFetcherOptions,
  type MediaPassOptions,
  type MediaPassReport,
  type MediaProgress,
} from './media'

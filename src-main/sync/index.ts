/**
 * The sync engine: pulls the service into the mirror, incrementally and resumably. One entry
 * point, `SyncEngine`; `atelier sync` and the app's background sync both drive it.
 *
 * Decisions, and why:
 *
 * - One cursor per (profile, organization, collection) in `sync_cursors`: the newest
 *   (updated_at, id) written. It is advanced in the same transaction as the page it follows, so
 *   a kill at any point resumes after the last committed page with no gap; the next sync asks
 *   for `updated_at>=` the cursor and drops what is not after it, so nothing is written twice.
 * - Pages of 500 (the contract's most), the next one fetched while the current one is written:
 *   better-sqlite3 writes synchronously, so the request must be in flight before the write.
 * - Tombstones come last, with their own cursor on (deleted_at, id): a record deleted while it
 *   was being synced is still removed.
 * - Reference catalogs are small and have no tombstones: read whole and replaced whole.
 * - Node runs, logs and callback deliveries are not synced here: they are listed per run, one
 *   request each, which for a history of thousands of runs belongs to a lazy fetch when a run is
 *   opened rather than to every sync.
 * - Progress has no total: the list envelope carries no count.
 * - A failed page touches nothing. Network failures (after the client's retries) end the sync
 *   as `offline`, 401/403 as `unauthorized`; the mirror stays as it was and fully readable.
 */
export {
  SyncEngine,
  SYNC_COLLECTIONS,
  PAGE_LIMIT,
  type CollectionReport,
  type SyncCollection,
  type SyncEngineOptions,
  type SyncPhase,
  type SyncProgress,
  type SyncResult,
  type SyncState,
} from './engine'

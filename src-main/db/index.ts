/**
 * The local databases: the mirror (a cache of the service) and the ledger (what only this
 * machine knows). One entry point, `openDatabases(home)`; everything else is reached through
 * the `Mirror` and `Ledger` it returns.
 *
 * Decisions, and why:
 *
 * - Two files under `<home>/`: `mirror.sqlite` with synchronous=NORMAL and `ledger.sqlite` with
 *   synchronous=FULL. synchronous is a per-connection setting, so one file could not give the
 *   ledger FULL without slowing every cache write down too. Both use WAL, foreign_keys=ON and a
 *   busy_timeout (the app and the `atelier` command may open them at the same time). Nothing
 *   needs a transaction across the two: an intent is committed to the ledger before its request
 *   leaves, and the run it produces reaches the mirror later, by sync.
 * - Start-up runs `PRAGMA quick_check` on both. A damaged or unreadable mirror is renamed
 *   `mirror.sqlite.damaged-<UTC stamp>` (its -wal and -shm with it, so the copy still opens with
 *   its last writes), a new empty one is created, and a MIRROR_REBUILT notice says so in plain
 *   words; the sync engine then refills it. A damaged ledger is never moved or changed on our
 *   own: the start fails with LEDGER_DAMAGED naming the file and what to do, and only when the
 *   user asks (`setLedgerAside`) is it renamed `ledger.sqlite.set-aside-<stamp>` — kept, never
 *   deleted — with a LEDGER_SET_ASIDE notice. Locks and other errors that are not damage are
 *   thrown as they are (DATABASE_OPEN_FAILED): moving a healthy file aside would lose data.
 * - Migrations (`migrations/<database>/`): one file per step, listed in order by the folder's
 *   index and numbered by `user_version`, each step in its own IMMEDIATE transaction that also
 *   sets `user_version` and records the step's sha256 in `schema_migrations`, so a crash leaves
 *   the file exactly at some step. A build that changed an applied step is refused with
 *   MIGRATION_CHANGED, the file unchanged. A file whose version is above the newest step is
 *   refused with DATABASE_FROM_NEWER_VERSION, naming the file and both versions, and left
 *   unchanged.
 * - Every table is STRICT. Cache rows keep the service's record whole in `json` (what `get`
 *   returns) plus the columns that lists, filters and sorting need, indexed. Times are epoch
 *   milliseconds (`*_ms`), so `Z`, `+00:00` and any number of fraction digits sort and compare
 *   alike; decimal money is kept as the service's text plus integer millionths (`*_micro`).
 * - Keys: records an organization owns (runs and what hangs off them, evaluations, assets,
 *   folders) are keyed by the service id, with the record's `org_id`. Records several
 *   organizations can read (models with inputs/outputs/pricing, flows, workflows, solutions,
 *   catalogs) are keyed (org_id, id) with org_id the organization synced, so switching
 *   organizations shows each its own view. Tombstones delete by id from every view.
 * - Writes: one IMMEDIATE transaction per page (nested in the caller's transaction, as a
 *   savepoint, when there is one); an incoming record older (by updated_at) than the stored one
 *   never replaces it; a record that comes back soft-deleted is removed. Child rows that arrive
 *   inside a parent (judges and issues, delivery attempts, a model's embedded lists) are
 *   replaced with the parent. Statements are prepared once per repository, every value bound;
 *   list statements, whose text depends on the filters used, are prepared the first time each
 *   combination is used and kept. Lists are keyset-paged with opaque cursors on (sort key,
 *   seq), seq being the rowid every index entry already carries. Only what a list filters or
 *   sorts on is indexed: every index is paid for on every page written.
 * - Search: an external-content FTS5 index per searchable table (`<table>_fts`, unicode61 with
 *   diacritics folded) reads its text from the table's own columns, so the text is stored once
 *   and snippet() works. The repositories index what they insert or update, in single-row
 *   statements (`repositories/rows.ts` says why not triggers: a trigger per row made FTS5 flush
 *   a segment per row, over twice as slow); an AFTER DELETE trigger per table removes entries,
 *   so tombstones and foreign-key cascades can never leave one behind. Cache tables are
 *   therefore written through the repositories only. `SearchIndex.find` is the primitive the
 *   search screen builds on.
 * - The ledger: `intents` (flow run, node, inputs hash, idempotency key, the exact request,
 *   remote run id, state), `upload_manifests`/`upload_files`/`upload_parts` (path, size, mtime,
 *   sha256, upload id, accepted parts), and `outbox` (seq AUTOINCREMENT so order and identity
 *   survive purges; kind, json payload, idempotency key, attempts, last error,
 *   state pending|rejected|sent), and `local_flows`/`local_flow_versions` (the flows made on this
 *   machine, with their trash and named versions: the service never had them).
 *
 * Left to the sync engine: fetching pages and tombstones, advancing `sync_cursors` in the same
 * transaction as each page, refilling a rebuilt mirror, and replaying the outbox.
 */
export { openDatabases, LEDGER_FILE, MIRROR_FILE, SYNCHRONOUS } from './open'
export type { Databases, DbNotice, DbNoticeCode, OpenDatabasesOptions } from './open'
export { DbError, isDbError, type DbErrorCode } from './errors'
export { Mirror, Ledger, type Clock } from './stores'
export { migrate, latestVersion, schemaVersion, checkMigrationList, migrationHash } from './migrate'
export type { Migration, MigrationReport } from './migrate'
export { MIRROR_MIGRATIONS } from './migrations/mirror'
export { LEDGER_MIGRATIONS } from './migrations/ledger'
export { openConnection, quickCheck, withoutFlush, BUSY_TIMEOUT_MS } from './connection'
export { Conditions, type Page } from './repositories/statements'
export { RunsRepository, runInputText, type RunListQuery } from './repositories/runs'
export {
  NodeRunsRepository,
  RunLogsRepository,
  CallbackDeliveriesRepository,
  type RunLogListQuery,
} from './repositories/run-details'
export {
  EvaluationsRepository,
  type EvaluationListQuery,
  type EvaluationScope,
} from './repositories/evaluations'
export {
  AssetsRepository,
  AssetFoldersRepository,
  type AssetListQuery,
  type AssetFolderListQuery,
} from './repositories/assets'
export {
  ModelsRepository,
  SharedRecordsRepository,
  CatalogRecordsRepository,
  type CatalogScope,
  type CatalogListQuery,
} from './repositories/catalog'
export {
  SyncCursorsRepository,
  type SyncCursor,
  type SyncCursorKey,
  type SyncCursorUpdate,
} from './repositories/sync-cursors'
export {
  SearchIndex,
  SEARCH_KINDS,
  SNIPPET_OPEN,
  SNIPPET_CLOSE,
  ftsQuery,
  type SearchHit,
  type SearchKind,
  type SearchQuery,
} from './repositories/search'
export {
  OutboxRepository,
  type OutboxEntry,
  type OutboxListQuery,
  type OutboxScope,
  type OutboxState,
  type OutboxWrite,
} from './repositories/outbox'
export {
  IntentsRepository,
  type FinalIntentState,
  type Intent,
  type IntentState,
  type NewIntent,
} from './repositories/intents'
export {
  UploadsRepository,
  type ListedFile,
  type UploadFile,
  type UploadFileState,
  type UploadManifest,
  type UploadManifestState,
  type UploadPart,
} from './repositories/uploads'
export {
  LocalFlowsRepository,
  type LocalFlowContent,
  type LocalFlowRecord,
  type LocalFlowScope,
  type LocalFlowSummary,
  type LocalFlowVersion,
  type LocalFlowVersionRecord,
  type LocalFlowWrite,
} from './repositories/local-flows'
export { decimalMicro, decodeCursor, encodeCursor, timeMs } from './values'

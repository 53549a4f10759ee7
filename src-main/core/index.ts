/**
 * The app's local-first core: what the main process owns besides the window, for one backend.
 * One entry point, `openCore({ home, backend, logger })`; the workspace (`src-main/workspace`)
 * opens and closes it, and the tests run it whole under Node against a real sandbox. It opens
 * the features (flows, runs, run page, evaluations, assets) over its databases and client, and
 * always has every one of them.
 *
 * Decisions, and why:
 *
 * - The core makes the one service client of the app from the backend, so the key stays in the
 *   main process and is added to the log's secrets before any line is written. The client's
 *   `log` hook writes a debug line per attempt and tells the scheduler when a request succeeded.
 * - Background sync (`SyncScheduler` in `sync-schedule.ts`): one at a time; a demand while a
 *   sync runs joins it and gets the status it ends with. One at start, then every 5 minutes
 *   counted from the end of the last one (so a slow sync never overlaps the next). When the service cannot be reached, or
 *   answers with something that stops the sync, it tries again after 30 s, doubling to 5 min;
 *   and as soon as any request succeeds again (a click in the window, a replay) it syncs at once
 *   instead of waiting. A refused key (401/403) waits the regular interval: asking again soon
 *   would not change the answer. `close` aborts the running sync; the engine's per-page
 *   transactions leave the mirror consistent and the next start resumes there.
 * - The status (`SyncStatus` in `src-shared/domain/sync.ts`) is kept whole and pushed as a
 *   `sync.status` event at every change of state; progress alone is pushed at most every 100 ms,
 *   always ending on the latest. Whoever opens a window later asks for it (`syncStatus()`).
 * - `lastOkAt` starts from the mirror (the oldest of the collections' cursor times), so the
 *   window can say "Synced 2 min ago" before the first sync of this start has ended.
 * - Database notices (a damaged mirror rebuilt) are logged, pushed as `app.notice` and kept in
 *   `notices` for a window that opens later. The first sync starts at once; after a rebuild it
 *   is a full one, since the new mirror has no cursors.
 * - After each sync, the `afterSync` steps run in order (`AfterSyncHook`), still under the
 *   `syncing` status and with their own progress: by default the outbox replay (writes made
 *   offline go as soon as a pull reached the service), then the media pass (new outputs and
 *   thumbnails into `<home>/media`, capped at 2 GiB). A step that fails is logged and never
 *   changes the sync's outcome; each gets the sync's result and decides whether to run.
 * - The flow editor's services (`flows`, `src-main/flows`) are opened with the core over its
 *   databases, client and organization; their run events go out through the same sinks as
 *   `flowRuns.event`. Closing the core cancels the flow runs under way first and waits for
 *   their records, before the databases close.
 * - `openCore` is a short driver over named steps, one context (`core.ts`): the databases and
 *   the client, the account reader, the flows, the after-sync steps, the sync and its schedule,
 *   the assets, the review features. Each step records what it opened, and one routine closes
 *   that in one order, for `close` and for an open that failed halfway alike.
 * - Waits go through injectable `timers` and times through `clock`, so a test can move the
 *   interval and the backoff on by hand while everything else (HTTP, SQLite) is real.
 */
export { openCore } from './core'
export type { Core, CoreOptions, CoreSettings } from './core'
export type { AfterSyncContext, AfterSyncHook, AfterSyncOutcome } from './after-sync'
export type { Backend } from './backend'
export type { EventSink } from '../events/bus'
export { OFFLINE_BACKOFF, PROGRESS_EVENT_MS, SYNC_INTERVAL_MS } from './sync-schedule'
export { MEDIA_CAP_BYTES, MEDIA_DIR, mediaStep, outboxStep } from './steps'
export { realTimers, type Timers } from './timers'

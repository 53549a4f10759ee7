/**
 * The sync's page writer: the pages of a big sync written in a thread of their own, so that the
 * main thread (the window's, the flow runs', the uploads') is never held by them (issue 9: one
 * page of 500 runs held it 70 to 600 ms). One entry, `startPageWriter(mirror)`.
 *
 * Decisions, and why:
 *
 * - A `worker_threads` thread with its own better-sqlite3 connection to the mirror file and the
 *   same repositories: `writeIncrementalPage` (collections.ts), the very function the main
 *   thread runs without it, writes each page with its cursor in one transaction. WAL lets the
 *   main connection read while the thread writes; the thread commits in the order pages come,
 *   and the engine awaits each page, so the order and the resume-after-a-stop rules are those
 *   of a sync without the thread.
 * - Only what cannot be shared crosses: the page, the cursor, and the engine's clock for the
 *   cursor's times. Handing a page over copies it on the main thread (a structured clone: 8 ms
 *   for 500 runs in one message, 20 to 120 ms for 100 evaluations), so it crosses in parts
 *   sized from the measured cost per record to take about 2 ms each, with a turn of the event
 *   loop between them, and is written whole when its last part is in. Errors come back with
 *   their name, message and SQLite code.
 * - Started by the engine at the first page of 100 records or more (a big sync, not the
 *   five-minute top-ups) and closed at the end of that sync, after the pages it holds.
 * - From the sources (`atelier`, the tests) the thread's entry is `thread-entry.mjs`, which has
 *   tsx compile the thread; from a bundle, `sync-page-writer.js` next to it (add
 *   `src-main/sync/writer/thread.ts` as an input named `sync-page-writer` of the main build).
 *   Without one, or when the thread cannot start, the pages are written on the main thread as
 *   before, and `fallback` says why.
 * - A write the main thread makes to the mirror while the thread holds its write lock waits
 *   for it (busy_timeout): at most one page, where before every page held the main thread.
 */
export {
  CLOSE_TIMEOUT_MS,
  FIRST_PART,
  mainThreadWriter,
  PART_TARGET_MS,
  START_TIMEOUT_MS,
  startPageWriter,
  type PageCounts,
  type PageWriter,
  type PageWrites,
} from './writer'

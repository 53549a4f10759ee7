/**
 * The app's services in a thread of their own, so the main thread never stutters (issue 9).
 * One entry point, `startServices({ home, openExternal, chooseFolder? })`, used by the Electron
 * main (`src-main/index.ts`) and the browser mode (`src-main/web`).
 *
 * Decisions, and why:
 *
 * - Everything the window calls runs in one `worker_threads` thread: the workspace
 *   (`src-main/workspace`'s `CoreHost`) with its backend and core — the sync, the flow runs,
 *   the uploads, the mirror and the ledger, the media store — and `createHandlers` behind
 *   `dispatchIpc`. A sync of 100,000 runs, a 500-node flow run and a 2,000-file upload at
 *   once kept the main thread 91 % busy, its event-loop delay p99 at 31–55 ms; the main
 *   thread now only checks the caller (Electron's sender frame, the bridge's cookie), passes
 *   the call over and the answer and events back.
 * - A thread, not a utility process: the same process, so a key read from the keychain there
 *   stays in the main process's memory as before; no second copy of Node to start; better-sqlite3,
 *   sharp and the keyring binding load in worker threads; a message costs a structured clone,
 *   which is what Electron's IPC costs the window anyway.
 * - Calls are validated in the thread, by the same `dispatchIpc`, so both shells give the same
 *   answers to the same input. The main thread keeps what the window must know at once (the
 *   notices and the latest sync status) from the thread's events, for a window that opens later.
 * - What only the main thread can do (Electron's `shell.openExternal`, the folder dialog) the
 *   thread asks of it, and the link is checked on both sides.
 * - From the sources the thread is `thread-entry.mjs` (tsx compiles it); from a bundle,
 *   `services-thread.js` beside the main bundle (an input of electron.vite.config.ts). Without
 *   one, or when the thread cannot start, the services open on the main thread as before and
 *   `fallback` says why. A failed open (a profile the keychain refuses) is thrown as the same
 *   error kind (`SecretsError`, `ServiceError`) as before, so the CLI's messages are unchanged.
 * - A thread that dies answers every call UNAVAILABLE and tells the window once, in words.
 */
export { CLOSE_TIMEOUT_MS, START_TIMEOUT_MS, startServices } from './start'
export type { AppServices, StartServicesOptions } from './start'
export type { MainThreadDeps } from './services'

/**
 * The asset manager behind the Assets section (issue 8): the mirror's assets and folders read
 * at once and offline, changes made through the service, and folder uploads with their progress
 * and watched folders, on top of `src-main/uploads`.
 *
 * Decisions, and why:
 *
 * - Reads come from the mirror only (`library.ts`): a keyset page along the assets' indexes
 *   (folder, type, date, size); words go through the offline search (`src-main/search`), whose
 *   ranking also finds assets by their folder's path. "Used as input by" reads the runs' input
 *   text index for the id's words, then keeps the runs whose input holds the id: a handful of
 *   rows, never a scan of every run. Only inputs the index holds count (top-level strings and
 *   lists of strings), which is how run inputs name assets.
 * - Changes (`changes.ts`) go to the service at once and its answer goes into the mirror; while
 *   offline they fail with the service's code. Folder renames and moves read the folders again,
 *   since every path under them changed.
 * - Deletes cannot be undone on the service (no restore in the contract), so a delete is held
 *   for a few seconds, hidden from every read, and only then sent; undo drops it. Closing
 *   Atelier sends what is held. Only empty folders can be deleted (the service refuses others).
 * - Uploads (`upload-jobs.ts`): progress is pushed at most ten times a second per upload, with the
 *   files whose state changed since the previous event; a finished upload starts a sync, which
 *   brings its assets and folders into the mirror. The engine's public entry gives a file's
 *   bytes only when its state changes, so a file's own bar moves by state, the overall bar by
 *   bytes.
 * - Files dropped on the window (the desktop one: a browser gives no path for a dropped file)
 *   are uploaded as `uploads.start` of the folder they come from with `files` naming them, one
 *   call per folder, into the top level of the assets by default; see `UploadManager`.
 * - Watched folders are kept in `<home>/watched-folders.json` and watched again at the next start.
 * - `browse.ts` lists a folder's sub-folders for the browser mode's folder dialog, which has no
 *   native paths; it refuses what is not a readable folder, with the reason.
 */
export { openAssetManager, type AssetManagerOptions } from './service'
export type { AssetManager } from './types'
export { AssetsError, isAssetsError, type AssetsErrorCode } from './errors'
export { browseFolders, readableFolder } from './browse'
export { UNDO_MS } from './changes'
export { PROGRESS_EVENT_MS, WATCHES_FILE } from './upload-jobs'

/**
 * Folder uploads: whole local folders into the organization's assets through the contract's
 * three-step presigned upload, fast, resumable and without sending bytes twice.
 *
 * - `scan/`: list the folder (hidden and system files, links and special files left out,
 *   include/exclude patterns, media by content), hash files as streams.
 * - `transfer/`: one file's upload, resumable from the ledger and the service's part list.
 * - `folder/`: the whole folder: the manifest in the ledger, sub-folders mirrored as asset
 *   folders, a few files at a time with a shared bound on parts in flight, identical files sent
 *   once, progress (files, bytes, rate, ETA, each file's state), pause, resume, cancel, and
 *   watching a folder for what appears in it.
 *
 * Decisions, and why:
 * - Uploading a folder again goes on with its latest manifest (same folder, same asset folder):
 *   files finished before are not even hashed again; new and changed ones are sent; a failed
 *   file is tried again.
 * - Files dropped on the window are an upload of their folder with `files` naming them: the
 *   scan lists those files only (the rest of the folder is not walked, so a drop from a folder
 *   of thousands costs a few stats), with the same rules (names, links, media), and they go to
 *   the top level of the assets unless a folder is named. A named list, not include patterns:
 *   a file's name is taken as it is, where a glob would read `[`, `*` or `{` in it as syntax.
 *   The manifest is the folder's own (what was sent either way is not sent again) and keeps
 *   `filesOnly`, so that a resume after a restart sends the named files, never the whole folder.
 * - Identical files in one upload: the first is sent, the others wait for it and take its
 *   asset (counted as duplicates, zero bytes). Bytes the organization already holds are
 *   answered `duplicate` by the service at the first step, with nothing sent.
 * - A file that changes while it is sent is started over (hashed again) up to twice, then
 *   failed with FILE_CHANGED.
 * - Pause drops the parts in flight (each accepted part is already in the ledger) and sends
 *   nothing until resume; cancel stops for good. Either way the ledger keeps the rest.
 * - Small files (up to 1 MiB) are read once: hashed a few files ahead of their turn, then sent
 *   from memory. For a folder of thousands of pictures the cost per file (opening, reading,
 *   ledger writes) outweighs the bytes, so it is what the throughput depends on; large files
 *   are streamed, hashed before they are declared (the contract wants the sha256 first).
 */
export * from './folder'
export {
  hashFile,
  isUploadScanError,
  scanFolder,
  sniffMedia,
  UploadScanError,
  type ScanOptions,
  type ScanProblem,
  type LeftOutEntry,
  type ScanResult,
  type SkippedCounts,
  type SniffedMediaType,
} from './scan'
export { isUploadTransferError, UploadTransferError } from './transfer'

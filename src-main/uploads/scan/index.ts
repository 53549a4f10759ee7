/**
 * The first steps of a folder upload: list the files of a folder, tell which are images or
 * videos, and hash them. Nothing here talks to the service.
 *
 * Decisions, and why:
 *
 * - `scanFolder` returns the whole listing at once, sorted: 100,000 files are a few MB of plain
 *   objects, and a stable order needs them all anyway. It reads no file unless `mediaTypes` asks
 *   for sniffing (4100 bytes per file).
 * - Symbolic links are skipped, never followed: a link can point outside the folder the person
 *   picked, or loop back into it. The folder itself may be a link (the person named it).
 * - Hidden entries (dot names) and OS litter (.DS_Store, ._*, Thumbs.db, desktop.ini, Icon\r,
 *   $RECYCLE.BIN, System Volume Information, __MACOSX) are skipped; so are FIFOs, sockets and
 *   devices. Every skip is counted by reason, so the person can be told what was left out.
 * - Patterns are picomatch globs on the '/'-separated relative path, ignoring case; a pattern
 *   without a slash matches a name at any depth, like .gitignore. See `ScanOptions`.
 * - A folder or file that cannot be read is a problem in the result and the scan goes on; only
 *   the root failing stops it.
 * - Media is decided by content (file-type), from an allowlist of formats an asset library can
 *   show; the extension only counts for SVG, which is text.
 * - `hashFile` compares the file before and after (size, mtime, inode, bytes read) and fails
 *   with FILE_CHANGED rather than return a hash of bytes that are no longer there. It reads 1 MiB
 *   chunks into two buffers used in turn, the next read under way while one is hashed; a small
 *   file can come back with its bytes (`keepBytesUpTo`), so that sending it needs no second read.
 * - Each system call costs more than its work on a busy machine (a hand-off to libuv's threads
 *   and back), so the scan does as few as it can per file: a stat to list it, then, to sniff
 *   it, an open, a read and a close (the stat just made stands in for one on the descriptor).
 * - mtimes are whole milliseconds (floored): the ledger's column is a strict integer.
 */
export {
  scanFolder,
  type ScannedFile,
  type ScanOptions,
  type ScanProblem,
  type ScanResult,
  type SkippedCounts,
  type LeftOutEntry,
} from './scan'
export { sniffMedia, type SniffedMedia, type SniffedMediaType } from './media'
export { hashFile, type FileHash, type HashOptions } from './hash'
export { isUploadScanError, UploadScanError, type UploadScanErrorCode } from './errors'

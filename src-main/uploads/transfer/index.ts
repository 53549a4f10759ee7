/**
 * Sends one file of a folder upload to the service through the contract's three-step presigned
 * upload, resumably. The orchestration (many files, progress bars, the CLI) builds on
 * `uploadFile`; scanning and hashing happen before it (the row must carry sha256 and type, or,
 * for a file whose bytes the caller holds, the caller's copy of the row does).
 *
 * Decisions, and why:
 *
 * - The ledger row is the memory between calls. A row with an upload id that has not expired is
 *   resumed: GET the upload, and the parts storage holds by the service's account are not sent
 *   again (the service is the judge: a part the ledger has but storage lost is re-sent, one
 *   storage took just before a crash is recorded now). An expired or unknown upload is declared
 *   anew; the ledger forgets the old upload's parts when the row gets the new upload id.
 * - Every part accepted by storage is recorded in the ledger at once, so aborting (a pause, the
 *   app quitting) loses at most the parts in flight. An abort leaves the row as it is, to be
 *   resumed; every other failure marks it failed with its message.
 * - Parts stream from disk (512 KiB chunks, the next read while the last is written) with an
 *   explicit Content-Length, as object storage wants for a presigned PUT: memory per part in
 *   flight is two chunks, whatever the part or file size. How many parts are in flight is
 *   bounded by a limiter the caller shares across files; a slot is taken before a part's stream
 *   is opened. PUTs do not follow redirects: a presigned URL has none, and following one makes
 *   fetch keep a copy of every byte of the body.
 * - A small file the caller read whole to hash it (`TransferFile.bytes`) is sent from memory:
 *   no second read, no size and mtime checks (what is sent is what was hashed; a file changed on
 *   disk since is listed anew by the next upload of the folder). Its ledger row takes its hash
 *   with the upload id (or the outcome) instead of in a write of its own, and its part is not
 *   recorded on its own: on a resume the service's account of the upload says what it holds.
 *   A folder of thousands of small files spends more on writes and reads per file than on
 *   bytes; this halves them.
 * - Storage PUTs carry no API key (the URL is signed). A 403 is an expired URL: it is refreshed
 *   and the part sent again (a refused fresh URL twice over fails: a clock is likely wrong).
 *   Network errors, 5xx, 429 and stalls are retried with jittered backoff, honouring
 *   Retry-After, up to `retry.attempts`, then the file fails with STORAGE_UNREACHABLE.
 * - The API POSTs take no Idempotency-Key, so the service client does not repeat them; they are
 *   safe to repeat (a repeated declaration leaves a stray upload that expires, a repeated
 *   confirmation answers the same asset), so they are repeated here on a lost answer or a 5xx.
 * - A file read from disk must keep the size and mtime it was hashed with: checked before
 *   declaring or resuming, after the last part, and on a short read; otherwise FILE_CHANGED
 *   (restart it).
 * - A confirmation answered with an existing asset (another upload of the same bytes won a
 *   race) counts as confirmed into that asset. One answered 422 on the sha256 means the bytes
 *   sent were not the bytes hashed: FILE_CHANGED.
 */
export { uploadFile } from './transfer'
export {
  isUploadTransferError,
  UploadTransferError,
  type TransferErrorCode,
  type TransferErrorDetails,
} from './errors'
export { createPartLimiter, type CountingLimiter, type PartLimiter } from './limiter'
export { DEFAULT_TRANSFER_RETRY, type TransferRetryPolicy } from './retry'
export type {
  TransferContext,
  TransferEvent,
  TransferFile,
  TransferResult,
  TransferState,
} from './types'

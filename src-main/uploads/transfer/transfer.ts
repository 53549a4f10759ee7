import type { AssetUpload } from '../../../src-shared/api'
import type { UploadFile } from '../../db'
import type { Hash } from '../../db/repositories/uploads'
import { isServiceError } from '../../service'
import { isUnknownUpload, serviceFailure, UploadApi } from './api'
import { changedError, checkUnchanged } from './disk'
import { abortedError, isUploadTransferError, reasonOf, UploadTransferError } from './errors'
import { resolveRetry, type TransferRetryPolicy } from './retry'
import { sendPart, urlExpiresSoon, type PartUrl } from './storage'
import type { TransferContext, TransferEvent, TransferFile, TransferResult } from './types'

type HashedFile = UploadFile & { sha256: string; contentType: string }

const FINISHED = new Set<UploadFile['state']>(['confirmed', 'duplicate', 'skipped'])

/**
 * The ledger's current row: the caller's copy may predate a resume or a re-declaration. A file
 * whose bytes the caller holds may not have its hash in the ledger yet (it is recorded with the
 * upload id, see `Hash`): the caller's copy carries it then, for the same size and mtime.
 */
function readyRow(
  context: TransferContext,
  file: TransferFile,
): { row: HashedFile; bytes: Uint8Array | null; unrecorded: Hash | null } {
  const row = context.uploads.getFile(file.row.seq)
  if (!row) {
    throw new UploadTransferError(
      'FILE_NOT_READY',
      `${file.path} is not in the ledger's upload manifest (file ${file.row.seq}); scan the folder again.`,
    )
  }
  const given = file.row
  const bytes = file.bytes?.length === row.sizeBytes ? file.bytes : null
  if (row.sha256 !== null && row.contentType !== null) {
    return {
      row: { ...row, sha256: row.sha256, contentType: row.contentType },
      // Only the bytes of the hash the ledger has; others would not match the declaration.
      bytes: given.sha256 === row.sha256 ? bytes : null,
      unrecorded: null,
    }
  }
  if (
    bytes &&
    given.sha256 !== null &&
    given.contentType !== null &&
    given.sizeBytes === row.sizeBytes &&
    given.mtimeMs === row.mtimeMs
  ) {
    const hash = { sha256: given.sha256, contentType: given.contentType }
    return { row: { ...row, ...hash }, bytes, unrecorded: hash }
  }
  throw new UploadTransferError(
    'FILE_NOT_READY',
    `${file.path} has not been hashed yet; hash it before uploading it.`,
  )
}

/** The byte count of a part: part_size, but the remainder for the last one. */
function partSizeOf(upload: AssetUpload, partNumber: number): number {
  return partNumber < upload.part_count
    ? upload.part_size
    : upload.size_bytes - upload.part_size * (upload.part_count - 1)
}

function isChecksumMismatch(error: unknown): boolean {
  return (
    isServiceError(error) &&
    error.status === 422 &&
    (error.errors ?? []).some((problem) => problem.field === 'sha256')
  )
}

function asTransferError(error: unknown, signal: AbortSignal): UploadTransferError {
  if (signal.aborted) return abortedError(signal)
  if (isUploadTransferError(error)) return error
  return new UploadTransferError(
    'TRANSFER_FAILED',
    `The upload failed unexpectedly (${reasonOf(error)}). Try again; if it keeps failing, report it.`,
    {},
    { cause: error },
  )
}

class FileTransfer {
  private readonly api: UploadApi
  private readonly retry: TransferRetryPolicy
  private readonly fetch: typeof fetch
  private bytesSent = 0
  private partsSent = 0

  constructor(
    private readonly context: TransferContext,
    private readonly file: TransferFile,
    private readonly row: HashedFile,
    /** The file's bytes when the caller holds them: sent from memory, not read again. */
    private readonly bytes: Uint8Array | null,
    /** The hash, when the ledger does not have it yet: written with the first write. */
    private unrecorded: Hash | null,
  ) {
    this.retry = resolveRetry(context.retry)
    this.api = new UploadApi(context.service, this.retry, context.signal)
    this.fetch = context.fetch ?? globalThis.fetch
  }

  /** The hash to write along with the next write of the row, once. */
  private hashToRecord(): Hash | undefined {
    const hash = this.unrecorded ?? undefined
    this.unrecorded = null
    return hash
  }

  emit(event: TransferEvent): void {
    try {
      this.context.onProgress?.(event)
    } catch {
      // A failing observer must not change what happens to the upload.
    }
  }

  private get seq(): number {
    return this.row.seq
  }

  async run(): Promise<TransferResult> {
    const { file, row, context } = this
    if (context.signal.aborted) throw abortedError(context.signal)
    // Bytes held in memory are the bytes hashed, whatever happens to the file now: what is sent
    // matches the sha256, and a file changed on disk since is listed anew (its size or mtime
    // moved) by the next upload of the folder. Only bytes read from disk need the checks.
    const fromDisk = this.bytes === null
    if (fromDisk) await checkUnchanged(file.path, row)
    let upload = await this.resume()
    if (upload === null) {
      this.emit({ type: 'state', seq: this.seq, state: 'declaring' })
      upload = await this.api
        .declare({
          filename: file.filename,
          contentType: row.contentType,
          sizeBytes: row.sizeBytes,
          sha256: row.sha256,
          folderId: file.folderId,
          partSize: context.partSize,
        })
        .catch((error: unknown) => {
          throw serviceFailure(error, 'start the upload', file.filename)
        })
      if (upload.status_code === 'duplicate') {
        return this.finish('duplicate', upload.duplicate_of_asset_id)
      }
      this.record(upload)
    }
    // A resumed upload may have been finished by a confirmation whose answer was lost.
    if (upload.status_code === 'confirmed') return this.finish('confirmed', upload.asset_id)
    if (upload.status_code === 'duplicate') {
      return this.finish('duplicate', upload.duplicate_of_asset_id)
    }

    const etags = this.receivedParts(upload)
    let held = 0
    for (const n of etags.keys()) held += partSizeOf(upload, n)
    this.emit({ type: 'state', seq: this.seq, state: 'uploading', bytesDone: held })
    await this.sendMissing(upload, etags)
    // The bytes sent must be the bytes hashed; the service checks the sha256 too, but only after
    // assembling every part.
    if (fromDisk) await checkUnchanged(file.path, row)
    this.emit({ type: 'state', seq: this.seq, state: 'confirming' })
    const parts = [...etags]
      .sort(([a], [b]) => a - b)
      .map(([part_number, etag]) => ({ part_number, etag }))
    try {
      const asset = await this.api.confirm(upload.id, parts)
      return this.finish('confirmed', asset.id)
    } catch (error) {
      if (isChecksumMismatch(error)) {
        throw changedError(file.path, 'the bytes sent do not match the sha256 it was hashed with')
      }
      // UPLOAD_INCOMPLETE (storage lost a part it had accepted) ends here too: the next try
      // resumes, and the service's account of its parts decides what is sent again.
      throw serviceFailure(error, 'confirm the upload', file.filename, upload.id)
    }
  }

  /** The service's upload to go on with, or null when a new one must be declared. */
  private async resume(): Promise<AssetUpload | null> {
    const { row } = this
    if (row.uploadId === null) return null
    if (row.uploadExpiresMs !== null && row.uploadExpiresMs <= Date.now()) return null
    this.emit({ type: 'state', seq: this.seq, state: 'resuming' })
    let upload: AssetUpload
    try {
      upload = await this.api.get(row.uploadId)
    } catch (error) {
      if (isUnknownUpload(error)) return null
      throw serviceFailure(error, 'look up the upload', this.file.filename, row.uploadId)
    }
    if (upload.status_code === 'expired') return null
    if (upload.sha256 !== row.sha256 || upload.size_bytes !== row.sizeBytes) return null
    if (upload.status_code === 'pending' || upload.status_code === 'uploading') {
      // The same upload id keeps the recorded parts; the row is back to uploading, one more try.
      this.record(upload)
    }
    return upload
  }

  /** The service's upload, in the ledger row: from now on a resume goes on with it. */
  private record(upload: AssetUpload): void {
    this.context.uploads.startUpload(
      this.seq,
      {
        uploadId: upload.id,
        expiresMs: Date.parse(upload.expires_at),
        partSize: upload.part_size,
        partCount: upload.part_count,
        folderId: upload.folder_id,
      },
      this.hashToRecord(),
    )
  }

  /**
   * The parts storage holds, by the service's account, with their ETags. The service is the
   * judge: a part the ledger recorded but storage lost is sent again, and one storage took just
   * before a crash (before the ledger heard of it) is recorded now instead of sent twice.
   */
  private receivedParts(upload: AssetUpload): Map<number, string> {
    const { uploads } = this.context
    const etags = new Map<number, string>()
    // Read only when storage holds something: a new upload (most of them) holds nothing.
    let recorded: Map<number, string> | null = null
    for (const part of upload.parts) {
      if (!part.received || part.etag === null) continue
      etags.set(part.part_number, part.etag)
      recorded ??= new Map(uploads.finishedParts(this.seq).map((p) => [p.partNumber, p.etag]))
      if (recorded.get(part.part_number) !== part.etag) {
        uploads.recordPart(this.seq, {
          partNumber: part.part_number,
          sizeBytes: partSizeOf(upload, part.part_number),
          etag: part.etag,
        })
      }
    }
    return etags
  }

  private async freshUrls(uploadId: string, partNumbers: number[]): Promise<Map<number, PartUrl>> {
    let upload: AssetUpload
    try {
      upload = await this.api.refresh(uploadId, partNumbers)
    } catch (error) {
      throw serviceFailure(error, 'get fresh part URLs', this.file.filename, uploadId)
    }
    const wanted = new Set(partNumbers)
    const urls = new Map<number, PartUrl>()
    for (const part of upload.parts) {
      if (wanted.has(part.part_number)) {
        urls.set(part.part_number, { url: part.url, expiresMs: Date.parse(part.expires_at) })
      }
    }
    const lacking = partNumbers.filter((n) => !urls.has(n))
    if (lacking.length > 0) {
      throw new UploadTransferError(
        'UPLOAD_REFUSED',
        `The service gave no URL for part(s) ${lacking.join(', ')} of ${this.file.filename}. Upload the file again.`,
      )
    }
    return urls
  }

  /**
   * PUTs every part storage lacks, as many at once as the shared limiter allows. The first part
   * that fails stops the others (their PUTs are aborted); parts already accepted stay recorded.
   */
  private async sendMissing(upload: AssetUpload, etags: Map<number, string>): Promise<void> {
    const missing = upload.parts.filter((part) => !etags.has(part.part_number))
    if (missing.length === 0) return
    const urls = new Map<number, PartUrl>(
      missing.map((part) => [
        part.part_number,
        { url: part.url, expiresMs: Date.parse(part.expires_at) },
      ]),
    )
    // After a pause the URLs have often expired: one refresh for all of them, not one per part.
    const stale = [...urls].filter(([, url]) => urlExpiresSoon(url)).map(([n]) => n)
    if (stale.length > 0) {
      for (const [n, url] of await this.freshUrls(upload.id, stale)) urls.set(n, url)
    }

    const { signal, limiter } = this.context
    const stop = new AbortController()
    const onAbort = (): void => {
      stop.abort(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) onAbort()
    let failure: unknown = null
    const running = new Set<Promise<void>>()
    try {
      for (const part of missing) {
        let release: () => void
        try {
          release = await limiter.acquire(stop.signal)
        } catch (error) {
          failure ??= error
          break
        }
        const n = part.part_number
        const task = this.sendOne(upload, n, urls.get(n) ?? { url: part.url, expiresMs: 0 }, stop)
          .then(
            (etag) => {
              etags.set(n, etag)
            },
            (error: unknown) => {
              failure ??= error
              stop.abort(error)
            },
          )
          .finally(release)
        running.add(task)
        void task.then(() => running.delete(task))
      }
    } finally {
      await Promise.all(running)
      signal.removeEventListener('abort', onAbort)
    }
    if (failure !== null) throw asTransferError(failure, signal)
  }

  private async sendOne(
    upload: AssetUpload,
    partNumber: number,
    url: PartUrl,
    stop: AbortController,
  ): Promise<string> {
    const size = partSizeOf(upload, partNumber)
    const offset = (partNumber - 1) * upload.part_size
    const etag = await sendPart(
      {
        path: this.file.path,
        uploadId: upload.id,
        partNumber,
        offset,
        size,
        url,
        bytes: this.bytes?.subarray(offset, offset + size),
      },
      {
        fetch: this.fetch,
        retry: this.retry,
        signal: stop.signal,
        refresh: async (n) => {
          const fresh = (await this.freshUrls(upload.id, [n])).get(n)
          if (!fresh) throw new Error(`no URL for part ${n}`)
          return fresh
        },
        onBytes: (bytes) => {
          this.bytesSent += bytes
          this.emit({ type: 'bytes', seq: this.seq, partNumber, bytes })
        },
      },
    )
    // Recorded the moment storage answers, so an abort or a crash right after keeps it. Not for
    // a file sent from memory: it is small (one part, as a rule) and confirmed right after, and
    // should that be cut short, the service's account of the upload says what it holds.
    if (!this.bytes) {
      this.context.uploads.recordPart(this.seq, { partNumber, sizeBytes: size, etag })
    }
    this.partsSent++
    this.emit({
      type: 'part',
      seq: this.seq,
      partNumber,
      partCount: upload.part_count,
      sizeBytes: size,
    })
    return etag
  }

  private finish(state: 'confirmed' | 'duplicate', assetId: string | null): TransferResult {
    this.context.uploads.finishFile(this.seq, state, assetId, this.hashToRecord())
    this.emit({
      type: 'state',
      seq: this.seq,
      state: state === 'confirmed' ? 'done' : 'duplicate',
      assetId: assetId ?? undefined,
    })
    return {
      seq: this.seq,
      state,
      assetId,
      alreadyFinished: false,
      bytesSent: this.bytesSent,
      partsSent: this.partsSent,
    }
  }

  fail(error: UploadTransferError): void {
    this.context.uploads.failFile(this.seq, error.message)
    this.emit({ type: 'state', seq: this.seq, state: 'failed', error })
  }
}

/**
 * Sends one hashed file of a manifest to the service through the three-step presigned upload,
 * resuming the upload the ledger remembers when the service still has it. Resolves once the
 * file is an asset (or found to be a duplicate); rejects with an UploadTransferError, after
 * marking the ledger row failed (except for ABORTED, which leaves the row to be resumed).
 */
export async function uploadFile(
  context: TransferContext,
  file: TransferFile,
): Promise<TransferResult> {
  const { row, bytes, unrecorded } = readyRow(context, file)
  if (FINISHED.has(row.state)) {
    return {
      seq: row.seq,
      state: row.state as TransferResult['state'],
      assetId: row.assetId,
      alreadyFinished: true,
      bytesSent: 0,
      partsSent: 0,
    }
  }
  const transfer = new FileTransfer(context, file, row, bytes, unrecorded)
  try {
    return await transfer.run()
  } catch (error) {
    const failure = asTransferError(error, context.signal)
    if (failure.code !== 'ABORTED') transfer.fail(failure)
    throw failure
  }
}

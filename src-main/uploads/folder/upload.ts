import { stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { basename, join, posix, resolve } from 'node:path'
import type { UploadFile, UploadsRepository } from '../../db'
import type { ServiceClient } from '../../service'
import { hashFile, isUploadScanError, scanFolder, type ScanProblem, type ScanResult } from '../scan'
import type { FileHash, LeftOutEntry, SkippedCounts, SniffedMediaType } from '../scan'
import {
  createPartLimiter,
  isUploadTransferError,
  uploadFile,
  type TransferEvent,
  type TransferRetryPolicy,
} from '../transfer'
import { DEFAULT_FILE_CONCURRENCY, DEFAULT_PARTS_IN_FLIGHT } from './defaults'
import { AssetFolders } from './folders'
import { ProgressTally, type FileProgress, type UploadProgress } from './progress'

export { DEFAULT_FILE_CONCURRENCY, DEFAULT_PARTS_IN_FLIGHT }
const HASHING_AT_ONCE = Math.max(1, Math.floor(availableParallelism() / 2))
/** A file that keeps changing under the upload is given up after this many fresh starts. */
const MAX_RESTARTS = 2
/** Progress snapshots at most this often; file events and phase changes go at once. */
const PROGRESS_EVERY_MS = 200
/**
 * Files up to this size are read once: the bytes hashed are kept and sent from memory, instead
 * of opening and streaming the file a second time. A folder of small pictures spends more on
 * opening, reading and streaming each file than on its bytes; this costs at most `concurrency`
 * such buffers at a time.
 */
const SEND_FROM_MEMORY_UP_TO = 1024 * 1024
const OCTET_STREAM = 'application/octet-stream'

export interface FolderUploadOptions {
  service: ServiceClient
  /** The ledger's upload manifests. */
  uploads: UploadsRepository
  profile: string
  orgId: string
  /** The local folder. */
  root: string
  /**
   * The asset folder that receives the folder's tree, at the top level (made when missing,
   * reused when present; names compare ignoring case). The folder's own name by default; null
   * puts the tree at the top level itself.
   */
  folder?: string | null | undefined
  /**
   * The asset folder (an id) `folder` is made in: the folder selected in the tree. Left out or
   * null: the top level. With `folder` null, the tree lands in it directly.
   */
  into?: string | null | undefined
  /**
   * Only these files of the folder ('/'-separated paths inside it), not the whole folder: files
   * dropped on the window. The folder is not walked; the same rules (names, links, media) apply
   * to each file, and `include`/`exclude` too. With files, `folder` defaults to null (the top
   * level): the person picked files, not their folder. The manifest remembers it (`filesOnly`),
   * so that a resume after a restart sends these files, never the rest of the folder.
   */
  files?: readonly string[] | undefined
  include?: readonly string[] | undefined
  exclude?: readonly string[] | undefined
  /** Images and videos by default. */
  mediaTypes?: readonly SniffedMediaType[] | undefined
  /** Files hashed and sent at the same time. */
  concurrency?: number | undefined
  /** Parts in flight across every file. */
  partsInFlight?: number | undefined
  partSize?: number | undefined
  retry?: Partial<TransferRetryPolicy> | undefined
  /** For storage PUTs; the global fetch by default. */
  fetch?: typeof fetch | undefined
  onProgress?: ((progress: UploadProgress) => void) | undefined
  onFile?: ((file: FileProgress) => void) | undefined
}

export interface UploadFailure {
  relativePath: string
  code: string
  message: string
}

export interface FolderUploadSummary {
  manifestId: string
  state: 'finished' | 'failed' | 'canceled'
  /**
   * Files of this pass by outcome; `left` were not reached (a cancel); `already` were there
   * before it (sent or found by an earlier upload of the folder), so nothing was sent for them.
   */
  files: {
    total: number
    uploaded: number
    duplicates: number
    failed: number
    left: number
    already: number
  }
  bytes: { total: number; sent: number }
  failures: UploadFailure[]
  /** What the scan could not read, and what it left out by reason. */
  problems: ScanProblem[]
  skipped: SkippedCounts
  /** The files and folders counted in `skipped`, named, with the reason for each. */
  leftOut: LeftOutEntry[]
  elapsedMs: number
}

export interface FolderUpload {
  /** Settles when every file has an outcome, or the upload is canceled. */
  done: Promise<FolderUploadSummary>
  /** Stops sending (parts in flight are dropped; accepted ones stay) until `resume`. */
  pause(): void
  resume(): void
  /** Stops for good; the manifest keeps what was done, so the next upload of the folder goes on. */
  cancel(): void
  progress(): UploadProgress
}

/** Thrown inside a pass when the user paused or canceled: the file is left as it is. */
class Stopped extends Error {}

/**
 * Uploads a folder: scan, mirror its sub-folders as asset folders, then hash and send each file
 * through the three-step upload, a few files at a time. Everything the ledger keeps (the
 * manifest, hashes, upload ids, accepted parts) makes the next call go on where this one
 * stopped, after a pause, a cancel, a crash or a kill.
 */
export function startFolderUpload(options: FolderUploadOptions): FolderUpload {
  return new FolderUploadRun(options).start()
}

class FolderUploadRun {
  private readonly root: string
  private readonly tally = new ProgressTally()
  private epoch = new AbortController()
  private paused: { resume: Promise<void>; go: () => void } | null = null
  private canceled = false
  private lastProgress = 0
  private readonly limiter
  /**
   * Files hashed at once. Hashing every file of a batch before any sends (four 256 MiB files
   * at once) leaves the network idle for seconds; one or two at a time, the first file starts
   * sending while the next is hashed.
   */
  private readonly hashing
  private readonly started = performance.now()
  private readonly failures = new Map<number, UploadFailure>()
  private contentTypes = new Map<string, string>()
  private folderIds = new Map<string, string | null>()
  /**
   * By sha256: the file of this manifest that sends those bytes, and the asset it ends in, which
   * the identical files wait for (null when it failed: the next one tries).
   */
  private readonly claims = new Map<string, Claim>()
  /**
   * By sha256, for bytes hashed before this pass: the file that sends them. The one with an
   * upload under way (parts already sent) if any, else the first listed, so that after a kill the
   * same file goes on instead of a copy starting over.
   */
  private leaders = new Map<string, number>()
  /**
   * Which of identical files becomes the asset must not depend on which one finished hashing
   * first (a busy machine reorders them): the first in the folder's sorted path order does. Only
   * files of the same size can be identical, so a file waits, before it claims its bytes, for
   * the file of its size before it to have claimed theirs (rarely more than a hash's wait). By
   * seq: settled once the file claimed (or failed), and the file before it, by size.
   */
  private claimed = new Map<number, Claim>()
  private sameSizeBefore = new Map<number, number>()
  /** Small files hashed ahead of their turn, by seq (see `hashAhead`). */
  private readonly ahead = new Map<number, Promise<FileHash>>()
  /** Files an earlier upload of the folder finished, by seq: this one sends nothing for them. */
  private readonly already = new Set<number>()

  constructor(private readonly options: FolderUploadOptions) {
    this.root = resolve(options.root)
    this.limiter = createPartLimiter(options.partsInFlight ?? DEFAULT_PARTS_IN_FLIGHT)
    this.hashing = createPartLimiter(HASHING_AT_ONCE)
  }

  start(): FolderUpload {
    const done = this.run()
    return {
      done,
      pause: () => {
        if (this.paused || this.canceled) return
        let go: () => void = () => undefined
        const resume = new Promise<void>((resolve) => {
          go = resolve
        })
        this.paused = { resume, go }
        this.epoch.abort(new Stopped('paused'))
        this.phase('paused')
      },
      resume: () => {
        const paused = this.paused
        if (!paused) return
        this.paused = null
        this.epoch = new AbortController()
        this.phase('uploading')
        paused.go()
      },
      cancel: () => {
        if (this.canceled) return
        this.canceled = true
        this.epoch.abort(new Stopped('canceled'))
        this.paused?.go()
      },
      progress: () => this.snapshot(),
    }
  }

  private async run(): Promise<FolderUploadSummary> {
    const { options } = this
    const scope = { profile: options.profile, orgId: options.orgId }
    // The scan first: a folder that is not there (or not readable) must leave nothing behind,
    // neither an asset folder on the service nor a manifest.
    this.phase('scanning')
    const filesOnly = options.files !== undefined
    const scan = await scanFolder(this.root, {
      include: options.include,
      exclude: options.exclude,
      mediaTypes: options.mediaTypes ?? ['image', 'video'],
      ...(filesOnly ? { only: options.files } : {}),
    })
    const folders = new AssetFolders(options.service)
    const targetName = defaultTarget(this.root, options)
    const parent = options.into ?? null
    const target = targetName === null ? parent : await folders.ensure(parent, targetName)
    // The folder's manifest, whichever way it was uploaded before: what was sent then is not
    // sent again. It takes this upload's way (whole folder or named files) for a resume.
    const known = options.uploads.latest(scope, this.root, target)
    if (known) options.uploads.setFilesOnly(known.id, filesOnly)
    const manifest =
      known ??
      options.uploads.createManifest({
        ...scope,
        rootPath: this.root,
        targetFolderId: target,
        filesOnly,
      })
    this.tally.manifestId = manifest.id
    options.uploads.addFiles(manifest.id, scan.files)
    this.contentTypes = new Map(
      scan.files.flatMap((f) => (f.media ? [[f.relativePath, f.media.contentType]] : [])),
    )
    const listed = new Set(scan.files.map((f) => f.relativePath))
    const rows = this.rowsOf(manifest.id).filter((row) => listed.has(row.relativePath))
    const partBytes = options.uploads.partBytes(manifest.id)
    for (const row of rows) this.track(row, partBytes)

    this.phase('folders')
    this.folderIds = await folders.tree(
      target,
      rows.map((row) => posix.dirname(row.relativePath)).map((dir) => (dir === '.' ? '' : dir)),
    )

    options.uploads.setManifestState(manifest.id, 'uploading')
    this.phase('uploading')
    for (;;) {
      // As the ledger has them now: a pass before this one moved them on.
      const current = new Map(this.rowsOf(manifest.id).map((row) => [row.seq, row]))
      const todo = rows
        .map((row) => current.get(row.seq) ?? row)
        .filter((row) => !isFinished(row.state) && this.tally.get(row.seq)?.state !== 'failed')
      await this.pass(todo)
      if (this.canceled) break
      if (this.paused) {
        options.uploads.setManifestState(manifest.id, 'paused')
        await this.paused.resume
        // cancel() may have run while this waited.
        if (this.stoppedForGood()) break
        options.uploads.setManifestState(manifest.id, 'uploading')
        continue
      }
      break
    }
    return this.finish(manifest.id, scan)
  }

  private stoppedForGood(): boolean {
    return this.canceled
  }

  private finish(manifestId: string, scan: ScanResult): FolderUploadSummary {
    const tally = this.tally
    const files = tally.all()
    const count = (state: FileProgress['state']) =>
      files.filter((f) => f.state === state && !this.already.has(f.seq)).length
    const failed = count('failed')
    const state = this.canceled ? 'canceled' : failed > 0 ? 'failed' : 'finished'
    this.options.uploads.setManifestState(
      manifestId,
      state,
      failed > 0 ? `${failed} file(s) failed` : null,
    )
    this.phase(this.canceled ? 'canceled' : 'finished')
    const snapshot = tally.snapshot()
    return {
      manifestId,
      state,
      files: {
        total: files.length,
        uploaded: count('done'),
        duplicates: count('duplicate'),
        failed,
        left: tally.unfinished().length,
        already: this.already.size,
      },
      bytes: { total: snapshot.bytes.total, sent: snapshot.bytesSent },
      failures: [...this.failures.values()],
      problems: scan.problems,
      skipped: scan.skipped,
      leftOut: scan.leftOut,
      elapsedMs: performance.now() - this.started,
    }
  }

  /** Sends `rows`, `concurrency` files at a time, until done or stopped. */
  private async pass(given: readonly UploadFile[]): Promise<void> {
    this.leaders = new Map()
    this.claimed = new Map()
    this.sameSizeBefore = new Map()
    const rows = [...given].sort(byPath)
    const bySeq = new Map(rows.map((row) => [row.seq, row]))
    const lastOfSize = new Map<number, number>()
    for (const row of rows) {
      const before = lastOfSize.get(row.sizeBytes)
      if (before !== undefined) this.sameSizeBefore.set(row.seq, before)
      lastOfSize.set(row.sizeBytes, row.seq)
      this.claimed.set(row.seq, newClaim(row.seq))
    }
    for (const row of rows) {
      if (row.sha256 === null) continue
      const leader = this.leaders.get(row.sha256)
      const sending = leader === undefined ? undefined : bySeq.get(leader)
      if (leader === undefined || (row.uploadId !== null && sending?.uploadId === null)) {
        this.leaders.set(row.sha256, row.seq)
      }
    }
    let next = 0
    const signal = this.epoch.signal
    const concurrency = Math.max(1, this.options.concurrency ?? DEFAULT_FILE_CONCURRENCY)
    const worker = async () => {
      while (next < rows.length && !signal.aborted) {
        const row = rows[next++]
        this.hashAhead(rows.slice(next, next + concurrency), signal)
        if (row) await this.file(row, signal)
      }
    }
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, worker))
    } finally {
      // What a stop left hashed ahead is not sent in this pass: its bytes go.
      this.ahead.clear()
    }
  }

  /**
   * Starts hashing the small files next in line, so that their bytes are ready when a worker
   * takes them: a worker then goes from one file's confirmation straight to the next one's
   * declaration, instead of waiting for a file to be opened, read and hashed in between. At
   * most `concurrency` files are ahead, each no larger than SEND_FROM_MEMORY_UP_TO.
   */
  private hashAhead(rows: readonly UploadFile[], signal: AbortSignal): void {
    for (const row of rows) {
      if (row.sha256 !== null || row.sizeBytes > SEND_FROM_MEMORY_UP_TO) continue
      if (this.ahead.has(row.seq)) continue
      const hashing = hashFile(this.pathOf(row), { signal, keepBytesUpTo: SEND_FROM_MEMORY_UP_TO })
      // Heard by `hash` when the file's turn comes; a failure must not go unheard before that.
      hashing.catch(() => undefined)
      this.ahead.set(row.seq, hashing)
    }
  }

  private pathOf(row: UploadFile): string {
    return join(this.root, ...row.relativePath.split('/'))
  }

  /** One file: hash it if needed, wait for an identical one, send it; restarts when it changed. */
  private async file(given: UploadFile, signal: AbortSignal): Promise<void> {
    const { uploads } = this.options
    const path = this.pathOf(given)
    let row = given
    for (let restarts = 0; ; restarts++) {
      try {
        let bytes: Buffer | undefined
        if (row.sha256 === null) ({ row, bytes } = await this.hash(row, path, signal))
        const sha256 = row.sha256 ?? ''
        const claim = await this.claimInOrder(sha256, row.seq)
        if (typeof claim === 'string') {
          // A file held in memory has its hash recorded with its outcome (see `hash`).
          const hash = bytes ? { sha256, contentType: row.contentType ?? OCTET_STREAM } : undefined
          uploads.finishFile(row.seq, 'duplicate', claim, hash)
          this.update(row.seq, { state: 'duplicate', assetId: claim })
          return
        }
        const settle = claim.settle
        try {
          const result = await uploadFile(
            {
              service: this.options.service,
              uploads,
              limiter: this.limiter,
              signal,
              onProgress: (event) => {
                this.transferEvent(event)
              },
              fetch: this.options.fetch,
              partSize: this.options.partSize,
              retry: this.options.retry,
            },
            {
              row,
              path,
              folderId: this.folderIds.get(dirOf(row.relativePath)) ?? null,
              filename: posix.basename(row.relativePath),
              bytes,
            },
          )
          settle(result.assetId)
          this.update(row.seq, {
            state: result.state === 'duplicate' ? 'duplicate' : 'done',
            assetId: result.assetId,
          })
          return
        } catch (error) {
          settle(null)
          throw error
        }
      } catch (error) {
        // A file that failed before its claim still keeps its place in the line.
        void this.turnBefore(row.seq).then(() => this.claimed.get(row.seq)?.settle(null))
        if (signal.aborted) return
        const code = codeOf(error)
        if (code === 'FILE_CHANGED' && restarts < MAX_RESTARTS) {
          const fresh = await this.relist(row, path)
          if (fresh) {
            row = fresh
            continue
          }
        }
        this.fail(row, code, error)
        return
      }
    }
  }

  /** `claimFor`, after the earlier files of the same size (see `claimed`). */
  private async claimInOrder(sha256: string, seq: number): Promise<Claim | string> {
    await this.turnBefore(seq)
    // claimFor registers this file's claim before its first wait: the later files may go on.
    const claiming = this.claimFor(sha256, seq)
    this.claimed.get(seq)?.settle(null)
    return claiming
  }

  private async turnBefore(seq: number): Promise<void> {
    const before = this.sameSizeBefore.get(seq)
    if (before !== undefined) await this.claimed.get(before)?.promise
  }

  /**
   * Whether `seq` sends these bytes (its claim, to settle with the asset) or another file of
   * this manifest already made their asset (its id). Waits while another file is sending them.
   */
  private async claimFor(sha256: string, seq: number): Promise<Claim | string> {
    for (;;) {
      const current = this.claims.get(sha256)
      const leader = this.leaders.get(sha256)
      if (current === undefined && (leader === undefined || leader === seq)) {
        const claim = newClaim(seq)
        this.claims.set(sha256, claim)
        return claim
      }
      // Either another file is sending them, or the leader has not reached them yet.
      const waitFor = current ?? newClaim(leader ?? seq)
      if (!current) this.claims.set(sha256, waitFor)
      if (waitFor.seq === seq) return waitFor
      const assetId = await waitFor.promise
      if (assetId !== null) return assetId
      // It failed: this file tries, unless another one took over meanwhile.
      if (this.claims.get(sha256) === waitFor) {
        this.leaders.delete(sha256)
        this.claims.delete(sha256)
      }
    }
  }

  /** Hashes the file into the ledger; a small file's bytes come back, to be sent from memory. */
  private async hash(
    row: UploadFile,
    path: string,
    signal: AbortSignal,
  ): Promise<{ row: UploadFile; bytes: Buffer | undefined }> {
    const { uploads } = this.options
    this.update(row.seq, { state: 'hashing', bytesDone: 0 })
    const result = await this.hashNow(row, path, signal)
    let current = row
    if (result.sizeBytes !== row.sizeBytes || result.mtimeMs !== row.mtimeMs) {
      uploads.addFiles(row.manifestId, [
        { relativePath: row.relativePath, sizeBytes: result.sizeBytes, mtimeMs: result.mtimeMs },
      ])
      current = uploads.getFile(row.seq) ?? row
      this.tally.set(row.seq, { state: 'hashing', sizeBytes: result.sizeBytes })
    }
    const type = this.contentTypes.get(row.relativePath) ?? current.contentType
    const contentType = type ?? OCTET_STREAM
    // A small file's hash goes into the ledger with its upload id or its outcome, one commit
    // fewer per file; should the upload be cut short before either, hashing it again is cheap.
    if (!result.bytes) uploads.setHash(row.seq, result.sha256, contentType)
    this.update(row.seq, { state: 'uploading', bytesDone: 0 })
    // The copy the transfer is given carries the hash (it reads the rest from the ledger again).
    return {
      row: { ...current, sha256: result.sha256, contentType, state: 'hashed' },
      bytes: result.bytes,
    }
  }

  /** The file's hash: the one started ahead of its turn, if any (once), or one made now. */
  private async hashNow(row: UploadFile, path: string, signal: AbortSignal): Promise<FileHash> {
    const early = this.ahead.get(row.seq)
    if (early) {
      this.ahead.delete(row.seq)
      return early
    }
    // The bound on hashing at once is for large files (the network would wait on them); a small
    // file is read in one go, and waiting for a slot would only hold its sending back.
    const small = row.sizeBytes <= SEND_FROM_MEMORY_UP_TO
    const release = small ? () => undefined : await this.hashing.acquire(signal)
    let hashed = 0
    try {
      return await hashFile(path, {
        signal,
        keepBytesUpTo: SEND_FROM_MEMORY_UP_TO,
        onBytes: (bytes) => {
          hashed += bytes
          // A file read in one chunk needs no progress of its own: it is hashed already.
          if (hashed < row.sizeBytes) {
            this.tally.set(row.seq, { state: 'hashing', bytesDone: hashed })
          }
        },
      })
    } finally {
      release()
    }
  }

  /** The file as it is now on disk, listed again (which starts it over); null when it is gone. */
  private async relist(row: UploadFile, path: string): Promise<UploadFile | null> {
    const { uploads } = this.options
    try {
      const now = await stat(path)
      uploads.addFiles(row.manifestId, [
        { relativePath: row.relativePath, sizeBytes: now.size, mtimeMs: Math.floor(now.mtimeMs) },
      ])
    } catch {
      return null
    }
    const fresh = uploads.getFile(row.seq)
    // Not started over (same size and mtime, other bytes): nothing tells a new try apart.
    if (fresh?.sha256 !== null) return null
    this.update(row.seq, { state: 'queued', sizeBytes: fresh.sizeBytes, bytesDone: 0 })
    return fresh
  }

  private transferEvent(event: TransferEvent): void {
    const tally = this.tally
    if (event.type === 'bytes') {
      tally.sentBytes(event.bytes)
      this.tick()
      return
    }
    if (event.type === 'part') {
      const file = tally.get(event.seq)
      tally.set(event.seq, {
        state: file?.state ?? 'uploading',
        bytesDone: (file?.bytesDone ?? 0) + event.sizeBytes,
      })
      this.tick()
      return
    }
    if (event.state === 'confirming') this.update(event.seq, { state: 'confirming' })
    // A new upload starts from nothing; a resumed one from the parts storage holds.
    else if (event.state === 'declaring')
      this.update(event.seq, { state: 'uploading', bytesDone: 0 })
    else if (event.state === 'uploading') {
      this.update(event.seq, { state: 'uploading', bytesDone: event.bytesDone ?? 0 })
    }
  }

  private fail(row: UploadFile, code: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error)
    this.options.uploads.failFile(row.seq, `${code}: ${message}`)
    this.failures.set(row.seq, { relativePath: row.relativePath, code, message })
    this.update(row.seq, { state: 'failed', error: { code, message } })
  }

  private track(row: UploadFile, partBytes: ReadonlyMap<number, number>): void {
    const state =
      row.state === 'confirmed' ? 'done' : row.state === 'duplicate' ? 'duplicate' : 'queued'
    if (state !== 'queued') this.already.add(row.seq)
    this.tally.set(row.seq, {
      relativePath: row.relativePath,
      sizeBytes: row.sizeBytes,
      state,
      bytesDone: state === 'queued' ? (partBytes.get(row.seq) ?? 0) : 0,
      assetId: row.assetId,
    })
  }

  private rowsOf(manifestId: string): UploadFile[] {
    const rows: UploadFile[] = []
    let after: string | null = null
    do {
      const page = this.options.uploads.files(manifestId, { limit: 1000, after })
      rows.push(...page.items)
      after = page.next
    } while (after !== null)
    return rows
  }

  /** A file's progress; observers hear of it only when something they show changed. */
  private update(seq: number, change: Partial<FileProgress> & Pick<FileProgress, 'state'>): void {
    const before = this.tally.get(seq)
    const file = this.tally.set(seq, change)
    if (before && sameProgress(before, file)) return
    this.options.onFile?.(file)
    this.tick(true)
  }

  private phase(phase: UploadProgress['phase']): void {
    this.tally.phase = phase
    this.tick(true)
  }

  private tick(now = false): void {
    const at = performance.now()
    if (!now && at - this.lastProgress < PROGRESS_EVERY_MS) return
    this.lastProgress = at
    this.options.onProgress?.(this.tally.snapshot())
  }

  private snapshot(): UploadProgress {
    return this.tally.snapshot()
  }
}

/**
 * The asset folder's name an upload goes into when `folder` is left out: the folder's own name,
 * or the top level (null) for named files.
 */
export function defaultTarget(
  root: string,
  options: Pick<FolderUploadOptions, 'folder' | 'files'>,
): string | null {
  if (options.folder !== undefined) return options.folder
  return options.files === undefined ? basename(resolve(root)) : null
}

interface Claim {
  /** The file sending the bytes. */
  seq: number
  promise: Promise<string | null>
  settle: (assetId: string | null) => void
}

function newClaim(seq: number): Claim {
  let settle: (assetId: string | null) => void = () => undefined
  const promise = new Promise<string | null>((resolve) => {
    settle = resolve
  })
  return { seq, promise, settle }
}

function sameProgress(a: FileProgress, b: FileProgress): boolean {
  return (
    a.state === b.state &&
    a.bytesDone === b.bytesDone &&
    a.sizeBytes === b.sizeBytes &&
    a.assetId === b.assetId &&
    a.error === b.error
  )
}

const isFinished = (state: UploadFile['state']) =>
  state === 'confirmed' || state === 'duplicate' || state === 'skipped'

/** The order of the scan's listing: UTF-16 code units, the same on every machine and locale. */
const byPath = (a: UploadFile, b: UploadFile) =>
  a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : 0

const dirOf = (relativePath: string) => {
  const dir = posix.dirname(relativePath)
  return dir === '.' ? '' : dir
}

function codeOf(error: unknown): string {
  if (isUploadTransferError(error) || isUploadScanError(error)) return error.code
  return 'UPLOAD_FAILED'
}

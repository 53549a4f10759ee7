/** Where one file of a folder upload stands, in the words the progress list shows. */
export type FileState =
  'queued' | 'hashing' | 'uploading' | 'confirming' | 'done' | 'duplicate' | 'failed'

export interface FileProgress {
  seq: number
  relativePath: string
  sizeBytes: number
  state: FileState
  /** Bytes of this file accounted for: hashed while hashing, accepted by storage after. */
  bytesDone: number
  assetId?: string | null
  /** With failed: a stable code and what to do. */
  error?: { code: string; message: string }
}

export type UploadPhase =
  'scanning' | 'folders' | 'uploading' | 'paused' | 'watching' | 'finished' | 'canceled'

export interface UploadProgress {
  manifestId: string
  phase: UploadPhase
  files: { total: number; done: number; duplicates: number; failed: number }
  /** Bytes of finished files plus the parts storage accepted of the others. */
  bytes: { total: number; done: number }
  /** Bytes put on the wire in this session; parts sent again count again. */
  bytesSent: number
  /** Bytes per second sent over the last RATE_WINDOW_MS. */
  rate: number
  /** Seconds until the bytes left are sent at that rate; null while there is no rate yet. */
  etaSeconds: number | null
}

/** How far back the transfer rate looks: long enough to be steady, short enough to follow. */
const RATE_WINDOW_MS = 5_000

const FINISHED: ReadonlySet<FileState> = new Set(['done', 'duplicate', 'failed'])

/** The counts behind the progress bars, kept as files move; `snapshot` reads them. */
export class ProgressTally {
  private readonly files = new Map<number, FileProgress>()
  private readonly totals = { files: 0, done: 0, duplicates: 0, failed: 0, bytes: 0, bytesDone: 0 }
  private readonly sent: { at: number; bytes: number }[] = []
  private bytesSent = 0
  private windowBytes = 0
  phase: UploadPhase = 'scanning'

  /** Known once the manifest is found or made. */
  manifestId = ''

  constructor(private readonly clock: () => number = performance.now.bind(performance)) {}

  /** Adds or updates a file; answers its progress as it now is. */
  set(seq: number, change: Partial<FileProgress> & Pick<FileProgress, 'state'>): FileProgress {
    const before = this.files.get(seq)
    const next: FileProgress = {
      ...(before ?? { seq, relativePath: '', sizeBytes: 0, bytesDone: 0 }),
      ...change,
    }
    if (next.state === 'done' || next.state === 'duplicate') next.bytesDone = next.sizeBytes
    if (before) this.count(before, -1)
    this.count(next, 1)
    this.files.set(seq, next)
    return next
  }

  /**
   * Keeps the totals as files change, so a snapshot costs the same for ten files as for a
   * hundred thousand (it is taken at every file event).
   */
  private count(file: FileProgress, sign: 1 | -1): void {
    const { totals } = this
    totals.files += sign
    totals.bytes += sign * file.sizeBytes
    if (file.state === 'done') totals.done += sign
    else if (file.state === 'duplicate') totals.duplicates += sign
    else if (file.state === 'failed') totals.failed += sign
    if (file.state !== 'hashing')
      totals.bytesDone += sign * Math.min(file.bytesDone, file.sizeBytes)
  }

  get(seq: number): FileProgress | undefined {
    return this.files.get(seq)
  }

  /** Bytes handed to storage for a file just now. */
  sentBytes(bytes: number): void {
    const at = this.clock()
    this.bytesSent += bytes
    this.sent.push({ at, bytes })
    this.windowBytes += bytes
    this.forget(at)
  }

  /** Drops what fell out of the rate's window, keeping its sum. */
  private forget(now: number): void {
    while (this.sent.length > 0 && (this.sent[0]?.at ?? now) < now - RATE_WINDOW_MS) {
      this.windowBytes -= this.sent.shift()?.bytes ?? 0
    }
  }

  /** Every file that is not finished, for a summary of what is left. */
  unfinished(): FileProgress[] {
    return [...this.files.values()].filter((file) => !FINISHED.has(file.state))
  }

  all(): FileProgress[] {
    return [...this.files.values()]
  }

  snapshot(): UploadProgress {
    const { totals } = this
    const files = {
      total: totals.files,
      done: totals.done,
      duplicates: totals.duplicates,
      failed: totals.failed,
    }
    const bytes = { total: totals.bytes, done: totals.bytesDone }
    const now = this.clock()
    this.forget(now)
    const first = this.sent[0]
    const span = first ? Math.max(now - first.at, 1_000) : 0
    const rate = first ? (this.windowBytes / span) * 1000 : 0
    const left = bytes.total - bytes.done
    return {
      manifestId: this.manifestId,
      phase: this.phase,
      files,
      bytes,
      bytesSent: this.bytesSent,
      rate: Math.round(rate),
      etaSeconds: rate > 0 ? Math.ceil(left / rate) : left === 0 ? 0 : null,
    }
  }
}

import { createHash } from 'node:crypto'
import {
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  type ReadStream,
} from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { fetchToFile, mediaType } from './download'
import { MediaStoreError } from './errors'
import {
  entryPath,
  SHA256_HEX,
  shardDir,
  sniffContentType,
  TempFiles,
  writeBytes,
  writeHashed,
} from './files'
import { MEDIA_KINDS, MediaIndex, type EntryRow, type LruRow, type MediaKind } from './index-db'
import {
  MEDIA_OWNER_KINDS,
  type FetchOutcome,
  type FetchRecord,
  type MediaOwner,
  type MediaRef,
  type NewMediaRef,
} from './refs'
import { abortedError, SharedWork } from './shared'
import {
  DEFAULT_THUMBNAIL_SIZE,
  makeThumbnail,
  MAX_THUMBNAIL_SIZE,
  MIN_THUMBNAIL_SIZE,
} from './thumbnails'

export interface MediaStoreOptions {
  /** The store's folder, under `--home`; created when missing. */
  dir: string
  /** The size cap in bytes; least-recently-used entries that nothing needs go beyond it. */
  maxBytes: number
  /**
   * Whether the ledger still needs this file (inputs of in-flight runs, files of unfinished
   * uploads): a pinned entry is never evicted, even over the cap. Asked during eviction and
   * `usage()`, so it must answer quickly; a throw counts as pinned. `owners` reads, only when
   * called, which run outputs and assets the file is (see `recordRefs`).
   */
  isPinned?: (sha256: string, owners: () => readonly MediaOwner[]) => boolean
  fetch?: typeof fetch
  /** Epoch milliseconds. */
  clock?: () => number
  /**
   * An entry used this recently (written, its path handed out, a stream opened) is not evicted:
   * whoever got its path may not have read it yet. Default 5 seconds.
   */
  recentUseMs?: number
}

export interface StoredMedia {
  sha256: string
  size: number
  contentType: string
  /** Where the bytes are; valid while the entry is stored. */
  path: string
}

export interface MediaEntry extends StoredMedia {
  kind: MediaKind | null
  /** The caller's note of where the file came from (a run id, an asset id, a source sha256). */
  source: string | null
  createdAt: number
  lastUsedAt: number
}

export interface WriteOptions {
  kind?: MediaKind
  source?: string
  /** Refuse (TOO_LARGE) a file larger than this; default: the store's cap. */
  maxBytes?: number
  signal?: AbortSignal
}

export interface DownloadOptions extends WriteOptions {
  /** The sha256 the record promises: checked, and a stored copy is answered without the network. */
  expectedSha256?: string
  /** Overrides the media type the storage declares. */
  contentType?: string
}

export interface MediaUsage {
  bytes: number
  entries: number
  /** Bytes of entries `isPinned` says the ledger needs. */
  pinnedBytes: number
  maxBytes: number
  /** Above the cap because what is left is pinned or in use. */
  overCap: boolean
}

export interface EvictionReport {
  evicted: number
  freedBytes: number
  bytes: number
  overCap: boolean
}

/** What the last open found and repaired. */
export interface RecoveryReport {
  /** Temp files of crashed writers, removed. */
  tempsRemoved: number
  /** Files without an index row, adopted (named by their hash, so they can be trusted). */
  filesAdopted: number
  /** Index rows whose file is gone, dropped. */
  rowsDropped: number
  /** Files that are not named by a sha256 in their shard, removed. */
  strayRemoved: number
}

const DEFAULT_RECENT_USE_MS = 5_000
const EVICTION_PAGE = 128
const USAGE_PAGE = 512
const INDEX_FILE = 'index.db'

function checkSha256(value: unknown, what = 'sha256'): string {
  const sha256 = typeof value === 'string' ? value.toLowerCase() : ''
  if (!SHA256_HEX.test(sha256)) {
    throw new MediaStoreError('INVALID_ARGUMENT', `${what} must be 64 hexadecimal digits.`)
  }
  return sha256
}

function checkLimit(value: number, what: string): number {
  if (!(value >= 0)) {
    throw new MediaStoreError('INVALID_ARGUMENT', `${what} must be a number of bytes, 0 or more.`)
  }
  return value
}

function checkKind(kind: MediaKind | undefined): MediaKind | null {
  if (kind === undefined) return null
  if (!MEDIA_KINDS.includes(kind)) {
    throw new MediaStoreError('INVALID_ARGUMENT', `kind must be one of ${MEDIA_KINDS.join(', ')}.`)
  }
  return kind
}

function checkOwner(owner: MediaOwner): MediaOwner {
  if (!MEDIA_OWNER_KINDS.includes(owner.kind) || typeof owner.id !== 'string' || !owner.id) {
    throw new MediaStoreError(
      'INVALID_ARGUMENT',
      `An owner is a kind (${MEDIA_OWNER_KINDS.join(', ')}) and a record id.`,
    )
  }
  return { kind: owner.kind, id: owner.id }
}

function checkContentType(value: string): string {
  const type = mediaType(value)
  if (!type) {
    throw new MediaStoreError('INVALID_ARGUMENT', `"${value}" is not a media type like image/png.`)
  }
  return type
}

function checkUrl(url: string): void {
  let protocol = ''
  try {
    protocol = new URL(url).protocol
  } catch {
    // Reported below.
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new MediaStoreError('INVALID_ARGUMENT', 'The download URL must be an http(s) URL.')
  }
}

/** A local write that failed: the caller's limit, its signal, the disk, or its own source. */
function putError(error: unknown, signal: AbortSignal): MediaStoreError {
  if (error instanceof MediaStoreError) return error
  if (signal.aborted) return abortedError()
  const code = (error as { code?: unknown } | null)?.code
  return new MediaStoreError(
    'WRITE_FAILED',
    `The media store could not store the file${typeof code === 'string' ? ` (${code})` : ''}.`,
    {},
    { cause: error },
  )
}

function closedError(): MediaStoreError {
  return new MediaStoreError('CLOSED', 'The media store is closed.')
}

function notFound(sha256: string): MediaStoreError {
  return new MediaStoreError(
    'NOT_FOUND',
    `No file ${sha256} is in the media store: it was never stored or has been evicted.`,
    { sha256 },
  )
}

/**
 * The local, content-addressed store of outputs, assets and thumbnails: presigned URLs expire,
 * so what a finished run made is kept here and offline review shows real pixels.
 *
 * Files live at `<dir>/ab/abcdef…`, named by their sha256, so the same bytes are kept once and a
 * name can always be trusted. An SQLite index beside them records size, type and last use; the
 * files are the truth and the index is reconciled with them at every open. Every write goes
 * through `<dir>/tmp` and a rename, so a crash leaves either the whole file or a temp file that
 * the next open removes.
 */
export class MediaStore {
  readonly dir: string
  readonly recovered: RecoveryReport
  private maxBytes: number
  private readonly isPinned: (sha256: string, owners: () => readonly MediaOwner[]) => boolean
  private readonly fetchImpl: typeof fetch
  private readonly clock: () => number
  private readonly recentUseMs: number
  private readonly index: MediaIndex
  private readonly temps: TempFiles
  private readonly shared = new SharedWork()
  /** Open read streams and work in progress per entry: never evicted under a reader. */
  private readonly leases = new Map<string, number>()
  private readonly trashing = new Set<Promise<void>>()
  private bytes = 0
  private entries = 0
  private lastStamp: number
  private pass: Promise<EvictionReport> | null = null
  private queuedPass: Promise<EvictionReport> | null = null
  private closed = false
  private closing: Promise<void> | null = null

  constructor(options: MediaStoreOptions) {
    this.dir = options.dir
    this.maxBytes = checkLimit(options.maxBytes, 'maxBytes')
    this.isPinned = options.isPinned ?? (() => false)
    this.fetchImpl = options.fetch ?? fetch
    this.clock = options.clock ?? Date.now
    this.recentUseMs = options.recentUseMs ?? DEFAULT_RECENT_USE_MS
    mkdirSync(this.dir, { recursive: true })
    this.temps = new TempFiles(this.dir)
    const tempsRemoved = this.temps.cleanStale()
    this.index = new MediaIndex(join(this.dir, INDEX_FILE))
    try {
      this.recovered = { tempsRemoved, ...this.reconcile() }
    } catch (error) {
      this.index.close()
      throw error
    }
    ;({ bytes: this.bytes, entries: this.entries } = this.index.totals())
    this.lastStamp = this.index.newestUse()
  }

  /**
   * Brings the index and the folder back in line, one shard at a time so that memory stays
   * bounded by the largest shard, not the store.
   */
  private reconcile(): Omit<RecoveryReport, 'tempsRemoved'> {
    const report = { filesAdopted: 0, rowsDropped: 0, strayRemoved: 0 }
    // A shard with neither a folder nor a row has nothing to bring in line: most of them, in a
    // young store, and every open (each `atelier sync`) would otherwise pay 256 transactions.
    const folders = new Set(readdirSync(this.dir))
    const indexed = this.index.prefixes()
    for (let shard = 0; shard < 256; shard++) {
      const prefix = shard.toString(16).padStart(2, '0')
      if (!folders.has(prefix) && !indexed.has(prefix)) continue
      const folder = join(this.dir, prefix)
      let names: string[] = []
      try {
        names = readdirSync(folder)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
      this.index.transaction(() => {
        const rows = new Set(this.index.shard(prefix))
        for (const name of names) {
          if (rows.delete(name)) continue
          const file = join(folder, name)
          const stat = lstatSync(file, { throwIfNoEntry: false })
          // Gone since the listing: another process sharing the folder evicted it.
          if (!stat) continue
          if (!SHA256_HEX.test(name) || !name.startsWith(prefix) || !stat.isFile()) {
            rmSync(file, { recursive: true, force: true })
            report.strayRemoved += 1
            continue
          }
          // Its writer fsynced it and named it by its hash before the crash took the row.
          const at = Math.floor(stat.mtimeMs)
          this.index.upsert({
            sha256: name,
            size: stat.size,
            content_type: sniffContentType(file),
            kind: null,
            source: null,
            created_at: at,
            last_used_at: at,
          })
          report.filesAdopted += 1
        }
        for (const missing of rows) {
          this.index.delete(missing)
          report.rowsDropped += 1
        }
      })
    }
    return report
  }

  // ── reading ──────────────────────────────────────────────────────────────────────────────

  has(sha256: string): boolean {
    this.assertOpen()
    const key = sha256.toLowerCase()
    return SHA256_HEX.test(key) && this.index.get(key) !== undefined
  }

  /** The entry without marking it used (for listings and checks). */
  stat(sha256: string): MediaEntry | null {
    this.assertOpen()
    const row = this.index.get(checkSha256(sha256))
    return row ? this.toEntry(row) : null
  }

  /** The file's path, marking the entry used. Throws NOT_FOUND when it is not stored. */
  path(sha256: string): string {
    this.assertOpen()
    const key = checkSha256(sha256)
    if (!this.index.touch(key, this.stamp())) throw notFound(key)
    return entryPath(this.dir, key)
  }

  /**
   * A read stream of the file, marking the entry used; the entry is not evicted until the stream
   * closes, so destroy it when done.
   */
  open(sha256: string): ReadStream {
    const file = this.path(sha256)
    const key = sha256.toLowerCase()
    this.lease(key)
    const stream = createReadStream(file)
    stream.once('close', () => {
      this.release(key)
    })
    return stream
  }

  // ── writing ──────────────────────────────────────────────────────────────────────────────

  /**
   * Downloads a URL into the store, streaming it to disk while hashing it. The same content is
   * stored once; concurrent downloads of the same URL or expected hash share one transfer.
   */
  async download(url: string, options: DownloadOptions = {}): Promise<StoredMedia> {
    this.assertOpen()
    checkUrl(url)
    const expected =
      options.expectedSha256 === undefined
        ? null
        : checkSha256(options.expectedSha256, 'expectedSha256')
    const contentType =
      options.contentType === undefined ? null : checkContentType(options.contentType)
    const limit = checkLimit(options.maxBytes ?? this.maxBytes, 'maxBytes')
    const meta = { kind: checkKind(options.kind), source: options.source ?? null }
    if (expected) {
      const stored = this.reuse(expected, contentType, meta)
      if (stored) return stored
    }
    const keys = expected ? [`sha256:${expected}`] : [`url:${url}`]
    const stored = await this.shared.run(
      keys,
      async (signal) => {
        const temp = this.temps.create('download')
        try {
          const fetched = await fetchToFile(this.fetchImpl, url, temp, limit, signal)
          if (expected && fetched.sha256 !== expected) {
            throw new MediaStoreError(
              'CHECKSUM_MISMATCH',
              `The download's sha256 is ${fetched.sha256}, not the ${expected} its record promised; nothing was kept.`,
              { sha256: expected },
            )
          }
          const type = contentType ?? fetched.contentType ?? 'application/octet-stream'
          return await this.settle(this.commit(temp, fetched.sha256, fetched.size, type, meta))
        } catch (error) {
          throw this.closed ? closedError() : error
        } finally {
          this.temps.release(temp)
        }
      },
      options.signal,
    )
    // A caller that joined another's transfer may have a tighter limit, or more to say about it.
    if (stored.size > limit) {
      throw new MediaStoreError(
        'TOO_LARGE',
        `The file is ${stored.size} bytes, more than the limit of ${limit} bytes.`,
        { sha256: stored.sha256 },
      )
    }
    this.assertOpen()
    const told = contentType !== null || meta.kind !== null || meta.source !== null
    return (told ? this.reuse(stored.sha256, contentType, meta) : null) ?? stored
  }

  /** Stores a file made locally, from bytes or streamed from a readable (never buffered). */
  async put(
    data: Uint8Array | AsyncIterable<Uint8Array | string>,
    contentType: string,
    options: WriteOptions = {},
  ): Promise<StoredMedia> {
    this.assertOpen()
    const type = checkContentType(contentType)
    const limit = checkLimit(options.maxBytes ?? this.maxBytes, 'maxBytes')
    const meta = { kind: checkKind(options.kind), source: options.source ?? null }
    const tooLarge = (size: number) =>
      new MediaStoreError(
        'TOO_LARGE',
        `The file is ${size} bytes or more, more than the limit of ${limit} bytes.`,
      )
    if (data instanceof Uint8Array) {
      if (data.byteLength > limit) throw tooLarge(data.byteLength)
      const sha256 = createHash('sha256').update(data).digest('hex')
      return this.reuse(sha256, type, meta) ?? (await this.putBytes(data, sha256, type, meta))
    }
    const temp = this.temps.create('put')
    const signal = options.signal ?? new AbortController().signal
    try {
      const written = await writeHashed(data, temp, limit, tooLarge, signal).catch(
        (error: unknown) => {
          throw putError(error, signal)
        },
      )
      return await this.settle(this.commit(temp, written.sha256, written.size, type, meta))
    } finally {
      this.temps.release(temp)
    }
  }

  private async putBytes(
    bytes: Uint8Array,
    sha256: string,
    contentType: string,
    meta: EntryMeta,
    onCommit?: (row: EntryRow) => void,
  ): Promise<StoredMedia> {
    const temp = this.temps.create('put')
    try {
      await writeBytes(temp, bytes).catch((error: unknown) => {
        throw putError(error, new AbortController().signal)
      })
      const row = this.commit(temp, sha256, bytes.byteLength, contentType, meta)
      onCommit?.(row)
      return await this.settle(row)
    } finally {
      this.temps.release(temp)
    }
  }

  private reuse(sha256: string, contentType: string | null, meta: EntryMeta): StoredMedia | null {
    const row = this.reuseRow(sha256, contentType, meta)
    return row ? this.toStored(row) : null
  }

  /** An already stored copy, marked used and improved with what this writer knows. */
  private reuseRow(sha256: string, contentType: string | null, meta: EntryMeta): EntryRow | null {
    const row = this.index.get(sha256)
    if (!row || !existsSync(entryPath(this.dir, sha256))) return null
    this.index.upsert({
      ...row,
      content_type: contentType ?? row.content_type,
      kind: meta.kind,
      source: meta.source,
      last_used_at: this.stamp(),
    })
    return this.index.get(sha256) ?? row
  }

  /**
   * Moves a finished temp file into place and records it, in one synchronous step: no other work
   * of this process can run between the rename and the row.
   */
  private commit(
    temp: string,
    sha256: string,
    size: number,
    contentType: string,
    meta: EntryMeta,
  ): EntryRow {
    this.assertOpen()
    const reused = this.reuseRow(sha256, contentType, meta)
    if (reused) return reused
    const known = this.index.get(sha256) !== undefined
    try {
      mkdirSync(shardDir(this.dir, sha256), { recursive: true })
      renameSync(temp, entryPath(this.dir, sha256))
    } catch (error) {
      throw new MediaStoreError(
        'WRITE_FAILED',
        `The media store could not move a file into place (${(error as { code?: string }).code ?? 'unknown'}).`,
        { sha256 },
        { cause: error },
      )
    }
    const now = this.stamp()
    const row: EntryRow = {
      sha256,
      size,
      content_type: contentType,
      kind: meta.kind,
      source: meta.source,
      created_at: Math.floor(this.clock()),
      last_used_at: now,
    }
    this.index.upsert(row)
    if (!known) {
      this.bytes += size
      this.entries += 1
    }
    return this.index.get(sha256) ?? row
  }

  /** After a write: evict down to the cap, holding the new entry so it is there on return. */
  private async settle(row: EntryRow): Promise<StoredMedia> {
    this.lease(row.sha256)
    try {
      // The file is stored whatever eviction meets (a busy index): the next pass catches up.
      await this.evict().catch(() => undefined)
    } finally {
      this.release(row.sha256)
    }
    return this.toStored(row)
  }

  // ── thumbnails ───────────────────────────────────────────────────────────────────────────

  /**
   * A WebP thumbnail of a stored image that fits inside `size` pixels, stored as its own entry and
   * made once: later calls answer the same entry, even after the full-size image was evicted.
   * With `animated`, an animated image gives an animated WebP (bounded: see `makeThumbnail`),
   * kept apart from its still thumbnail; a still image gives the same still either way.
   */
  async thumbnail(
    sha256: string,
    options: { size?: number; animated?: boolean } = {},
  ): Promise<StoredMedia> {
    this.assertOpen()
    const source = checkSha256(sha256)
    const size = options.size ?? DEFAULT_THUMBNAIL_SIZE
    const animated = options.animated ?? false
    if (!Number.isInteger(size) || size < MIN_THUMBNAIL_SIZE || size > MAX_THUMBNAIL_SIZE) {
      throw new MediaStoreError(
        'INVALID_ARGUMENT',
        `A thumbnail size is a whole number of pixels from ${MIN_THUMBNAIL_SIZE} to ${MAX_THUMBNAIL_SIZE}.`,
      )
    }
    const made = this.madeThumbnail(source, size, animated)
    if (made) return made
    const key = `thumbnail:${source}:${size}${animated ? ':animated' : ''}`
    return this.shared.run([key], async () => {
      if (!this.index.get(source)) throw notFound(source)
      this.lease(source)
      let bytes: Buffer
      try {
        bytes = await makeThumbnail(entryPath(this.dir, source), size, source, { animated })
      } finally {
        this.release(source)
      }
      this.assertOpen()
      const sha = createHash('sha256').update(bytes).digest('hex')
      const meta: EntryMeta = { kind: 'thumbnail', source }
      const link = (row: EntryRow) => {
        this.index.link(source, size, row.sha256, animated)
      }
      const reused = this.reuseRow(sha, 'image/webp', meta)
      if (reused) {
        link(reused)
        return this.toStored(reused)
      }
      return this.putBytes(bytes, sha, 'image/webp', meta, link)
    })
  }

  private madeThumbnail(source: string, size: number, animated: boolean): StoredMedia | null {
    const thumbnail = this.index.thumbnailOf(source, size, animated)
    if (!thumbnail) return null
    const row = this.index.get(thumbnail)
    if (!row) return null
    this.index.touch(thumbnail, this.stamp())
    return this.toStored(row)
  }

  // ── owners ───────────────────────────────────────────────────────────────────────────────

  /**
   * Records which files a run output or an asset is (by position; a position seen again is
   * replaced) and, when given, how its fetch went, in one transaction. The files need not be
   * stored any more: a ref outlives eviction, so offline review still finds the thumbnail.
   */
  recordRefs(owner: MediaOwner, refs: readonly NewMediaRef[], outcome?: FetchOutcome): void {
    this.assertOpen()
    const checked = checkOwner(owner)
    const rows = refs.map((ref) => {
      if (!Number.isInteger(ref.position) || ref.position < 0) {
        throw new MediaStoreError(
          'INVALID_ARGUMENT',
          'A ref position is a whole number, 0 or more.',
        )
      }
      if (typeof ref.role !== 'string' || ref.role === '') {
        throw new MediaStoreError('INVALID_ARGUMENT', 'A ref role names where the file sits.')
      }
      return {
        position: ref.position,
        role: ref.role,
        sha256: checkSha256(ref.sha256),
        contentType: checkContentType(ref.contentType),
      }
    })
    if (outcome?.state === 'failed' && !(outcome.retryAt >= 0)) {
      throw new MediaStoreError('INVALID_ARGUMENT', 'retryAt is epoch milliseconds, 0 or more.')
    }
    this.index.refs.record(checked, rows, outcome ?? null, Math.floor(this.clock()))
  }

  /** The files of an owner in record order, with their thumbnails of `thumbnailSize` pixels. */
  refs(owner: MediaOwner, options: { thumbnailSize?: number } = {}): MediaRef[] {
    this.assertOpen()
    return this.index.refs.of(checkOwner(owner), options.thumbnailSize ?? DEFAULT_THUMBNAIL_SIZE)
  }

  /** The files a run made, as its output lists them. */
  forRun(runId: string, options: { thumbnailSize?: number } = {}): MediaRef[] {
    return this.refs({ kind: 'run-output', id: runId }, options)
  }

  /** The file an asset holds (or its preview, for an asset too large to keep whole). */
  forAsset(assetId: string, options: { thumbnailSize?: number } = {}): MediaRef[] {
    return this.refs({ kind: 'asset', id: assetId }, options)
  }

  /** The run outputs and assets that are this file. */
  owners(sha256: string): MediaOwner[] {
    this.assertOpen()
    return this.index.refs.owners(checkSha256(sha256))
  }

  /** How fetching this owner went last; null when it was never tried. */
  fetchRecord(owner: MediaOwner): FetchRecord | null {
    this.assertOpen()
    return this.index.refs.fetch(checkOwner(owner))
  }

  // ── the cap ──────────────────────────────────────────────────────────────────────────────

  /** Applies a new cap at once, evicting down to it. */
  setMaxBytes(maxBytes: number): Promise<EvictionReport> {
    this.assertOpen()
    this.maxBytes = checkLimit(maxBytes, 'maxBytes')
    return this.evict()
  }

  /**
   * Deletes least-recently-used entries that nothing needs until the store is within its cap.
   * One pass runs at a time; a call during a pass gets the next one, which sees its write.
   */
  evict(): Promise<EvictionReport> {
    if (this.closed) return Promise.resolve(this.report(0, 0))
    if (!this.pass) {
      const pass = this.evictionPass().finally(() => {
        if (this.pass === pass) this.pass = null
      })
      this.pass = pass
      return pass
    }
    this.queuedPass ??= this.pass
      .catch(() => undefined)
      .then(() => {
        this.queuedPass = null
        return this.evict()
      })
    return this.queuedPass
  }

  private async evictionPass(): Promise<EvictionReport> {
    let evicted = 0
    let freedBytes = 0
    let afterUsed = -1
    let afterSha = ''
    // Each page is read and acted on synchronously, so a use that lands between pages is seen
    // by the next page's read, never lost between a read and a delete.
    while (!this.closed && this.bytes > this.maxBytes) {
      const page = this.index.page(afterUsed, afterSha, EVICTION_PAGE)
      const last = page.at(-1)
      if (!last) break
      const recent = this.clock() - this.recentUseMs
      for (const row of page) {
        if (this.bytes <= this.maxBytes) break
        if (this.leases.has(row.sha256) || row.last_used_at > recent) continue
        if (this.pinned(row.sha256)) continue
        if (this.remove(row)) {
          evicted += 1
          freedBytes += row.size
        }
      }
      ;({ last_used_at: afterUsed, sha256: afterSha } = last)
      await nextTurn()
    }
    return this.report(evicted, freedBytes)
  }

  private report(evicted: number, freedBytes: number): EvictionReport {
    return { evicted, freedBytes, bytes: this.bytes, overCap: this.bytes > this.maxBytes }
  }

  /**
   * Moves the file out of the store first (a rename, instant) and deletes it in the background:
   * a writer of the same bytes that comes next finds neither row nor file, never half of one.
   */
  private remove(row: LruRow): boolean {
    const file = entryPath(this.dir, row.sha256)
    const trash = this.temps.create('evicted')
    try {
      renameSync(file, trash)
    } catch (error) {
      this.temps.release(trash, false)
      // A file held open elsewhere (Windows) stays for a later pass.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false
    }
    this.index.delete(row.sha256)
    this.bytes -= row.size
    this.entries -= 1
    const removal = rm(trash, { force: true })
      .catch(() => undefined)
      .finally(() => {
        this.temps.release(trash, false)
        this.trashing.delete(removal)
      })
    this.trashing.add(removal)
    return true
  }

  private pinned(sha256: string): boolean {
    try {
      return this.isPinned(sha256, () => this.index.refs.owners(sha256))
    } catch {
      return true
    }
  }

  /** Totals and what the ledger holds; walks the index in small pages between other work. */
  async usage(): Promise<MediaUsage> {
    this.assertOpen()
    let pinnedBytes = 0
    let afterUsed = -1
    let afterSha = ''
    for (;;) {
      this.assertOpen()
      const page = this.index.page(afterUsed, afterSha, USAGE_PAGE)
      for (const row of page) if (this.pinned(row.sha256)) pinnedBytes += row.size
      const last = page.at(-1)
      if (!last || page.length < USAGE_PAGE) break
      ;({ last_used_at: afterUsed, sha256: afterSha } = last)
      await nextTurn()
    }
    return {
      bytes: this.bytes,
      entries: this.entries,
      pinnedBytes,
      maxBytes: this.maxBytes,
      overCap: this.bytes > this.maxBytes,
    }
  }

  // ── life cycle ───────────────────────────────────────────────────────────────────────────

  /** Aborts downloads in flight, lets them clean up, then closes the index. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closed = true
      this.closing = (async () => {
        await this.shared.abortAll()
        await this.pass?.catch(() => undefined)
        await Promise.allSettled([...this.trashing])
        this.index.close()
      })()
    }
    return this.closing
  }

  private assertOpen(): void {
    if (this.closed) throw closedError()
  }

  /** Strictly increasing, so two uses in the same millisecond still have an order. */
  private stamp(): number {
    this.lastStamp = Math.max(Math.floor(this.clock()), this.lastStamp + 1)
    return this.lastStamp
  }

  private lease(sha256: string): void {
    this.leases.set(sha256, (this.leases.get(sha256) ?? 0) + 1)
  }

  private release(sha256: string): void {
    const count = (this.leases.get(sha256) ?? 1) - 1
    if (count > 0) this.leases.set(sha256, count)
    else this.leases.delete(sha256)
  }

  private toStored(row: EntryRow): StoredMedia {
    return {
      sha256: row.sha256,
      size: row.size,
      contentType: row.content_type,
      path: entryPath(this.dir, row.sha256),
    }
  }

  private toEntry(row: EntryRow): MediaEntry {
    return {
      ...this.toStored(row),
      kind: row.kind,
      source: row.source,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
    }
  }
}

interface EntryMeta {
  kind: MediaKind | null
  source: string | null
}

/**
 * Outputs and thumbnails offline: presigned URLs expire, so the pixels of finished runs and of
 * assets are downloaded into the media store, where they stay under `--home` by their sha256.
 *
 * Decisions, and why:
 *
 * - What a media file is: in a run's `output`, any object with an http(s) `url` and an image/,
 *   video/ or audio/ `content_type` — the contract's file shape (`{url, content_type, width,
 *   height, sha256}`, as `images[]`, `video`, or a flow output of that shape). Its `sha256`, when
 *   given, is checked and lets a file already stored (the same bytes from another run, or an
 *   uploaded asset) be used without the network. Other strings that look like URLs are not
 *   fetched: they are words, or inputs.
 * - Assets: image assets that are `ready`. Their content (`url`, verified against the asset's
 *   sha256) is kept whole up to `maxAssetBytes`; beyond that only the service's preview
 *   (`thumbnail_url`) is fetched. The WebP thumbnail lands in `assets.thumbnail_sha256`.
 * - Thumbnails are made for `image/*` files, which covers the sandbox's "videos" (animated WebP
 *   or GIF: sharp reads their first frame). `video/*` files (MP4, WebM) get none: libvips has no
 *   video decoder. They are counted in `withoutThumbnail`, not as failures.
 * - Where it is recorded: the media store's own index (`refs`: owner, position, role, sha256,
 *   content type; `fetches`: done or failed with a retry time), read back with `forRun` and
 *   `forAsset`. A run is done once each of its files was stored; eviction later does not undo
 *   that, or every pass would download what the cap had just made room from (the thumbnail,
 *   small and recent, usually stays). `fetchRun`/`fetchAsset` fetch one record again on demand.
 * - Which records: succeeded runs and ready image assets of the mirror, newest first, at most
 *   `limit` of each a pass. Looking for them reads the newest `scanBudget` records and then
 *   `scanBudget` more from where the previous pass stopped looking, so an old history is reached
 *   over several passes while a run that just finished is fetched at the next one.
 * - Expired URLs: a URL whose `expires_at` has passed is not tried; one the storage refuses (403,
 *   or 404 for a signature it no longer knows) is. Either way the record is read again with a
 *   GET, written to the mirror (fresh URLs for everyone), and its files tried once more.
 * - Failures: one file failing never stops the others. A failure that may pass (5xx, 429, a cut
 *   download) is tried at the next pass; one that will not (404, checksum, too large) waits,
 *   from a minute doubling up to a day, so a few broken records cannot take every pass's place.
 * - Offline: the first network failure ends the pass at once as `offline`, aborting what is in
 *   flight; whatever was stored stays, and nothing is marked failed for it.
 * - Pins (`ledgerPins`): what the ledger still needs is never evicted. The ledger records no
 *   output sha256s today, so a file is pinned when it is the output of a run an open intent is
 *   waiting on (the executor still has to read it) or that a succeeded intent made for a flow
 *   run which still has open intents (later nodes read it); when an open intent's request names
 *   it (its sha256 inside any string, or the id of its run or asset); or when an unfinished
 *   upload manifest still has to send these bytes.
 */
import type { Asset, Run } from '../../src-shared/api'
import type { Ledger, Mirror } from '../db'
import {
  DEFAULT_THUMBNAIL_SIZE,
  isMediaStoreError,
  redactUrl,
  type FetchOutcome,
  type MediaOwner,
  type MediaStore,
  type NewMediaRef,
  type StoredMedia,
} from '../media-store'
import { isServiceError, type ServiceClient } from '../service'

export interface MediaFetcherOptions {
  client: ServiceClient
  mirror: Mirror
  media: MediaStore
  orgId: string
  /** Downloads in flight at once; default 3. */
  concurrency?: number
  /** The thumbnail's longest side in pixels; default the store's (256). */
  thumbnailSize?: number
  /** Assets larger than this get their preview, not their content, kept; default 64 MiB. */
  maxAssetBytes?: number
  /** Records looked at from the newest, and again from where the last pass stopped; default 500. */
  scanBudget?: number
  /** Epoch milliseconds: what expiry times and retry waits are compared with. */
  clock?: () => number
}

export interface MediaProgress {
  /** Files finished this pass (stored, skipped or failed). */
  done: number
  /** Files this pass means to look at. */
  total: number
  /** Bytes downloaded so far. */
  bytes: number
}

export interface MediaPassOptions {
  /** Most runs and most assets a pass takes; default 50 of each. */
  limit?: number
  signal?: AbortSignal
  onProgress?: (progress: MediaProgress) => void
}

export type MediaPassState = 'ok' | 'offline' | 'aborted'

export interface MediaFailure {
  owner: MediaOwner
  /** Origin and path only: a presigned query is a credential. */
  url: string
  code: string
  message: string
}

export interface MediaPassReport {
  state: MediaPassState
  /** Plain words when the state is not ok. */
  message?: string
  /** Files downloaded over the network. */
  downloaded: number
  /** Bytes of those files. */
  bytes: number
  /** Files already stored: nothing was downloaded for them. */
  skipped: number
  /** Stored files no thumbnail could be made of (video/*, audio, an undecodable image). */
  withoutThumbnail: number
  /** Records read again for fresh URLs. */
  refreshed: number
  /** Runs and assets looked at. */
  records: number
  failed: MediaFailure[]
}

/** One media file of a record, where it sits and how to get it. */
export interface RecordMedia {
  position: number
  role: string
  url: string
  /** The type the record declares; null when it does not (an asset preview). */
  contentType: string | null
  sha256: string | null
  /** When the URL expires (epoch ms), when the record says. */
  expiresAt: number | null
}

const DEFAULT_CONCURRENCY = 3
const DEFAULT_LIMIT = 50
const DEFAULT_SCAN_BUDGET = 500
const DEFAULT_MAX_ASSET_BYTES = 64 * 1024 * 1024
const SCAN_PAGE = 100
/** A URL this close to its expiry would likely die on the way: treated as expired. */
const EXPIRY_MARGIN_MS = 30_000
const FIRST_WAIT_MS = 60_000
const LONGEST_WAIT_MS = 24 * 60 * 60 * 1000
const MAX_DEPTH = 8
const MAX_FILES_PER_RECORD = 256
const SHA256_HEX = /^[0-9a-f]{64}$/
const MEDIA_TYPE = /^(?:image|video|audio)\/[a-z0-9!#$&^_.+-]+$/

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function httpUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null
  try {
    const { protocol } = new URL(value)
    return protocol === 'http:' || protocol === 'https:' ? value : null
  } catch {
    return null
  }
}

function mediaTypeOf(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const essence = value.split(';')[0]?.trim().toLowerCase() ?? ''
  return MEDIA_TYPE.test(essence) ? essence : null
}

function instant(value: unknown): number | null {
  if (typeof value !== 'string') return null
  const ms = Date.parse(value)
  return Number.isFinite(ms) ? ms : null
}

function sha256Of(value: unknown): string | null {
  const sha = typeof value === 'string' ? value.toLowerCase() : ''
  return SHA256_HEX.test(sha) ? sha : null
}

/**
 * The media files of a run's output, in the order the output lists them: every object with an
 * http(s) `url` and an image/, video/ or audio/ `content_type`. Its insides are not searched.
 */
export function outputMedia(output: unknown): RecordMedia[] {
  const found: RecordMedia[] = []
  const walk = (value: unknown, path: readonly string[]) => {
    if (found.length >= MAX_FILES_PER_RECORD || path.length > MAX_DEPTH) return
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        walk(item, [...path, String(index)])
      })
      return
    }
    if (!isRecord(value)) return
    const url = httpUrl(value.url)
    const contentType = mediaTypeOf(value.content_type)
    if (url !== null && contentType !== null) {
      found.push({
        position: found.length,
        role: path.length > 0 ? path.join('.') : 'output',
        url,
        contentType,
        sha256: sha256Of(value.sha256),
        expiresAt: instant(value.expires_at),
      })
      return
    }
    for (const [key, child] of Object.entries(value)) walk(child, [...path, key])
  }
  walk(output, [])
  return found
}

/** What of an asset is kept: its content, or its preview when too large; null for none. */
export function assetMedia(asset: Asset, maxAssetBytes: number): RecordMedia | null {
  if (asset.status_code !== 'ready' || asset.media_type !== 'image' || asset.deleted_at !== null) {
    return null
  }
  const content = httpUrl(asset.url)
  if (content !== null && asset.size_bytes <= maxAssetBytes) {
    return {
      position: 0,
      role: 'content',
      url: content,
      contentType: mediaTypeOf(asset.content_type),
      sha256: sha256Of(asset.sha256),
      expiresAt: instant(asset.url_expires_at),
    }
  }
  const preview = httpUrl(asset.thumbnail_url)
  if (preview === null) return null
  // The contract gives the preview no expiry of its own, nor a hash or type.
  return {
    position: 0,
    role: 'preview',
    url: preview,
    contentType: null,
    sha256: null,
    expiresAt: null,
  }
}

type Task =
  | { owner: MediaOwner & { kind: 'run-output' }; record: Run; files: RecordMedia[] }
  | { owner: MediaOwner & { kind: 'asset' }; record: Asset; files: RecordMedia[] }

/** Where a walk of the mirror stopped, so the next pass looks further back. */
interface Sweep {
  after: string | null
}

/** The pass is over for everyone: offline, aborted, or the store closed. */
class Stop extends Error {
  constructor(
    readonly state: Exclude<MediaPassState, 'ok'>,
    message: string,
  ) {
    super(message)
  }
}

const OFFLINE_MESSAGE =
  'The service or its storage cannot be reached, so the media pass stopped: what was already stored is kept. It goes on at the next pass.'

function isNetworkFailure(error: unknown): boolean {
  if (isServiceError(error)) {
    return error.status === 0 && (error.code === 'NETWORK_ERROR' || error.code === 'TIMEOUT')
  }
  // No status: the storage never answered, or the body was cut off on the way.
  return (
    isMediaStoreError(error) &&
    error.code === 'DOWNLOAD_FAILED' &&
    error.status === undefined &&
    error.retryable
  )
}

/** The storage refused the URL as stale: a fresh one may work. */
function isStaleUrl(error: unknown): boolean {
  return (
    isMediaStoreError(error) &&
    (error.code === 'URL_EXPIRED' || (error.code === 'DOWNLOAD_FAILED' && error.status === 404))
  )
}

/** A failure that may pass by itself: try again at the next pass rather than waiting. */
function isPassing(error: unknown): boolean {
  if (isMediaStoreError(error)) return error.retryable || error.code === 'WRITE_FAILED'
  if (isServiceError(error)) return error.status === 429 || error.status >= 500
  return false
}

function codeOf(error: unknown): string {
  if (isMediaStoreError(error) || isServiceError(error)) return error.code
  return 'FAILED'
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function emptyReport(): MediaPassReport {
  return {
    state: 'ok',
    downloaded: 0,
    bytes: 0,
    skipped: 0,
    withoutThumbnail: 0,
    refreshed: 0,
    records: 0,
    failed: [],
  }
}

/** One pass's shared state: the report, progress, and the signal that stops every download. */
class Pass {
  readonly report = emptyReport()
  readonly controller = new AbortController()
  readonly release: () => void
  private done = 0
  private total = 0
  private stop: Stop | null = null

  constructor(
    private readonly onProgress: ((progress: MediaProgress) => void) | undefined,
    signal: AbortSignal | undefined,
  ) {
    const abort = () => {
      this.end(new Stop('aborted', 'The media pass was stopped; the next one goes on from there.'))
    }
    if (signal?.aborted) abort()
    else signal?.addEventListener('abort', abort, { once: true })
    this.release = () => {
      signal?.removeEventListener('abort', abort)
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  get stopped(): boolean {
    return this.stop !== null
  }

  end(stop: Stop): void {
    if (this.stop) return
    this.stop = stop
    this.controller.abort()
  }

  plan(files: number): void {
    this.total += files
    this.emit()
  }

  fileDone(): void {
    this.done += 1
    this.emit()
  }

  private emit(): void {
    try {
      this.onProgress?.({ done: this.done, total: this.total, bytes: this.report.bytes })
    } catch {
      // A progress bar that throws must not stop the downloads.
    }
  }

  finish(): MediaPassReport {
    this.release()
    if (this.stop) {
      this.report.state = this.stop.state
      this.report.message = this.stop.message
    }
    return this.report
  }
}

/**
 * Downloads the media of finished runs and of assets into the media store, makes their
 * thumbnails and records which record each file is. See the module comment for the rules.
 */
export class MediaFetcher {
  private readonly client: ServiceClient
  private readonly mirror: Mirror
  private readonly media: MediaStore
  private readonly orgId: string
  private readonly concurrency: number
  private readonly thumbnailSize: number
  private readonly maxAssetBytes: number
  private readonly scanBudget: number
  private readonly clock: () => number
  private readonly sweeps = { runs: { after: null } as Sweep, assets: { after: null } as Sweep }
  private running: Promise<MediaPassReport> | null = null

  constructor(options: MediaFetcherOptions) {
    this.client = options.client
    this.mirror = options.mirror
    this.media = options.media
    this.orgId = options.orgId
    this.concurrency = whole(options.concurrency ?? DEFAULT_CONCURRENCY, 'concurrency')
    this.thumbnailSize = options.thumbnailSize ?? DEFAULT_THUMBNAIL_SIZE
    this.maxAssetBytes = options.maxAssetBytes ?? DEFAULT_MAX_ASSET_BYTES
    this.scanBudget = whole(options.scanBudget ?? DEFAULT_SCAN_BUDGET, 'scanBudget')
    this.clock = options.clock ?? Date.now
  }

  /**
   * One pass over the mirror: runs first, then assets, newest first. A pass asked for while one
   * runs joins it (and its own options are not used).
   */
  pass(options: MediaPassOptions = {}): Promise<MediaPassReport> {
    if (!this.running) {
      const running = this.runPass(options).finally(() => {
        if (this.running === running) this.running = null
      })
      this.running = running
    }
    return this.running
  }

  /**
   * One run's outputs, whatever an earlier pass decided (after eviction, say). A run the mirror
   * lacks is read from the service first.
   */
  async fetchRun(runId: string, options: Omit<MediaPassOptions, 'limit'> = {}) {
    return this.fetchOne({ kind: 'run-output', id: runId }, options)
  }

  /** One asset's content and thumbnail, whatever an earlier pass decided. */
  async fetchAsset(assetId: string, options: Omit<MediaPassOptions, 'limit'> = {}) {
    return this.fetchOne({ kind: 'asset', id: assetId }, options)
  }

  private async runPass(options: MediaPassOptions): Promise<MediaPassReport> {
    const limit = whole(options.limit ?? DEFAULT_LIMIT, 'limit')
    const pass = new Pass(options.onProgress, options.signal)
    if (pass.stopped) return pass.finish()
    let tasks: Task[]
    try {
      tasks = [...this.runTasks(limit), ...this.assetTasks(limit)]
    } catch (error) {
      pass.release()
      throw error
    }
    await this.work(tasks, pass)
    return pass.finish()
  }

  private async fetchOne(
    owner: MediaOwner,
    options: Omit<MediaPassOptions, 'limit'>,
  ): Promise<MediaPassReport> {
    const pass = new Pass(options.onProgress, options.signal)
    if (pass.stopped) return pass.finish()
    try {
      const task = await this.taskFor(owner, pass)
      if (task) await this.work([task], pass)
    } catch (error) {
      this.settleError(error, pass, owner, '')
    }
    return pass.finish()
  }

  private async taskFor(owner: MediaOwner, pass: Pass): Promise<Task | null> {
    // The mirror may not have seen the record finish yet: the service is asked then.
    if (owner.kind === 'run-output') {
      let run = this.mirror.runs.get(owner.id)
      if (run?.status_code !== 'succeeded') run = await this.readRun(owner.id, pass)
      if (run.status_code !== 'succeeded') return null
      return {
        owner: { kind: 'run-output', id: run.id },
        record: run,
        files: outputMedia(run.output),
      }
    }
    let asset = this.mirror.assets.get(owner.id)
    if (asset?.status_code !== 'ready') asset = await this.readAsset(owner.id, pass)
    const file = assetMedia(asset, this.maxAssetBytes)
    return { owner: { kind: 'asset', id: asset.id }, record: asset, files: file ? [file] : [] }
  }

  // ── finding what to fetch ────────────────────────────────────────────────────────────────

  /** Whether a record still has something to fetch now, by its fetch record. */
  private wanted(owner: MediaOwner): boolean {
    const record = this.media.fetchRecord(owner)
    if (!record) return true
    return record.state === 'failed' && record.retryAt <= this.clock()
  }

  private runTasks(limit: number): Task[] {
    return this.scan(
      (after) =>
        this.mirror.runs.list({ orgId: this.orgId, status: 'succeeded', limit: SCAN_PAGE, after }),
      (run: Run): Task | null => {
        const owner = { kind: 'run-output', id: run.id } as const
        return this.wanted(owner) ? { owner, record: run, files: outputMedia(run.output) } : null
      },
      this.sweeps.runs,
      limit,
    )
  }

  private assetTasks(limit: number): Task[] {
    return this.scan(
      (after) =>
        this.mirror.assets.list({ orgId: this.orgId, mediaType: 'image', limit: SCAN_PAGE, after }),
      (asset: Asset): Task | null => {
        if (asset.status_code !== 'ready') return null
        const owner = { kind: 'asset', id: asset.id } as const
        const thumbnail = this.mirror.assets.thumbnailSha256(asset.id)
        const record = this.media.fetchRecord(owner)
        if (thumbnail !== null && (record !== null || this.media.has(thumbnail))) return null
        if (record?.state === 'done') {
          // Fetched before, but the mirror forgot (it was rebuilt): put the column back.
          const made = this.media.forAsset(asset.id, { thumbnailSize: this.thumbnailSize })
          const again = made.find((ref) => ref.thumbnailSha256 !== null)?.thumbnailSha256
          if (again) this.mirror.assets.setThumbnail(asset.id, again)
          return null
        }
        if (record && record.retryAt > this.clock()) return null
        const file = assetMedia(asset, this.maxAssetBytes)
        return { owner, record: asset, files: file ? [file] : [] }
      },
      this.sweeps.assets,
      limit,
    )
  }

  /**
   * Up to `limit` records with work, newest first: the newest `scanBudget` records, then up to
   * `scanBudget` more from where the previous pass's sweep stopped. A page is left for the next
   * sweep unless it was looked at whole.
   */
  private scan<T extends { id: string }>(
    list: (after: string | null) => { items: T[]; next: string | null },
    consider: (item: T) => Task | null,
    sweep: Sweep,
    limit: number,
  ): Task[] {
    const tasks: Task[] = []
    const seen = new Set<string>()
    const walk = (from: string | null): { end: boolean; at: string | null } => {
      let after = from
      let looked = 0
      while (looked < this.scanBudget && tasks.length < limit) {
        const page = list(after)
        for (const item of page.items) {
          looked += 1
          if (tasks.length >= limit) return { end: false, at: after }
          if (seen.has(item.id)) continue
          seen.add(item.id)
          const task = consider(item)
          if (task) tasks.push(task)
        }
        if (page.next === null) return { end: true, at: null }
        after = page.next
      }
      return { end: false, at: after }
    }
    const head = walk(null)
    if (head.end || tasks.length >= limit) return tasks
    const deeper = walk(sweep.after ?? head.at)
    sweep.after = deeper.end ? null : deeper.at
    return tasks
  }

  // ── fetching ─────────────────────────────────────────────────────────────────────────────

  private async work(tasks: readonly Task[], pass: Pass): Promise<void> {
    pass.plan(tasks.reduce((sum, task) => sum + task.files.length, 0))
    let next = 0
    const worker = async () => {
      while (!pass.stopped) {
        const task = tasks[next++]
        if (!task) return
        await this.fetchTask(task, pass)
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.concurrency, tasks.length) }, worker))
  }

  private async fetchTask(task: Task, pass: Pass): Promise<void> {
    pass.report.records += 1
    const { owner } = task
    let files = task.files
    // An object, not a let: it is set inside the closure, which flow analysis does not follow.
    const fresh = { read: false }
    const refresh = async () => {
      fresh.read = true
      pass.report.refreshed += 1
      files = await this.refresh(task, pass)
    }
    const refs: NewMediaRef[] = []
    let failure: unknown = null
    let remaining = files.length
    let completed = false
    try {
      const now = this.clock()
      const expired = files.some(
        (file) =>
          file.expiresAt !== null &&
          file.expiresAt <= now + EXPIRY_MARGIN_MS &&
          !(file.sha256 !== null && this.media.has(file.sha256)),
      )
      if (expired) await refresh()
      for (const wanted of task.files) {
        if (pass.stopped) return
        let file = files.find((f) => f.role === wanted.role) ?? wanted
        try {
          let stored: StoredMedia
          try {
            stored = await this.store(file, owner, pass)
          } catch (error) {
            if (fresh.read || !isStaleUrl(error)) throw error
            await refresh()
            file = files.find((f) => f.role === wanted.role) ?? file
            stored = await this.store(file, owner, pass)
          }
          refs.push({
            position: wanted.position,
            role: wanted.role,
            sha256: stored.sha256,
            contentType: stored.contentType,
          })
          await this.thumbnail(task, stored, pass)
        } catch (error) {
          if (!this.settleError(error, pass, owner, file.url)) return
          failure ??= error
        }
        remaining -= 1
        pass.fileDone()
      }
      completed = true
    } catch (error) {
      // The refresh itself failed: every file of the record is left for later.
      if (this.settleError(error, pass, owner, task.files[0]?.url ?? '')) {
        failure ??= error
        completed = true
        for (; remaining > 0; remaining--) pass.fileDone()
      }
    } finally {
      // What was stored is recorded even when the pass stopped halfway through the record;
      // its fetch record then stays as it was, so the next pass takes the record up again.
      if (completed || refs.length > 0) {
        this.recordQuietly(owner, refs, () =>
          !completed
            ? undefined
            : failure === null
              ? { state: 'done' }
              : this.failedOutcome(owner, failure),
        )
      }
    }
  }

  private recordQuietly(
    owner: MediaOwner,
    refs: readonly NewMediaRef[],
    outcome: () => FetchOutcome | undefined,
  ): void {
    try {
      this.media.recordRefs(owner, refs, outcome())
    } catch {
      // The store closed under the pass; the next one finds the record unfetched.
    }
  }

  private failedOutcome(owner: MediaOwner, error: unknown): FetchOutcome {
    const now = this.clock()
    if (isPassing(error)) return { state: 'failed', code: codeOf(error), retryAt: 0 }
    const attempts = this.media.fetchRecord(owner)?.attempts ?? 0
    const wait = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(attempts, 20))
    return { state: 'failed', code: codeOf(error), retryAt: now + wait }
  }

  /**
   * Sorts a failure: a network failure, an abort or a closed store ends the pass (false);
   * anything else is this file's failure, reported (true).
   */
  private settleError(error: unknown, pass: Pass, owner: MediaOwner, url: string): boolean {
    if (pass.stopped) return false
    if (isNetworkFailure(error)) {
      pass.end(new Stop('offline', OFFLINE_MESSAGE))
      return false
    }
    if (isMediaStoreError(error) && error.code === 'CLOSED') {
      pass.end(new Stop('aborted', 'The media store was closed; the next pass goes on from here.'))
      return false
    }
    pass.report.failed.push({
      owner,
      url: url ? redactUrl(url) : '',
      code: codeOf(error),
      message: messageOf(error),
    })
    return true
  }

  /** Stores one file, from the store itself when its sha256 is known and already there. */
  private async store(file: RecordMedia, owner: MediaOwner, pass: Pass): Promise<StoredMedia> {
    const known = file.sha256 !== null && this.media.has(file.sha256)
    const stored = await this.media.download(file.url, {
      kind: owner.kind === 'asset' ? 'asset' : 'output',
      source: owner.id,
      signal: pass.signal,
      ...(file.sha256 === null ? {} : { expectedSha256: file.sha256 }),
      ...(file.contentType === null ? {} : { contentType: file.contentType }),
    })
    if (known) {
      pass.report.skipped += 1
    } else {
      pass.report.downloaded += 1
      pass.report.bytes += stored.size
    }
    return stored
  }

  private async thumbnail(task: Task, stored: StoredMedia, pass: Pass): Promise<void> {
    if (!stored.contentType.startsWith('image/')) {
      pass.report.withoutThumbnail += 1
      return
    }
    try {
      const thumbnail = await this.media.thumbnail(stored.sha256, { size: this.thumbnailSize })
      if (task.owner.kind === 'asset')
        this.mirror.assets.setThumbnail(task.owner.id, thumbnail.sha256)
    } catch (error) {
      if (!isMediaStoreError(error) || !['NOT_AN_IMAGE', 'THUMBNAIL_FAILED'].includes(error.code)) {
        throw error
      }
      pass.report.withoutThumbnail += 1
    }
  }

  /** Reads the record again for fresh URLs, writes it to the mirror, answers its files. */
  private async refresh(task: Task, pass: Pass): Promise<RecordMedia[]> {
    if (task.owner.kind === 'run-output') {
      const run = await this.readRun(task.owner.id, pass)
      return outputMedia(run.output)
    }
    const asset = await this.readAsset(task.owner.id, pass)
    const file = assetMedia(asset, this.maxAssetBytes)
    return file ? [file] : []
  }

  private async readRun(id: string, pass: Pass): Promise<Run> {
    const run = await this.client.get('/v1/runs/{run_id}', {
      params: { path: { run_id: id } },
      signal: pass.signal,
    })
    this.mirror.runs.upsertPage([run])
    return run
  }

  private async readAsset(id: string, pass: Pass): Promise<Asset> {
    const asset = await this.client.get('/v1/assets/{asset_id}', {
      params: { path: { asset_id: id } },
      signal: pass.signal,
    })
    this.mirror.assets.upsertPage([asset])
    return asset
  }
}

function whole(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${what} must be a whole number, 1 or more.`)
  }
  return value
}

// ── pins ─────────────────────────────────────────────────────────────────────────────────────

const OPEN_STATES = `('prepared', 'sending', 'dispatched')`
const SHA256_IN_TEXT = /[0-9a-f]{64}/g

/** Every string of a request, and every sha256 written inside one. */
function namesIn(value: unknown, into: Set<string>, depth = 0): void {
  if (depth > 32) return
  if (typeof value === 'string') {
    into.add(value)
    for (const match of value.toLowerCase().matchAll(SHA256_IN_TEXT)) into.add(match[0])
  } else if (Array.isArray(value)) {
    for (const item of value) namesIn(item, into, depth + 1)
  } else if (isRecord(value)) {
    for (const item of Object.values(value)) namesIn(item, into, depth + 1)
  }
}

/**
 * The media store's `isPinned` hook, read from the ledger (see the module comment for the
 * rules). Each answer is a few indexed lookups; the names in open intents' requests are read
 * again only when the set of open intents changed.
 */
export function ledgerPins(
  ledger: Ledger,
): (sha256: string, owners: () => readonly MediaOwner[]) => boolean {
  const db = ledger.db
  const uploadNeeds = db
    .prepare(
      `SELECT 1 FROM upload_files f JOIN upload_manifests m ON m.id = f.manifest_id
       WHERE f.sha256 = ? AND f.state NOT IN ('confirmed', 'duplicate', 'skipped')
         AND m.state IN ('scanning', 'uploading', 'paused')
       LIMIT 1`,
    )
    .pluck()
  const runNeeded = db
    .prepare(
      `SELECT 1 FROM intents i
       WHERE i.remote_run_id = ?
         AND (i.state IN ${OPEN_STATES}
           OR (i.state = 'succeeded' AND i.flow_run_id IS NOT NULL AND EXISTS (
             SELECT 1 FROM intents o
             WHERE o.flow_run_id = i.flow_run_id AND o.state IN ${OPEN_STATES})))
       LIMIT 1`,
    )
    .pluck()
  const openShape = db.prepare(
    `SELECT count(*) AS count, total(updated_ms) AS sum, coalesce(max(updated_ms), 0) AS newest
     FROM intents WHERE state IN ${OPEN_STATES}`,
  )
  const openRequests = db
    .prepare(`SELECT request_json FROM intents WHERE state IN ${OPEN_STATES}`)
    .pluck()
  let shape = ''
  let named = new Set<string>()
  const namedByOpenIntents = (): Set<string> => {
    const now = JSON.stringify(openShape.get())
    if (now !== shape) {
      const names = new Set<string>()
      for (const json of openRequests.all() as string[]) namesIn(JSON.parse(json), names)
      named = names
      shape = now
    }
    return named
  }
  return (sha256, owners) => {
    if (uploadNeeds.get(sha256) !== undefined) return true
    const names = namedByOpenIntents()
    if (names.has(sha256)) return true
    for (const owner of owners()) {
      if (names.has(owner.id)) return true
      if (owner.kind === 'run-output' && runNeeded.get(owner.id) !== undefined) return true
    }
    return false
  }
}

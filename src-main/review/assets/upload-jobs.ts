import { randomUUID } from 'node:crypto'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import {
  FAILURES_SHOWN,
  LEFT_OUT_SHOWN,
  type UploadFileRow,
  type UploadProgressEvent,
  type UploadState,
  type UploadSummary,
  type WatchedFolder,
} from '../../../src-shared/domain/assets'
import type { Asset } from '../../../src-shared/api'
import type { MirrorChange } from '../../../src-shared/ipc'
import type { Databases } from '../../db'
import type { Logger } from '../../log'
import { isServiceError, type ServiceClient } from '../../service'
import {
  defaultTarget,
  isUploadScanError,
  isUploadTransferError,
  startFolderUpload,
  watchFolder,
  type FileProgress,
  type FolderUpload,
  type FolderUploadSummary,
  type FolderWatch,
  type UploadProgress,
} from '../../uploads'
import { readableFolder } from './browse'
import { AssetsError } from './errors'

/** At most this often per upload: ten a second is as smooth as a bar needs. */
export const PROGRESS_EVENT_MS = 100
/** Where the watched folders are kept between sessions, under the home folder. */
export const WATCHES_FILE = 'watched-folders.json'

export interface UploadsOptions {
  client: ServiceClient
  databases: Databases
  profile: string
  orgId: string
  home: string
  logger: Logger
  clock: () => number
  progress: (event: UploadProgressEvent) => void
  /** After an upload or a watch pass: bring its new assets and folders into the mirror. */
  uploaded: () => void
  /**
   * The assets an upload made were written into the mirror (`writtenThrough`): the views read
   * them again (the write-through's `changed`, which tells `mirror.changed`).
   */
  written?: (collections: readonly MirrorChange[]) => void
  /** Passed on to the engine, e.g. a short settle time in tests. */
  watchSettleMs?: number
}

interface Entry {
  summary: UploadSummary
  files: Map<number, UploadFileRow>
  changed: Map<number, UploadFileRow>
  handle: FolderUpload | null
  manifestId: string | null
  /** The files of the folder it uploads, sorted; undefined for the whole folder. */
  named: readonly string[] | undefined
  concurrency: number | undefined
  /** The asset folder the upload goes inside (the tree's selection); null: the top level. */
  into: string | null
  lastSentAt: number
  timer: NodeJS.Timeout | null
  /** Assets its files made (sent and confirmed), not yet written into the mirror. */
  made: Set<string>
}

interface Watch {
  info: WatchedFolder
  handle: FolderWatch | null
}

const ACTIVE: ReadonlySet<UploadState> = new Set(['scanning', 'folders', 'uploading', 'paused'])
/**
 * An upload's new assets read one by one into the mirror at its end, this many at once, up to
 * WRITTEN_THROUGH_MAX: a folder of thousands comes with the sync its end asks for instead.
 */
const WRITE_THROUGH_READS = 4
const WRITTEN_THROUGH_MAX = 200

/**
 * The uploads of this session on top of `src-main/uploads` (its public entry only): each one's
 * summary and file rows kept for the window, progress pushed at most ten times a second per
 * upload with only the files whose state changed, and the watched folders, kept in
 * `watched-folders.json` and watched again at the next start. Unfinished manifests of earlier
 * sessions are listed as `interrupted`; resuming one uploads its folder again, which the engine
 * continues from the ledger.
 *
 * Files dropped on the window are uploaded as `start({ path: their folder, files: [names] })`:
 * the engine lists only those files of the folder (it does not walk the rest of it), and puts
 * them at the top level of the assets unless a folder is named, since the person picked files,
 * not their folder. The folder's manifest is the same as for the whole folder (what was sent
 * either way is not sent again), and it remembers that its latest upload named files, so that
 * resuming it after a restart sends those files only (see `namedFilesOf`).
 */
export class UploadManager {
  private readonly entries = new Map<string, Entry>()
  private readonly watches = new Map<string, Watch>()
  private closed = false

  constructor(private readonly options: UploadsOptions) {}

  /** Watches the folders of the previous session again. */
  restoreWatches(): void {
    for (const saved of this.readWatches()) {
      this.startWatch(saved.id, saved.path, saved.folderName)
    }
  }

  async start(args: {
    path: string
    files?: readonly string[] | undefined
    folder?: string | null | undefined
    into?: string | null | undefined
    concurrency?: number | undefined
    watch: boolean
  }): Promise<UploadSummary> {
    const root = await readableFolder(args.path)
    if (args.watch) {
      // The channel refuses files with a watch; a caller in this process is told the same.
      if (args.files) {
        throw new AssetsError(
          'UPLOAD_WATCHED',
          'A watch is of a whole folder: leave out the files, or watch the folder.',
        )
      }
      const watch = await this.watch({ path: root, folder: args.folder })
      return this.summaryOf(watch.id)
    }
    const named = args.files === undefined ? undefined : [...new Set(args.files)].sort()
    const key = named?.join('\0')
    // The same folder (or the same files of it) asked for again while it is uploading.
    const running = [...this.entries.values()].find(
      (entry) =>
        entry.summary.root === root &&
        ACTIVE.has(entry.summary.state) &&
        entry.named?.join('\0') === key,
    )
    if (running) return structuredClone(running.summary)
    const folderName = defaultTarget(root, { folder: args.folder, files: named })
    const entry = this.newEntry(randomUUID(), root, folderName, false, named)
    entry.concurrency = args.concurrency
    entry.into = args.into ?? null
    this.run(entry)
    return structuredClone(entry.summary)
  }

  pause(id: string): UploadSummary {
    const entry = this.own(id)
    if (!entry.handle || !ACTIVE.has(entry.summary.state)) return structuredClone(entry.summary)
    entry.handle.pause()
    this.update(entry, { state: 'paused' })
    return structuredClone(entry.summary)
  }

  resume(id: string): UploadSummary {
    const interrupted = this.interrupted().find((summary) => summary.id === id)
    if (interrupted) {
      const named = this.namedFilesOf(id)
      const entry = this.newEntry(id, interrupted.root, interrupted.folderName, false, named)
      entry.into = this.parentOfTarget(id)
      this.run(entry)
      return structuredClone(entry.summary)
    }
    const entry = this.own(id)
    if (entry.summary.state !== 'paused' || !entry.handle) {
      throw new AssetsError('UPLOAD_NOT_PAUSED', 'This upload is not paused; nothing to resume.')
    }
    entry.handle.resume()
    this.update(entry, { state: 'uploading' })
    return structuredClone(entry.summary)
  }

  cancel(id: string): UploadSummary {
    const interrupted = this.interrupted().find((summary) => summary.id === id)
    if (interrupted) {
      this.options.databases.ledger.uploads.setManifestState(id, 'canceled')
      return { ...interrupted, state: 'canceled', finishedAt: this.options.clock() }
    }
    const entry = this.own(id)
    entry.handle?.cancel()
    return structuredClone(entry.summary)
  }

  dismiss(id: string): void {
    const entry = this.entries.get(id)
    if (entry) {
      if (ACTIVE.has(entry.summary.state)) {
        throw new AssetsError('UPLOAD_RUNNING', 'This upload is still running: cancel it first.')
      }
      this.entries.delete(id)
      return
    }
    this.cancel(id)
  }

  list(): UploadSummary[] {
    const mine = [...this.entries.values()]
      .map((entry) => structuredClone(entry.summary))
      .sort((a, b) => b.startedAt - a.startedAt)
    return [...mine, ...this.interrupted()]
  }

  files(id: string, limit: number): UploadFileRow[] {
    const entry = this.own(id)
    return [...entry.files.values()].sort((a, b) => a.seq - b.seq).slice(0, limit)
  }

  watchList(): WatchedFolder[] {
    return [...this.watches.values()].map((watch) => structuredClone(watch.info))
  }

  async watch(args: { path: string; folder?: string | null | undefined }): Promise<WatchedFolder> {
    const root = await readableFolder(args.path)
    if ([...this.watches.values()].some((watch) => watch.info.path === root)) {
      throw new AssetsError('WATCH_EXISTS', `"${root}" is already watched.`)
    }
    const folderName = args.folder === undefined ? basename(root) : args.folder
    const watch = this.startWatch(randomUUID(), root, folderName)
    this.saveWatches()
    return structuredClone(watch.info)
  }

  async unwatch(id: string): Promise<void> {
    const watch = this.watches.get(id)
    if (!watch) {
      throw new AssetsError('WATCH_NOT_FOUND', 'This folder is not watched (any more).')
    }
    this.watches.delete(id)
    this.saveWatches()
    await watch.handle?.stop()
  }

  /** Cancels the uploads and stops the watches; the ledger keeps what they did for next time. */
  async close(): Promise<void> {
    this.closed = true
    const waits: Promise<unknown>[] = []
    for (const watch of this.watches.values()) if (watch.handle) waits.push(watch.handle.stop())
    for (const entry of this.entries.values()) {
      if (entry.timer) clearTimeout(entry.timer)
      if (entry.handle && ACTIVE.has(entry.summary.state)) {
        entry.handle.cancel()
        waits.push(entry.handle.done)
      }
    }
    await Promise.allSettled(waits)
  }

  private summaryOf(id: string): UploadSummary {
    return structuredClone(this.own(id).summary)
  }

  private own(id: string): Entry {
    const entry = this.entries.get(id)
    if (!entry) {
      throw new AssetsError(
        'UPLOAD_NOT_FOUND',
        'This upload is not in the list any more. Start it again: what was sent is not sent twice.',
      )
    }
    return entry
  }

  /**
   * The files a resume of an earlier session's manifest sends when its upload named files: the
   * ones not finished yet (all of them if none is left, so the upload ends as it should);
   * undefined when it was of the whole folder, which is scanned again.
   */
  private namedFilesOf(manifestId: string): string[] | undefined {
    const uploads = this.options.databases.ledger.uploads
    if (!uploads.getManifest(manifestId)?.filesOnly) return undefined
    const all: string[] = []
    const left: string[] = []
    let after: string | null = null
    do {
      const page = uploads.files(manifestId, { limit: 1000, after })
      for (const row of page.items) {
        all.push(row.relativePath)
        if (!['confirmed', 'duplicate', 'skipped'].includes(row.state)) left.push(row.relativePath)
      }
      after = page.next
    } while (after !== null)
    return (left.length > 0 ? left : all).sort()
  }

  private newEntry(
    id: string,
    root: string,
    folderName: string | null,
    watched: boolean,
    named?: readonly string[],
  ): Entry {
    const entry: Entry = {
      summary: {
        id,
        root,
        folderName,
        state: 'scanning',
        watched,
        startedAt: this.options.clock(),
        finishedAt: null,
        files: { total: 0, done: 0, duplicates: 0, failed: 0 },
        bytes: { total: 0, done: 0 },
        rate: 0,
        etaSeconds: null,
        failures: [],
        skipped: 0,
        unreadable: 0,
        error: null,
        ...(named ? { named: { count: named.length, first: named[0] ?? '' } } : {}),
      },
      files: new Map(),
      changed: new Map(),
      handle: null,
      manifestId: null,
      named,
      concurrency: undefined,
      into: null,
      lastSentAt: 0,
      timer: null,
      made: new Set(),
    }
    this.entries.set(id, entry)
    return entry
  }

  private engineOptions(entry: Entry) {
    const { client, databases, profile, orgId } = this.options
    return {
      service: client,
      uploads: databases.ledger.uploads,
      profile,
      orgId,
      root: entry.summary.root,
      folder: entry.summary.folderName,
      into: entry.into,
      ...(entry.named ? { files: entry.named } : {}),
      concurrency: entry.concurrency,
      onProgress: (progress: UploadProgress) => {
        this.progressed(entry, progress)
      },
      onFile: (file: FileProgress) => {
        this.fileChanged(entry, file)
      },
    }
  }

  private run(entry: Entry): void {
    const handle = startFolderUpload(this.engineOptions(entry))
    entry.handle = handle
    handle.done.then(
      (summary) => {
        this.finished(entry, summary)
      },
      (error: unknown) => {
        this.update(entry, {
          state: 'failed',
          finishedAt: this.options.clock(),
          error: coded(error),
        })
        this.send(entry)
      },
    )
  }

  private progressed(entry: Entry, progress: UploadProgress): void {
    entry.manifestId = progress.manifestId || entry.manifestId
    const state: UploadState | null =
      progress.phase === 'finished' || progress.phase === 'watching'
        ? null
        : progress.phase === 'canceled'
          ? 'canceled'
          : progress.phase
    // A watched folder's next pass starts over: its files are counted again.
    if (
      entry.summary.watched &&
      progress.phase === 'scanning' &&
      !ACTIVE.has(entry.summary.state)
    ) {
      entry.files.clear()
      entry.summary.failures = []
      entry.summary.finishedAt = null
    }
    this.update(entry, {
      ...(state === null ? {} : { state }),
      files: progress.files,
      bytes: progress.bytes,
      rate: progress.rate,
      etaSeconds: progress.etaSeconds,
    })
  }

  private fileChanged(entry: Entry, file: FileProgress): void {
    const row: UploadFileRow = {
      seq: file.seq,
      relativePath: file.relativePath,
      sizeBytes: file.sizeBytes,
      state: file.state,
      bytesDone: file.bytesDone,
      error: file.error ?? null,
    }
    const before = entry.files.get(file.seq)
    entry.files.set(file.seq, row)
    if (file.state === 'done' && file.assetId) entry.made.add(file.assetId)
    if (before?.state !== row.state) entry.changed.set(file.seq, row)
    if (row.error && entry.summary.failures.length < FAILURES_SHOWN) {
      entry.summary.failures.push({ relativePath: row.relativePath, ...row.error })
    }
    this.schedule(entry)
  }

  private finished(entry: Entry, summary: FolderUploadSummary): void {
    // Every reason the scan left a file out counts, the ones added later too.
    const counts = Object.values(summary.skipped) as number[]
    const skipped = counts.reduce((sum, count) => sum + count, 0)
    this.update(entry, {
      state: summary.state,
      finishedAt: this.options.clock(),
      failures: summary.failures.slice(0, FAILURES_SHOWN),
      skipped,
      leftOut: summary.leftOut.slice(0, LEFT_OUT_SHOWN),
      unreadable: summary.problems.length,
      files: {
        total: summary.files.total,
        // What an earlier upload of the folder finished is done too: the count reaches the total.
        done: summary.files.uploaded + summary.files.already,
        duplicates: summary.files.duplicates,
        failed: summary.files.failed,
      },
      rate: 0,
      etaSeconds: summary.state === 'finished' ? 0 : null,
    })
    this.send(entry)
    const made = [...entry.made]
    entry.made.clear()
    // The new assets are listed at once; the sync still brings the folders the upload made.
    void this.writeThrough(made).finally(() => {
      if (summary.files.uploaded + summary.files.duplicates > 0) this.options.uploaded()
    })
  }

  /**
   * The assets an upload made, read from the service into the mirror as soon as it ends, so
   * the Assets section lists them without waiting for a sync. Never rejects: what could not be
   * read comes with the sync.
   */
  private async writeThrough(assetIds: readonly string[]): Promise<void> {
    const { client, databases, logger } = this.options
    const wanted = assetIds.slice(0, WRITTEN_THROUGH_MAX)
    const read: Asset[] = []
    let next = 0
    const reader = async () => {
      while (next < wanted.length && !this.closed) {
        const id = wanted[next++] as string
        try {
          read.push(
            await client.get('/v1/assets/{asset_id}', { params: { path: { asset_id: id } } }),
          )
        } catch (error) {
          logger.debug('an uploaded asset could not be written through', {
            assetId: id,
            err: error,
          })
        }
      }
    }
    await Promise.all(Array.from({ length: WRITE_THROUGH_READS }, reader))
    if (read.length === 0 || this.closed) return
    try {
      if (databases.mirror.assets.upsertPage(read) > 0) this.options.written?.(['assets'])
    } catch (error) {
      logger.warn('uploaded assets could not be written into the mirror', { err: error })
    }
  }

  private update(entry: Entry, change: Partial<UploadSummary>): void {
    Object.assign(entry.summary, change)
    this.schedule(entry)
  }

  /** At most one event per PROGRESS_EVENT_MS: the latest summary and what changed since. */
  private schedule(entry: Entry): void {
    if (entry.timer || this.closed) return
    const wait = entry.lastSentAt + PROGRESS_EVENT_MS - performance.now()
    if (wait <= 0) {
      this.send(entry)
      return
    }
    entry.timer = setTimeout(() => {
      entry.timer = null
      this.send(entry)
    }, wait)
  }

  private send(entry: Entry): void {
    if (entry.timer) {
      clearTimeout(entry.timer)
      entry.timer = null
    }
    entry.lastSentAt = performance.now()
    const files = [...entry.changed.values()]
    entry.changed.clear()
    this.options.progress({ upload: structuredClone(entry.summary), files })
  }

  /** Where an earlier session's upload made its folder, so that a resume goes on in it. */
  private parentOfTarget(manifestId: string): string | null {
    const { databases } = this.options
    const targetId = databases.ledger.uploads.getManifest(manifestId)?.targetFolderId ?? null
    if (targetId === null) return null
    return databases.mirror.assetFolders.get(targetId)?.parent_id ?? null
  }

  /** Manifests an earlier session left unfinished, as the ledger counts them. */
  private interrupted(): UploadSummary[] {
    const { databases, profile, orgId } = this.options
    const uploads = databases.ledger.uploads
    const known = new Set<string>()
    const roots = new Set<string>()
    for (const entry of this.entries.values()) {
      if (entry.manifestId) known.add(entry.manifestId)
      known.add(entry.summary.id)
      if (ACTIVE.has(entry.summary.state)) roots.add(entry.summary.root)
    }
    const namedOf = (manifestId: string, count: number) => ({
      count,
      first: uploads.files(manifestId, { limit: 1 }).items[0]?.relativePath ?? '',
    })
    return uploads
      .unfinished({ profile, orgId })
      .filter((manifest) => !known.has(manifest.id) && !roots.has(manifest.rootPath))
      .map((manifest) => {
        const tally = uploads.progress(manifest.id)
        const of = (...states: (keyof typeof tally)[]) =>
          states.reduce(
            (sum, state) => ({
              files: sum.files + (tally[state]?.files ?? 0),
              bytes: sum.bytes + (tally[state]?.bytes ?? 0),
            }),
            { files: 0, bytes: 0 },
          )
        const all = of(
          'pending',
          'hashed',
          'uploading',
          'confirmed',
          'duplicate',
          'skipped',
          'failed',
        )
        const done = of('confirmed', 'duplicate', 'skipped')
        const target =
          manifest.targetFolderId === null
            ? null
            : databases.mirror.assetFolders.get(manifest.targetFolderId)
        return {
          id: manifest.id,
          root: manifest.rootPath,
          folderName:
            manifest.targetFolderId === null ? null : (target?.name ?? basename(manifest.rootPath)),
          state: 'interrupted' as const,
          watched: false,
          startedAt: manifest.createdMs,
          finishedAt: null,
          files: {
            total: all.files,
            done: of('confirmed').files,
            duplicates: of('duplicate', 'skipped').files,
            failed: of('failed').files,
          },
          bytes: { total: all.bytes, done: done.bytes },
          rate: 0,
          etaSeconds: null,
          failures: [],
          skipped: 0,
          unreadable: 0,
          error: null,
          ...(manifest.filesOnly ? { named: namedOf(manifest.id, all.files) } : {}),
        }
      })
  }

  private startWatch(id: string, root: string, folderName: string | null): Watch {
    const entry = this.newEntry(id, root, folderName, true)
    const watch: Watch = {
      info: {
        id,
        path: root,
        folderName,
        state: 'uploading',
        uploadId: id,
        lastPassAt: null,
        error: null,
      },
      handle: null,
    }
    this.watches.set(id, watch)
    const handle = watchFolder({
      ...this.engineOptions(entry),
      ...(this.options.watchSettleMs === undefined ? {} : { settleMs: this.options.watchSettleMs }),
      onProgress: (progress) => {
        if (progress.phase !== 'finished') watch.info.state = 'uploading'
        this.progressed(entry, progress)
      },
      onPass: (summary) => {
        watch.info.state = 'watching'
        watch.info.lastPassAt = this.options.clock()
        this.finished(entry, summary)
      },
    })
    watch.handle = handle
    handle.done.then(
      () => {
        watch.info.state = 'stopped'
      },
      (error: unknown) => {
        watch.info.state = 'failed'
        watch.info.error = coded(error)
        this.update(entry, {
          state: 'failed',
          finishedAt: this.options.clock(),
          error: coded(error),
        })
        this.send(entry)
      },
    )
    return watch
  }

  private readWatches(): { id: string; path: string; folderName: string | null }[] {
    try {
      const saved = JSON.parse(readFileSync(this.watchesFile(), 'utf8')) as unknown
      if (!Array.isArray(saved)) return []
      return saved.filter(
        (item): item is { id: string; path: string; folderName: string | null } =>
          typeof item === 'object' &&
          item !== null &&
          typeof (item as { id?: unknown }).id === 'string' &&
          typeof (item as { path?: unknown }).path === 'string',
      )
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) {
        this.options.logger.warn('the watched folders could not be read', { err: error })
      }
      return []
    }
  }

  private saveWatches(): void {
    const file = this.watchesFile()
    const saved = [...this.watches.values()].map(({ info }) => ({
      id: info.id,
      path: info.path,
      folderName: info.folderName,
    }))
    // Written aside then renamed: a crash mid-write leaves the previous list, not half of one.
    writeFileSync(`${file}.tmp`, JSON.stringify(saved, null, 2))
    renameSync(`${file}.tmp`, file)
  }

  private watchesFile(): string {
    return join(this.options.home, WATCHES_FILE)
  }
}

function coded(error: unknown): { code: string; message: string } {
  if (isUploadScanError(error) || isUploadTransferError(error) || isServiceError(error)) {
    return { code: error.code, message: error.message }
  }
  return {
    code: 'UPLOAD_FAILED',
    message: 'The upload stopped on an unexpected problem. Try again; the log says more.',
  }
}

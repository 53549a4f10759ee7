import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { pageLimit } from '../values'
import { withoutFlush } from '../connection'
import type { Page } from './statements'

export type UploadManifestState =
  'scanning' | 'uploading' | 'paused' | 'finished' | 'failed' | 'canceled'

/**
 * pending: listed, not hashed. hashed: sha256 known. uploading: the service's upload exists and
 * parts are going up. confirmed: an asset now holds it. duplicate: the organization already had
 * these bytes. skipped: nothing to do (an asset with this hash was found before uploading).
 */
export type UploadFileState =
  'pending' | 'hashed' | 'uploading' | 'confirmed' | 'duplicate' | 'skipped' | 'failed'

export interface UploadManifest {
  id: string
  profile: string
  orgId: string
  rootPath: string
  targetFolderId: string | null
  state: UploadManifestState
  createdMs: number
  updatedMs: number
  finishedMs: number | null
  lastError: string | null
  /**
   * Its latest upload named some files of the folder rather than the whole folder (files
   * dropped on the window): a resume sends the files it lists, and scans nothing else.
   */
  filesOnly: boolean
}

/** A manifest as SQLite answers it, a 0/1 integer where the manifest has a boolean. */
type ManifestRow = Omit<UploadManifest, 'filesOnly'> & { filesOnly: number }

const manifestOf = (row: unknown): UploadManifest | null => {
  if (row === undefined) return null
  const manifest = row as ManifestRow
  return { ...manifest, filesOnly: manifest.filesOnly === 1 }
}

export interface ListedFile {
  relativePath: string
  sizeBytes: number
  mtimeMs: number
}

export interface UploadFile extends ListedFile {
  seq: number
  manifestId: string
  sha256: string | null
  contentType: string | null
  folderId: string | null
  uploadId: string | null
  uploadExpiresMs: number | null
  partSize: number | null
  partCount: number | null
  assetId: string | null
  state: UploadFileState
  attempts: number
  lastError: string | null
  updatedMs: number
}

/**
 * A file's sha256 and content type, handed to `startUpload` or `finishFile` when the hash was
 * not recorded on its own: a small file is hashed and sent in one go, so a separate write for
 * its hash would only be one more commit (hashing it again after a crash costs next to nothing).
 */
export interface Hash {
  sha256: string
  contentType: string
}

export interface UploadPart {
  partNumber: number
  sizeBytes: number
  etag: string
}

const MANIFEST = `id, profile, org_id AS orgId, root_path AS rootPath,
  target_folder_id AS targetFolderId, state, created_ms AS createdMs, updated_ms AS updatedMs,
  finished_ms AS finishedMs, last_error AS lastError, files_only AS filesOnly`

const FILE = `seq, manifest_id AS manifestId, relative_path AS relativePath,
  size_bytes AS sizeBytes, mtime_ms AS mtimeMs, sha256, content_type AS contentType,
  folder_id AS folderId, upload_id AS uploadId, upload_expires_ms AS uploadExpiresMs,
  part_size AS partSize, part_count AS partCount, asset_id AS assetId, state, attempts,
  last_error AS lastError, updated_ms AS updatedMs`

/**
 * Folder uploads that survive a crash or a lost connection: the files of each manifest with
 * their hashes and the service's upload ids, and every part storage has accepted, so a resume
 * sends only what is missing.
 */
export class UploadsRepository {
  private readonly insertManifest: Database.Statement
  private readonly manifestById: Database.Statement
  private readonly unfinishedManifests: Database.Statement
  private readonly latestManifest: Database.Statement
  private readonly manifestState: Database.Statement
  private readonly manifestFilesOnly: Database.Statement
  private readonly listFile: Database.Statement
  private readonly fileBySeq: Database.Statement
  private readonly filesFirst: Database.Statement
  private readonly filesNext: Database.Statement
  private readonly filesInStateFirst: Database.Statement
  private readonly filesInStateNext: Database.Statement
  private readonly hashed: Database.Statement
  private readonly uploading: Database.Statement
  private readonly uploadingHashed: Database.Statement
  private readonly finishedFile: Database.Statement
  private readonly finishedHashed: Database.Statement
  private readonly failedFile: Database.Statement
  private readonly insertPart: Database.Statement
  private readonly partsOf: Database.Statement
  private readonly partBytesOf: Database.Statement
  private readonly tally: Database.Statement
  private readonly addMany: (manifestId: string, files: readonly ListedFile[]) => number

  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {
    this.insertManifest = db.prepare(`
      INSERT INTO upload_manifests (id, profile, org_id, root_path, target_folder_id, state,
        created_ms, updated_ms, files_only)
      VALUES (?, ?, ?, ?, ?, 'scanning', ?, ?, ?)`)
    this.manifestById = db.prepare(`SELECT ${MANIFEST} FROM upload_manifests WHERE id = ?`)
    this.unfinishedManifests = db.prepare(`
      SELECT ${MANIFEST} FROM upload_manifests
      WHERE profile = ? AND org_id = ? AND state IN ('scanning', 'uploading', 'paused')
      ORDER BY created_ms, id`)
    this.latestManifest = db.prepare(`
      SELECT ${MANIFEST} FROM upload_manifests
      WHERE profile = ? AND org_id = ? AND root_path = ? AND target_folder_id IS ?
      ORDER BY created_ms DESC, id DESC LIMIT 1`)
    this.manifestState = db.prepare(`
      UPDATE upload_manifests SET state = ?, last_error = ?, updated_ms = ?,
        finished_ms = CASE WHEN ? IN ('finished', 'failed', 'canceled') THEN ? END
      WHERE id = ?`)
    this.manifestFilesOnly = db.prepare(
      `UPDATE upload_manifests SET files_only = ?, updated_ms = ? WHERE id = ? AND files_only != ?`,
    )
    // A file listed again unchanged keeps its progress; one whose size or mtime moved starts over.
    this.listFile = db.prepare(`
      INSERT INTO upload_files (manifest_id, relative_path, size_bytes, mtime_ms, state, updated_ms)
      VALUES (?, ?, ?, ?, 'pending', ?)
      ON CONFLICT (manifest_id, relative_path) DO UPDATE SET
        size_bytes = excluded.size_bytes, mtime_ms = excluded.mtime_ms, sha256 = NULL,
        content_type = NULL, upload_id = NULL, upload_expires_ms = NULL, part_size = NULL,
        part_count = NULL, asset_id = NULL, state = 'pending', last_error = NULL,
        updated_ms = excluded.updated_ms
      WHERE upload_files.size_bytes != excluded.size_bytes
        OR upload_files.mtime_ms != excluded.mtime_ms`)
    this.fileBySeq = db.prepare(`SELECT ${FILE} FROM upload_files WHERE seq = ?`)
    const files = `SELECT ${FILE} FROM upload_files WHERE manifest_id = ?`
    this.filesFirst = db.prepare(`${files} ORDER BY seq LIMIT ?`)
    this.filesNext = db.prepare(`${files} AND seq > ? ORDER BY seq LIMIT ?`)
    this.filesInStateFirst = db.prepare(`${files} AND state = ? ORDER BY seq LIMIT ?`)
    this.filesInStateNext = db.prepare(`${files} AND state = ? AND seq > ? ORDER BY seq LIMIT ?`)
    this.hashed = db.prepare(`
      UPDATE upload_files SET sha256 = ?, content_type = ?, state = 'hashed', updated_ms = ?
      WHERE seq = ?`)
    // A hash given with the upload or the outcome is recorded in the same write (see Hash). Its
    // own statements: naming sha256 in a SET makes SQLite rewrite its index entry, changed or not.
    const uploading = `UPDATE upload_files SET upload_id = ?, upload_expires_ms = ?, part_size = ?,
      part_count = ?, folder_id = ?, state = 'uploading', attempts = attempts + 1, updated_ms = ?`
    this.uploading = db.prepare(`${uploading} WHERE seq = ?`)
    this.uploadingHashed = db.prepare(`${uploading}, sha256 = ?, content_type = ? WHERE seq = ?`)
    const finished = `UPDATE upload_files SET state = ?, asset_id = ?, last_error = NULL,
      updated_ms = ?`
    this.finishedFile = db.prepare(`${finished} WHERE seq = ?`)
    this.finishedHashed = db.prepare(`${finished}, sha256 = ?, content_type = ? WHERE seq = ?`)
    this.failedFile = db.prepare(`
      UPDATE upload_files SET state = 'failed', last_error = ?, updated_ms = ? WHERE seq = ?`)
    this.insertPart = db.prepare(`
      INSERT INTO upload_parts (file_seq, part_number, size_bytes, etag, finished_ms)
      VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (file_seq, part_number) DO UPDATE SET
        size_bytes = excluded.size_bytes, etag = excluded.etag, finished_ms = excluded.finished_ms`)
    this.partsOf = db.prepare(`
      SELECT part_number AS partNumber, size_bytes AS sizeBytes, etag FROM upload_parts
      WHERE file_seq = ? ORDER BY part_number`)
    this.partBytesOf = db.prepare(`
      SELECT p.file_seq AS seq, sum(p.size_bytes) AS bytes
      FROM upload_files f JOIN upload_parts p ON p.file_seq = f.seq
      WHERE f.manifest_id = ? GROUP BY p.file_seq`)
    this.tally = db.prepare(`
      SELECT state, count(*) AS files, sum(size_bytes) AS bytes FROM upload_files
      WHERE manifest_id = ? GROUP BY state`)
    this.addMany = db.transaction((manifestId: string, listed: readonly ListedFile[]) => {
      const now = this.clock()
      let changed = 0
      for (const f of listed) {
        changed += this.listFile.run(
          manifestId,
          f.relativePath,
          f.sizeBytes,
          f.mtimeMs,
          now,
        ).changes
      }
      return changed
    })
  }

  createManifest(manifest: {
    id?: string
    profile: string
    orgId: string
    rootPath: string
    targetFolderId?: string | null
    /** See `UploadManifest.filesOnly`; false by default. */
    filesOnly?: boolean
  }): UploadManifest {
    const id = manifest.id ?? randomUUID()
    const now = this.clock()
    this.insertManifest.run(
      id,
      manifest.profile,
      manifest.orgId,
      manifest.rootPath,
      manifest.targetFolderId ?? null,
      now,
      now,
      manifest.filesOnly ? 1 : 0,
    )
    return this.getManifest(id) as UploadManifest
  }

  getManifest(id: string): UploadManifest | null {
    return manifestOf(this.manifestById.get(id))
  }

  /** Whether the manifest's latest upload named its files (see `UploadManifest.filesOnly`). */
  setFilesOnly(id: string, filesOnly: boolean): void {
    const flag = filesOnly ? 1 : 0
    this.manifestFilesOnly.run(flag, this.clock(), id, flag)
  }

  /**
   * The latest manifest of this folder into this asset folder, whatever its state: uploading the
   * folder again goes on with it, so files already sent are neither hashed nor sent again.
   */
  latest(
    scope: { profile: string; orgId: string },
    rootPath: string,
    targetFolderId: string | null,
  ): UploadManifest | null {
    return manifestOf(this.latestManifest.get(scope.profile, scope.orgId, rootPath, targetFolderId))
  }

  /** Manifests to resume after a restart, oldest first. */
  unfinished(scope: { profile: string; orgId: string }): UploadManifest[] {
    return this.unfinishedManifests
      .all(scope.profile, scope.orgId)
      .map((row) => manifestOf(row) as UploadManifest)
  }

  setManifestState(id: string, state: UploadManifestState, error: string | null = null): boolean {
    const now = this.clock()
    return this.manifestState.run(state, error, now, state, now, id).changes > 0
  }

  /** Lists files (one transaction for any number); returns how many were new or changed. */
  addFiles(manifestId: string, files: readonly ListedFile[]): number {
    return this.addMany(manifestId, files)
  }

  getFile(seq: number): UploadFile | null {
    return (this.fileBySeq.get(seq) as UploadFile | undefined) ?? null
  }

  /** In listing order, optionally in one state, keyset-paged. */
  files(
    manifestId: string,
    query: { state?: UploadFileState; limit?: number; after?: string | null } = {},
  ): Page<UploadFile> {
    const limit = pageLimit(query.limit)
    const after = query.after ? Number(query.after) : null
    if (after !== null && !Number.isSafeInteger(after)) {
      throw new TypeError(`"${query.after}" is not a cursor of this list.`)
    }
    const rows = (
      query.state === undefined
        ? after === null
          ? this.filesFirst.all(manifestId, limit + 1)
          : this.filesNext.all(manifestId, after, limit + 1)
        : after === null
          ? this.filesInStateFirst.all(manifestId, query.state, limit + 1)
          : this.filesInStateNext.all(manifestId, query.state, after, limit + 1)
    ) as UploadFile[]
    const items = rows.slice(0, limit)
    const last = items.at(-1)
    return { items, next: rows.length > limit && last ? String(last.seq) : null }
  }

  /*
   * The writes of a file's progress below commit without a flush to disk (see withoutFlush): a
   * power cut that takes one back costs a hash done again, a stray upload that expires, a part
   * the service's own list says it holds, or a confirmation looked up again. A folder of
   * thousands of small files would otherwise wait on four disk flushes per file. Each commit
   * still costs a few dozen system calls (WAL writes, locks), which is why a small file's hash
   * can ride along with its upload id or its outcome instead of a write of its own.
   */

  setHash(seq: number, sha256: string, contentType: string | null): boolean {
    return withoutFlush(
      this.db,
      () => this.hashed.run(sha256, contentType, this.clock(), seq).changes > 0,
    )
  }

  /** The service's upload of the file; with `hash`, also what `setHash` would have recorded. */
  startUpload(
    seq: number,
    upload: {
      uploadId: string
      expiresMs: number | null
      partSize: number
      partCount: number
      folderId: string | null
    },
    hash?: Hash,
  ): boolean {
    const values = [
      upload.uploadId,
      upload.expiresMs,
      upload.partSize,
      upload.partCount,
      upload.folderId,
      this.clock(),
    ]
    return withoutFlush(
      this.db,
      () =>
        (hash
          ? this.uploadingHashed.run(...values, hash.sha256, hash.contentType, seq)
          : this.uploading.run(...values, seq)
        ).changes > 0,
    )
  }

  /** Storage accepted a part; its ETag goes into the confirmation. */
  recordPart(fileSeq: number, part: UploadPart): void {
    withoutFlush(this.db, () =>
      this.insertPart.run(fileSeq, part.partNumber, part.sizeBytes, part.etag, this.clock()),
    )
  }

  finishedParts(fileSeq: number): UploadPart[] {
    return this.partsOf.all(fileSeq) as UploadPart[]
  }

  /**
   * The bytes of the parts storage accepted, by file, for every file of a manifest that has
   * some: one query where asking file by file would take one per file.
   */
  partBytes(manifestId: string): Map<number, number> {
    const rows = this.partBytesOf.all(manifestId) as { seq: number; bytes: number }[]
    return new Map(rows.map((row) => [row.seq, row.bytes]))
  }

  /** The file's outcome; with `hash`, also what `setHash` would have recorded. */
  finishFile(
    seq: number,
    state: 'confirmed' | 'duplicate' | 'skipped',
    assetId: string | null,
    hash?: Hash,
  ): boolean {
    const values = [state, assetId, this.clock()]
    return withoutFlush(
      this.db,
      () =>
        (hash
          ? this.finishedHashed.run(...values, hash.sha256, hash.contentType, seq)
          : this.finishedFile.run(...values, seq)
        ).changes > 0,
    )
  }

  failFile(seq: number, error: string): boolean {
    return this.failedFile.run(error, this.clock(), seq).changes > 0
  }

  /** Files and bytes per state, for a progress bar. */
  progress(manifestId: string): Partial<Record<UploadFileState, { files: number; bytes: number }>> {
    const rows = this.tally.all(manifestId) as {
      state: UploadFileState
      files: number
      bytes: number
    }[]
    return Object.fromEntries(rows.map((r) => [r.state, { files: r.files, bytes: r.bytes }]))
  }
}

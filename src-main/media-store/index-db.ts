import { existsSync, renameSync } from 'node:fs'
import type Database from 'better-sqlite3'
import { openSqlite } from '../native'
import { MediaStoreError } from './errors'
import { MediaRefs, REFS_MIGRATION } from './refs'

export type MediaKind = 'output' | 'thumbnail' | 'asset'

export const MEDIA_KINDS: readonly MediaKind[] = ['output', 'thumbnail', 'asset']

export interface EntryRow {
  sha256: string
  size: number
  content_type: string
  kind: MediaKind | null
  source: string | null
  created_at: number
  last_used_at: number
}

export type LruRow = Pick<EntryRow, 'sha256' | 'size' | 'last_used_at'>

/**
 * Append-only: a released build reads every database an older one wrote. Times are epoch
 * milliseconds (integers compare and index cheaply). Thumbnail links point at the thumbnail with
 * a cascade, but not at their source: a thumbnail outlives an evicted full-size output, which is
 * what offline review most needs to keep.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE entries (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    kind TEXT CHECK (kind IN ('output', 'thumbnail', 'asset')),
    source TEXT,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX entries_by_last_used ON entries(last_used_at, sha256);

  CREATE TABLE thumbnails (
    source_sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    thumbnail_sha256 TEXT NOT NULL REFERENCES entries(sha256) ON DELETE CASCADE,
    PRIMARY KEY (source_sha256, size)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX thumbnails_by_thumbnail ON thumbnails(thumbnail_sha256);
  `,
  REFS_MIGRATION,
  // Animated thumbnails (what a preview of an animation shows) beside the still ones that lists
  // show: the same source and size may have one of each.
  `
  CREATE TABLE animated_thumbnails (
    source_sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    thumbnail_sha256 TEXT NOT NULL REFERENCES entries(sha256) ON DELETE CASCADE,
    PRIMARY KEY (source_sha256, size)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX animated_thumbnails_by_thumbnail ON animated_thumbnails(thumbnail_sha256);
  `,
]

const DAMAGE_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB'])

function isDamage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && DAMAGE_CODES.has(code)
}

function openAndMigrate(file: string): Database.Database {
  const db = openSqlite(file)
  try {
    db.pragma('journal_mode = WAL')
    // The index is a cache of what the folder holds (reconciled at every open), not the ledger:
    // NORMAL loses at most the last uses on power loss, never consistency.
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    db.pragma('busy_timeout = 2000')
    const version = db.pragma('user_version', { simple: true }) as number
    if (version > MIGRATIONS.length) {
      throw new MediaStoreError(
        'INDEX_FROM_NEWER_VERSION',
        `The media index ${file} was written by a newer Atelier (schema ${version}); update Atelier or use another --home.`,
      )
    }
    MIGRATIONS.slice(version).forEach((sql, index) => {
      db.transaction(() => {
        db.exec(sql)
        db.pragma(`user_version = ${version + index + 1}`)
      })()
    })
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

/**
 * The index of the media store: one row per stored file. Every statement is prepared once and
 * touches a handful of rows through an index, so a call never stalls the main thread.
 */
export class MediaIndex {
  private readonly db: Database.Database
  private readonly getStmt: Database.Statement<[string], EntryRow>
  private readonly upsertStmt: Database.Statement<[EntryRow]>
  private readonly touchStmt: Database.Statement<[number, string]>
  private readonly deleteStmt: Database.Statement<[string]>
  private readonly pageStmt: Database.Statement<[number, string, number], LruRow>
  private readonly rangeStmt: Database.Statement<[string, string], { sha256: string }>
  private readonly totalsStmt: Database.Statement<[], { entries: number; bytes: number }>
  private readonly newestUseStmt: Database.Statement<[], { newest: number | null }>
  private readonly prefixesStmt: Database.Statement<[], { prefix: string }>
  private readonly thumbnailStmt: Database.Statement<[string, number], { thumbnail_sha256: string }>
  private readonly linkStmt: Database.Statement<[string, number, string]>
  private readonly animatedStmt: Database.Statement<[string, number], { thumbnail_sha256: string }>
  private readonly linkAnimatedStmt: Database.Statement<[string, number, string]>
  /** Which run output or asset each file is, and how far fetching each owner got. */
  readonly refs: MediaRefs

  constructor(readonly file: string) {
    this.db = MediaIndex.open(file)
    this.refs = new MediaRefs(this.db)
    this.getStmt = this.db.prepare('SELECT * FROM entries WHERE sha256 = ?')
    // A second writer of the same bytes (another process, a reconciled orphan) improves what is
    // known about them but never makes it worse.
    this.upsertStmt = this.db.prepare(`
      INSERT INTO entries (sha256, size, content_type, kind, source, created_at, last_used_at)
      VALUES (@sha256, @size, @content_type, @kind, @source, @created_at, @last_used_at)
      ON CONFLICT (sha256) DO UPDATE SET
        content_type = CASE WHEN entries.content_type = 'application/octet-stream'
                            THEN excluded.content_type ELSE entries.content_type END,
        kind = coalesce(entries.kind, excluded.kind),
        source = coalesce(entries.source, excluded.source),
        last_used_at = max(entries.last_used_at, excluded.last_used_at)`)
    this.touchStmt = this.db.prepare(
      'UPDATE entries SET last_used_at = max(last_used_at, ?) WHERE sha256 = ?',
    )
    this.deleteStmt = this.db.prepare('DELETE FROM entries WHERE sha256 = ?')
    this.pageStmt = this.db.prepare(`
      SELECT sha256, size, last_used_at FROM entries
      WHERE (last_used_at, sha256) > (?, ?)
      ORDER BY last_used_at, sha256
      LIMIT ?`)
    this.rangeStmt = this.db.prepare(
      'SELECT sha256 FROM entries WHERE sha256 >= ? AND sha256 < ? ORDER BY sha256',
    )
    this.totalsStmt = this.db.prepare(
      'SELECT count(*) AS entries, CAST(total(size) AS INTEGER) AS bytes FROM entries',
    )
    this.newestUseStmt = this.db.prepare('SELECT max(last_used_at) AS newest FROM entries')
    this.prefixesStmt = this.db.prepare(
      'SELECT DISTINCT substr(sha256, 1, 2) AS prefix FROM entries ORDER BY sha256',
    )
    this.thumbnailStmt = this.db.prepare(
      'SELECT thumbnail_sha256 FROM thumbnails WHERE source_sha256 = ? AND size = ?',
    )
    this.linkStmt = this.db.prepare(`
      INSERT INTO thumbnails (source_sha256, size, thumbnail_sha256) VALUES (?, ?, ?)
      ON CONFLICT (source_sha256, size) DO UPDATE SET thumbnail_sha256 = excluded.thumbnail_sha256`)
    this.animatedStmt = this.db.prepare(
      'SELECT thumbnail_sha256 FROM animated_thumbnails WHERE source_sha256 = ? AND size = ?',
    )
    this.linkAnimatedStmt = this.db.prepare(`
      INSERT INTO animated_thumbnails (source_sha256, size, thumbnail_sha256) VALUES (?, ?, ?)
      ON CONFLICT (source_sha256, size) DO UPDATE SET thumbnail_sha256 = excluded.thumbnail_sha256`)
  }

  /**
   * A damaged index is set aside (renamed, never deleted) and a new one started: the files are
   * the truth, and reconciliation at open adopts every one of them again.
   */
  private static open(file: string): Database.Database {
    try {
      return openAndMigrate(file)
    } catch (error) {
      if (!isDamage(error)) throw error
      const aside = `${file}.damaged-${Date.now()}`
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix)
      }
      return openAndMigrate(file)
    }
  }

  get(sha256: string): EntryRow | undefined {
    return this.getStmt.get(sha256)
  }

  upsert(row: EntryRow): void {
    this.upsertStmt.run(row)
  }

  touch(sha256: string, at: number): boolean {
    return this.touchStmt.run(at, sha256).changes > 0
  }

  delete(sha256: string): boolean {
    return this.deleteStmt.run(sha256).changes > 0
  }

  /** Entries in least-recently-used order, strictly after the (last_used_at, sha256) cursor. */
  page(afterUsed: number, afterSha256: string, limit: number): LruRow[] {
    return this.pageStmt.all(afterUsed, afterSha256, limit)
  }

  /** The hashes that start with a two-digit shard prefix. */
  shard(prefix: string): string[] {
    // 'g' sorts after every hex digit, so [prefix, prefix + 'g') is exactly the shard.
    return this.rangeStmt.all(prefix, `${prefix}g`).map((row) => row.sha256)
  }

  /** The two-digit shard prefixes that have at least one entry. */
  prefixes(): Set<string> {
    return new Set(this.prefixesStmt.all().map((row) => row.prefix))
  }

  totals(): { entries: number; bytes: number } {
    return this.totalsStmt.get() ?? { entries: 0, bytes: 0 }
  }

  newestUse(): number {
    return this.newestUseStmt.get()?.newest ?? 0
  }

  /** The still thumbnail of `source` at `size`, or with `animated` the animated one. */
  thumbnailOf(source: string, size: number, animated = false): string | undefined {
    return (animated ? this.animatedStmt : this.thumbnailStmt).get(source, size)?.thumbnail_sha256
  }

  link(source: string, size: number, thumbnail: string, animated = false): void {
    ;(animated ? this.linkAnimatedStmt : this.linkStmt).run(source, size, thumbnail)
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work)()
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}

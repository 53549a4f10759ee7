import type Database from 'better-sqlite3'

/** What owns stored media: the output of a run, or an asset's content. */
export type MediaOwnerKind = 'run-output' | 'asset'

export const MEDIA_OWNER_KINDS: readonly MediaOwnerKind[] = ['run-output', 'asset']

export interface MediaOwner {
  kind: MediaOwnerKind
  id: string
}

/** One file of an owner, as its fetcher found it. */
export interface NewMediaRef {
  /** Its place among the owner's files, from 0, in the order the record lists them. */
  position: number
  /**
   * Where in the record it sits, as a dotted path: `images.0`, `video`, a flow output's name;
   * `content` or `preview` for an asset.
   */
  role: string
  sha256: string
  contentType: string
}

export interface MediaRef extends NewMediaRef {
  owner: MediaOwner
  /** The WebP thumbnail of the asked size, while it is stored; null otherwise. */
  thumbnailSha256: string | null
  /** Whether the file itself is still stored: eviction may have taken it, not its thumbnail. */
  stored: boolean
}

/**
 * done: every file of the owner was stored once (and stays done when eviction removes one: a
 * pass must not fetch back what the cap just made room from). failed: some file could not be
 * fetched; tried again from `retryAt`.
 */
export type FetchState = 'done' | 'failed'

export interface FetchRecord {
  owner: MediaOwner
  state: FetchState
  /** Failed passes in a row. */
  attempts: number
  /** Epoch milliseconds; 0 when a failed owner may be tried again at once. */
  retryAt: number
  /** The code of the last failure; null once done. */
  lastCode: string | null
  updatedAt: number
}

export type FetchOutcome = { state: 'done' } | { state: 'failed'; code: string; retryAt: number }

interface RefRow {
  owner_kind: MediaOwnerKind
  owner_id: string
  position: number
  role: string
  sha256: string
  content_type: string
  thumbnail_sha256: string | null
  stored: number
}

interface FetchRow {
  owner_kind: MediaOwnerKind
  owner_id: string
  state: FetchState
  attempts: number
  retry_at: number
  last_code: string | null
  updated_at: number
}

/**
 * Append-only step 2 of the media index. Refs and fetch records are kept apart from entries on
 * purpose, with no foreign key: a ref outlives its file, so the app still knows which sha256 a
 * run made (and shows its thumbnail, which outlives the full-size file) after eviction.
 */
export const REFS_MIGRATION = `
  CREATE TABLE refs (
    owner_kind TEXT NOT NULL CHECK (owner_kind IN ('run-output', 'asset')),
    owner_id TEXT NOT NULL,
    position INTEGER NOT NULL CHECK (position >= 0),
    role TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    content_type TEXT NOT NULL,
    PRIMARY KEY (owner_kind, owner_id, position)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX refs_by_sha256 ON refs (sha256);

  CREATE TABLE fetches (
    owner_kind TEXT NOT NULL CHECK (owner_kind IN ('run-output', 'asset')),
    owner_id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('done', 'failed')),
    attempts INTEGER NOT NULL,
    retry_at INTEGER NOT NULL,
    last_code TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (owner_kind, owner_id)
  ) STRICT, WITHOUT ROWID;
`

/** The refs and fetch records of the media index; statements prepared once. */
export class MediaRefs {
  private readonly upsertRef: Database.Statement
  private readonly refsOf: Database.Statement<[number, MediaOwnerKind, string], RefRow>
  private readonly ownersOf: Database.Statement<
    [string],
    { owner_kind: MediaOwnerKind; owner_id: string }
  >
  private readonly fetchOf: Database.Statement<[MediaOwnerKind, string], FetchRow>
  private readonly done: Database.Statement
  private readonly failed: Database.Statement
  private readonly write: (
    owner: MediaOwner,
    refs: readonly NewMediaRef[],
    outcome: FetchOutcome | null,
    at: number,
  ) => void

  constructor(db: Database.Database) {
    this.upsertRef = db.prepare(`
      INSERT INTO refs (owner_kind, owner_id, position, role, sha256, content_type)
      VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (owner_kind, owner_id, position) DO UPDATE SET
        role = excluded.role, sha256 = excluded.sha256, content_type = excluded.content_type`)
    this.refsOf = db.prepare(`
      SELECT r.owner_kind, r.owner_id, r.position, r.role, r.sha256, r.content_type,
        t.thumbnail_sha256, e.sha256 IS NOT NULL AS stored
      FROM refs r
      LEFT JOIN thumbnails t ON t.source_sha256 = r.sha256 AND t.size = ?
      LEFT JOIN entries e ON e.sha256 = r.sha256
      WHERE r.owner_kind = ? AND r.owner_id = ?
      ORDER BY r.position`)
    this.ownersOf = db.prepare(
      'SELECT DISTINCT owner_kind, owner_id FROM refs WHERE sha256 = ? ORDER BY owner_kind, owner_id',
    )
    this.fetchOf = db.prepare('SELECT * FROM fetches WHERE owner_kind = ? AND owner_id = ?')
    this.done = db.prepare(`
      INSERT INTO fetches (owner_kind, owner_id, state, attempts, retry_at, last_code, updated_at)
      VALUES (?, ?, 'done', 0, 0, NULL, ?)
      ON CONFLICT (owner_kind, owner_id) DO UPDATE SET
        state = 'done', attempts = 0, retry_at = 0, last_code = NULL,
        updated_at = excluded.updated_at`)
    this.failed = db.prepare(`
      INSERT INTO fetches (owner_kind, owner_id, state, attempts, retry_at, last_code, updated_at)
      VALUES (?, ?, 'failed', 1, ?, ?, ?)
      ON CONFLICT (owner_kind, owner_id) DO UPDATE SET
        state = 'failed', attempts = fetches.attempts + 1, retry_at = excluded.retry_at,
        last_code = excluded.last_code, updated_at = excluded.updated_at`)
    this.write = db.transaction(
      (
        owner: MediaOwner,
        refs: readonly NewMediaRef[],
        outcome: FetchOutcome | null,
        at: number,
      ) => {
        for (const ref of refs) {
          this.upsertRef.run(
            owner.kind,
            owner.id,
            ref.position,
            ref.role,
            ref.sha256,
            ref.contentType,
          )
        }
        if (outcome?.state === 'done') this.done.run(owner.kind, owner.id, at)
        else if (outcome) this.failed.run(owner.kind, owner.id, outcome.retryAt, outcome.code, at)
      },
    )
  }

  /** The refs and the outcome of a fetch, in one transaction. */
  record(
    owner: MediaOwner,
    refs: readonly NewMediaRef[],
    outcome: FetchOutcome | null,
    at: number,
  ): void {
    this.write(owner, refs, outcome, at)
  }

  of(owner: MediaOwner, thumbnailSize: number): MediaRef[] {
    return this.refsOf.all(thumbnailSize, owner.kind, owner.id).map((row) => ({
      owner: { kind: row.owner_kind, id: row.owner_id },
      position: row.position,
      role: row.role,
      sha256: row.sha256,
      contentType: row.content_type,
      thumbnailSha256: row.thumbnail_sha256,
      stored: row.stored === 1,
    }))
  }

  owners(sha256: string): MediaOwner[] {
    return this.ownersOf.all(sha256).map((row) => ({ kind: row.owner_kind, id: row.owner_id }))
  }

  fetch(owner: MediaOwner): FetchRecord | null {
    const row = this.fetchOf.get(owner.kind, owner.id)
    if (!row) return null
    return {
      owner: { kind: row.owner_kind, id: row.owner_id },
      state: row.state,
      attempts: row.attempts,
      retryAt: row.retry_at,
      lastCode: row.last_code,
      updatedAt: row.updated_at,
    }
  }
}

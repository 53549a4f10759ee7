import { createHash } from 'node:crypto'
import type Database from 'better-sqlite3'
import { DbError } from './errors'

interface MigrationStep {
  /** 1-based, and equal to the step's position in its list plus one (checked when a list is used). */
  readonly version: number
  /** What the step does, in a few words; shown when it fails. */
  readonly name: string
  /**
   * For a step that rebuilds a table (SQLite's recipe for changing a column or a constraint):
   * foreign keys are switched off around its transaction, since that pragma is a no-op inside
   * one, and `foreign_key_check` must come back empty before the step commits.
   */
  readonly rebuildsTables?: boolean
}

/**
 * One step of a schema. The lists in `migrations/` are append-only: a released step is never
 * edited or removed, because databases in the field already carry its effects and its number.
 * Each database records the hash of every step applied to it, and a step whose hash no longer
 * matches is refused (MIGRATION_CHANGED), so an edit to a released step cannot go unnoticed.
 */
export type Migration = MigrationStep &
  (
    | {
        /** SQL run inside the step's transaction; its text is what the recorded hash is of. */
        readonly up: string
        readonly checksumText?: undefined
      }
    | {
        /** For what SQL alone cannot express. */
        readonly up: (db: Database.Database) => void
        /**
         * What the recorded hash is of, in place of the function: its source text is no stable
         * identity, since the main process is bundled and may be minified (electron-vite), so
         * the same step would hash differently from build to build. Write what the function
         * does, with a revision tag, and never change it once the step has shipped.
         */
        readonly checksumText: string
      }
  )

export interface MigrationReport {
  from: number
  to: number
  /** `version name` of each step applied, in order. */
  applied: string[]
}

export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.length
}

export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number
}

/** A list whose numbers skip or repeat would apply steps twice or never; refuse it loudly. */
export function checkMigrationList(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `Migration "${migration.name}" is number ${migration.version} at position ${index + 1}; the list must be numbered 1, 2, 3… with nothing removed.`,
      )
    }
    if (typeof migration.up !== 'string' && !migration.checksumText) {
      throw new Error(
        `Migration "${migration.name}" runs a function but has no checksumText; give it one (what it does, with a revision tag), so its hash can be recorded.`,
      )
    }
  })
}

/** sha256 (hex) of the step's SQL, or of its `checksumText` for a function step. */
export function migrationHash(migration: Migration): string {
  const text = migration.checksumText === undefined ? migration.up : migration.checksumText
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/**
 * Brings `db` up to `target` (by default the newest step), one transaction per step, each one
 * also setting `user_version` and recording the step's hash, so a crash leaves the database
 * exactly at some step. A database already past the newest step this build knows was written by
 * a newer Atelier, and one whose applied steps this build has changed cannot be trusted to match
 * what the code expects: both are refused before anything is written, rather than guessed at.
 */
export function migrate(
  db: Database.Database,
  migrations: readonly Migration[],
  file: string,
  target: number = latestVersion(migrations),
): MigrationReport {
  checkMigrationList(migrations)
  const latest = latestVersion(migrations)
  if (target < 0 || target > latest) throw new RangeError(`No schema version ${target}.`)
  const from = schemaVersion(db)
  if (from > latest) {
    throw new DbError(
      'DATABASE_FROM_NEWER_VERSION',
      `${file} was written by a newer version of Atelier: its schema is version ${from}, and this version of Atelier knows versions up to ${latest}. Update Atelier to open it, or start with another home folder; the file was not changed.`,
      file,
    )
  }
  const recorded = recordedHashes(db)
  for (const [version, hash] of recorded) {
    const migration = migrations[version - 1]
    if (migration) refuseIfChanged(migration, hash, file)
  }
  if (migrations.slice(0, from).some((step) => !recorded.has(step.version))) {
    recordReleasedSteps(db, migrations, file)
  }
  const applied: string[] = []
  for (const migration of migrations.slice(from, target)) {
    if (applyStep(db, migration, file)) applied.push(`${migration.version} ${migration.name}`)
  }
  return { from, to: Math.max(from, schemaVersion(db)), applied }
}

/**
 * The hash of each step applied, by version. Kept in the database it describes, written in the
 * same transaction as its step, so the record can never disagree with what was applied.
 */
const CREATE_RECORD = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL,
    -- Null for a step applied by a build from before hashes were recorded (filled in later).
    applied_ms INTEGER
  ) STRICT;
`

function recordedHashes(db: Database.Database): Map<number, string> {
  const exists = db
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
    .get()
  if (!exists) return new Map()
  const rows = db.prepare('SELECT version, hash FROM schema_migrations').all() as {
    version: number
    hash: string
  }[]
  return new Map(rows.map((row) => [row.version, row.hash]))
}

function refuseIfChanged(migration: Migration, recordedHash: string, file: string): void {
  const hash = migrationHash(migration)
  if (hash === recordedHash) return
  throw new DbError(
    'MIGRATION_CHANGED',
    `This build of Atelier changed schema step ${migration.version} (${migration.name}) after it was applied to ${file} (recorded hash ${recordedHash.slice(0, 12)}…, this build's ${hash.slice(0, 12)}…), so it cannot tell what the file really holds. Reinstall a released version of Atelier; if you are developing Atelier, undo the change to that step and add a new step at the end of the list instead. The file was not changed.`,
    file,
  )
}

/**
 * A database made before hashes were recorded has its steps but no record of them. The steps it
 * carries are the released ones, which is what this build's list holds (the list is
 * append-only), so their hashes are recorded now, once, and checked at every later open.
 */
function recordReleasedSteps(
  db: Database.Database,
  migrations: readonly Migration[],
  file: string,
): void {
  const record = db.transaction(() => {
    // Read again under the write lock: another process may have applied or recorded steps since.
    const current = schemaVersion(db)
    db.exec(CREATE_RECORD)
    const insert = db.prepare(
      'INSERT OR IGNORE INTO schema_migrations (version, name, hash, applied_ms) VALUES (?, ?, ?, NULL)',
    )
    for (const migration of migrations.slice(0, current)) {
      insert.run(migration.version, migration.name, migrationHash(migration))
    }
  })
  try {
    record.immediate()
  } catch (error) {
    throw new DbError(
      'MIGRATION_FAILED',
      `Could not record the schema steps already applied to ${file}: ${(error as Error).message}. Nothing was changed; try again.`,
      file,
      { cause: error },
    )
  }
}

/** False when another process applied the step first (both started at once). */
function applyStep(db: Database.Database, migration: Migration, file: string): boolean {
  const step = db.transaction(() => {
    // Read again under the write lock: the version read before may be stale by now.
    const current = schemaVersion(db)
    if (current >= migration.version) {
      // The other process may run another build: check the step it recorded, too.
      const hash = recordedHashes(db).get(migration.version)
      if (hash !== undefined) refuseIfChanged(migration, hash, file)
      return false
    }
    if (current !== migration.version - 1) {
      throw new Error(`the database is at version ${current}, not ${migration.version - 1}`)
    }
    db.exec(CREATE_RECORD)
    if (typeof migration.up === 'string') db.exec(migration.up)
    else migration.up(db)
    if (migration.rebuildsTables) {
      const broken = db.pragma('foreign_key_check') as unknown[]
      if (broken.length > 0) throw new Error(`${broken.length} rows break a foreign key`)
    }
    db.prepare(
      'INSERT OR REPLACE INTO schema_migrations (version, name, hash, applied_ms) VALUES (?, ?, ?, ?)',
    ).run(migration.version, migration.name, migrationHash(migration), Date.now())
    db.pragma(`user_version = ${migration.version}`)
    return true
  })
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number
  if (migration.rebuildsTables) db.pragma('foreign_keys = OFF')
  try {
    // IMMEDIATE takes the write lock up front, so two processes cannot both start the same step.
    return step.immediate()
  } catch (error) {
    if (error instanceof DbError) throw error
    throw new DbError(
      'MIGRATION_FAILED',
      `Could not upgrade ${file} to schema version ${migration.version} (${migration.name}): ${(error as Error).message}. The step was rolled back and the file is still at version ${migration.version - 1}.`,
      file,
      { cause: error },
    )
  } finally {
    if (migration.rebuildsTables) db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`)
  }
}

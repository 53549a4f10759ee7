import type Database from 'better-sqlite3'
import { DbError } from './errors'

/**
 * One step of a schema. The lists in `migrations/` are append-only: a released step is never
 * edited or removed, because databases in the field already carry its effects and its number.
 */
export interface Migration {
  /** 1-based, and equal to the step's position in its list plus one (checked when a list is used). */
  readonly version: number
  /** What the step does, in a few words; shown when it fails. */
  readonly name: string
  /** SQL run inside the step's transaction, or a function for what SQL alone cannot express. */
  readonly up: string | ((db: Database.Database) => void)
  /**
   * For a step that rebuilds a table (SQLite's recipe for changing a column or a constraint):
   * foreign keys are switched off around its transaction, since that pragma is a no-op inside
   * one, and `foreign_key_check` must come back empty before the step commits.
   */
  readonly rebuildsTables?: boolean
}

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
  })
}

/**
 * Brings `db` up to `target` (by default the newest step), one transaction per step, each one
 * also setting `user_version`, so a crash leaves the database exactly at some step. A database
 * already past the newest step this build knows was written by a newer Atelier: it is refused
 * rather than guessed at, since this code cannot know what the newer steps changed.
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
  const applied: string[] = []
  for (const migration of migrations.slice(from, target)) {
    if (applyStep(db, migration, file)) applied.push(`${migration.version} ${migration.name}`)
  }
  return { from, to: Math.max(from, schemaVersion(db)), applied }
}

/** False when another process applied the step first (both started at once). */
function applyStep(db: Database.Database, migration: Migration, file: string): boolean {
  const step = db.transaction(() => {
    // Read again under the write lock: the version read before may be stale by now.
    const current = schemaVersion(db)
    if (current >= migration.version) return false
    if (current !== migration.version - 1) {
      throw new Error(`the database is at version ${current}, not ${migration.version - 1}`)
    }
    if (typeof migration.up === 'string') db.exec(migration.up)
    else migration.up(db)
    if (migration.rebuildsTables) {
      const broken = db.pragma('foreign_key_check') as unknown[]
      if (broken.length > 0) throw new Error(`${broken.length} rows break a foreign key`)
    }
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

/**
 * Stable codes for the failures of the local databases. The app and the `atelier` command switch
 * on these (to offer "set the ledger aside", to say "update Atelier"), never on the message.
 */
export type DbErrorCode =
  /** `user_version` is above the newest migration this build knows. */
  | 'DATABASE_FROM_NEWER_VERSION'
  /** The ledger failed its check or cannot be read; nothing was moved or changed. */
  | 'LEDGER_DAMAGED'
  /** A migration failed and was rolled back; the database is at the version before it. */
  | 'MIGRATION_FAILED'
  /**
   * A step already applied to the file differs (by its recorded hash) from the same step in this
   * build: a released step was edited. Refused before anything is written.
   */
  | 'MIGRATION_CHANGED'
  /** The file could not be opened for a reason that is not damage (a lock, the disk, rights). */
  | 'DATABASE_OPEN_FAILED'
  /** The database refused a setting Atelier relies on (WAL on a file system without locks). */
  | 'DATABASE_SETUP_FAILED'

export class DbError extends Error {
  override readonly name = 'DbError'

  constructor(
    readonly code: DbErrorCode,
    message: string,
    /** The database file the error is about. */
    readonly file: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }

  /** What a log line or the IPC boundary may carry: no cause, no stack. */
  toJSON(): { name: string; code: DbErrorCode; message: string; file: string } {
    return { name: this.name, code: this.code, message: this.message, file: this.file }
  }
}

export function isDbError(value: unknown): value is DbError {
  return value instanceof DbError
}

import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { moveAside, openChecked, type Synchronous } from './connection'
import { DbError } from './errors'
import { migrate } from './migrate'
import { LEDGER_MIGRATIONS } from './migrations/ledger'
import { MIRROR_MIGRATIONS } from './migrations/mirror'
import { Ledger, Mirror, type Clock } from './stores'

export const MIRROR_FILE = 'mirror.sqlite'
export const LEDGER_FILE = 'ledger.sqlite'

/** synchronous is per connection, which is why the cache and the ledger are separate files. */
export const SYNCHRONOUS: Record<'mirror' | 'ledger', Synchronous> = {
  mirror: 'NORMAL',
  ledger: 'FULL',
}

export type DbNoticeCode = 'MIRROR_REBUILT' | 'LEDGER_SET_ASIDE'

/** Something the user must be told about what happened to their files. */
export interface DbNotice {
  code: DbNoticeCode
  message: string
  /** The file that was found damaged (now new and empty). */
  file: string
  /** Where the damaged file was moved; it is kept, never deleted. */
  movedTo: string
}

export interface OpenDatabasesOptions {
  /** Called once per notice, as it happens; the same notices come back in the result. */
  onNotice?: (notice: DbNotice) => void
  /**
   * The user chose to set a damaged ledger aside: it is renamed (kept, never deleted) and a new
   * empty ledger takes its place. Without this a damaged ledger stops the start with
   * LEDGER_DAMAGED, since it may hold writes and run intents that exist nowhere else.
   */
  setLedgerAside?: boolean
  /** Epoch milliseconds; stamps moved files and the repositories' own times. */
  clock?: Clock
}

export interface Databases {
  mirror: Mirror
  ledger: Ledger
  notices: DbNotice[]
  close: () => void
}

/**
 * Opens (creating when missing) `<home>/mirror.sqlite` and `<home>/ledger.sqlite`, checks
 * both with quick_check and brings both to the newest schema. The ledger is opened first, so
 * a ledger that stops the start leaves the mirror untouched.
 */
export function openDatabases(home: string, options: OpenDatabasesOptions = {}): Databases {
  const clock = options.clock ?? Date.now
  const notices: DbNotice[] = []
  const notify = (notice: DbNotice) => {
    notices.push(notice)
    options.onNotice?.(notice)
  }
  mkdirSync(home, { recursive: true })

  const ledgerFile = join(home, LEDGER_FILE)
  const ledgerDb = openLedger(ledgerFile, options.setLedgerAside === true, clock, notify)
  let mirrorDb: Database.Database
  try {
    mirrorDb = openMirror(join(home, MIRROR_FILE), clock, notify)
  } catch (error) {
    ledgerDb.close()
    throw error
  }
  const mirror = new Mirror(mirrorDb, join(home, MIRROR_FILE), clock)
  const ledger = new Ledger(ledgerDb, ledgerFile, clock)
  return {
    mirror,
    ledger,
    notices,
    close: () => {
      mirror.close()
      ledger.close()
    },
  }
}

function openMirror(file: string, clock: Clock, notify: (n: DbNotice) => void): Database.Database {
  const health = openChecked(file, SYNCHRONOUS.mirror)
  if (health.ok) return migrated(health.db, file, 'mirror')
  // A cache: keep the damaged copy for whoever wants to look at it, start empty, refill by sync.
  const movedTo = moveAside(file, 'damaged', new Date(clock()))
  const fresh = openChecked(file, SYNCHRONOUS.mirror)
  if (!fresh.ok) {
    throw new DbError(
      'DATABASE_OPEN_FAILED',
      `Could not create a new mirror at ${file}: ${fresh.problem}.`,
      file,
    )
  }
  const db = migrated(fresh.db, file, 'mirror')
  notify({
    code: 'MIRROR_REBUILT',
    message: `The local copy of your runs, evaluations and assets (${file}) was damaged (${health.problem}), so Atelier started a new, empty one. The damaged file was kept as ${movedTo}. The next sync downloads everything again from the service; until then, offline browsing and search show only what has been synced since. Your unsent changes and run intents are in the ledger, which was not affected.`,
    file,
    movedTo,
  })
  return db
}

function openLedger(
  file: string,
  setAside: boolean,
  clock: Clock,
  notify: (n: DbNotice) => void,
): Database.Database {
  const existed = existsSync(file)
  const health = openChecked(file, SYNCHRONOUS.ledger)
  if (health.ok) return migrated(health.db, file, 'ledger')
  if (!existed) {
    throw new DbError(
      'DATABASE_OPEN_FAILED',
      `Could not create the ledger at ${file}: ${health.problem}.`,
      file,
    )
  }
  if (!setAside) {
    throw new DbError(
      'LEDGER_DAMAGED',
      `Atelier's ledger at ${file} is damaged or cannot be read (${health.problem}). It holds changes made offline that were not sent yet, run intents and upload progress, which exist nowhere else, so Atelier has not moved or changed it. Copy the file (with any ${file}-wal next to it) somewhere safe first. Then either restore a backup of it, or let Atelier set it aside: it is kept under a new name and Atelier starts with an empty ledger, and the unsent changes in it are not sent.`,
      file,
    )
  }
  const movedTo = moveAside(file, 'set-aside', new Date(clock()))
  const fresh = openChecked(file, SYNCHRONOUS.ledger)
  if (!fresh.ok) {
    throw new DbError(
      'DATABASE_OPEN_FAILED',
      `Could not create a new ledger at ${file}: ${fresh.problem}.`,
      file,
    )
  }
  const db = migrated(fresh.db, file, 'ledger')
  notify({
    code: 'LEDGER_SET_ASIDE',
    message: `As you asked, the damaged ledger was set aside as ${movedTo} and Atelier started a new, empty one at ${file}. Changes made offline that were still waiting in the old ledger will not be sent; the old file was kept, not deleted.`,
    file,
    movedTo,
  })
  return db
}

function migrated(
  db: Database.Database,
  file: string,
  which: 'mirror' | 'ledger',
): Database.Database {
  try {
    migrate(db, which === 'mirror' ? MIRROR_MIGRATIONS : LEDGER_MIGRATIONS, file)
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import Database from 'better-sqlite3'
import { isNativeModuleError, openSqlite } from '../native'
import { DbError } from './errors'

export type Synchronous = 'NORMAL' | 'FULL'

/** How long a connection waits for another one's lock (the app and the CLI share the files). */
export const BUSY_TIMEOUT_MS = 5_000

/** Codes that mean the bytes on disk are bad or cannot be read, as opposed to a busy lock. */
const DAMAGE_CODES = new Set([
  'SQLITE_NOTADB',
  'SQLITE_CANTOPEN',
  'SQLITE_PERM',
  'SQLITE_IOERR_READ',
  'SQLITE_IOERR_SHORT_READ',
])

export function isDamageError(error: unknown): boolean {
  if (!(error instanceof Database.SqliteError)) return false
  return error.code.startsWith('SQLITE_CORRUPT') || DAMAGE_CODES.has(error.code)
}

/** Opens `file` (creating it) with the settings every Atelier connection uses. */
export function openConnection(file: string, synchronous: Synchronous): Database.Database {
  const db = openSqlite(file)
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
    const mode = db.pragma('journal_mode = WAL', { simple: true }) as string
    if (mode.toLowerCase() !== 'wal') {
      throw new DbError(
        'DATABASE_SETUP_FAILED',
        `${file} cannot use write-ahead logging (it stays in "${mode}" mode), which Atelier needs; keep the home folder on a local disk.`,
        file,
      )
    }
    db.pragma(`synchronous = ${synchronous}`)
    db.pragma('foreign_keys = ON')
    if (observer !== null) observe(db, file)
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

/**
 * `PRAGMA quick_check`: every page and b-tree of the file is walked, without the slower index
 * cross-checks of integrity_check. The problems it reports, or none.
 */
export function quickCheck(db: Database.Database): string[] {
  const rows = db.pragma('quick_check') as { quick_check: string }[]
  const problems = rows.map((row) => row.quick_check)
  return problems.length === 1 && problems[0] === 'ok' ? [] : problems
}

export type Health = { ok: true; db: Database.Database } | { ok: false; problem: string }

/**
 * Opens and checks `file`. Damage comes back as a value, for the caller to decide what to do
 * with the file; anything else (a lock held too long, a full disk) is thrown, because moving a
 * healthy file aside over a busy lock would lose data for nothing.
 */
export function openChecked(file: string, synchronous: Synchronous): Health {
  let db: Database.Database | undefined
  try {
    const untouched = leftAsClosed(file)
    db = openConnection(file, synchronous)
    const problems = untouched ? [] : quickCheck(db)
    if (problems.length === 0) return { ok: true, db }
    db.close()
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''
    return { ok: false, problem: `${problems.slice(0, 3).join('; ')}${more}` }
  } catch (error) {
    if (db?.open) db.close()
    if (isDamageError(error)) return { ok: false, problem: (error as Error).message }
    // A driver that cannot load says itself what to run; "could not open <file>" would mislead.
    if (error instanceof DbError || isNativeModuleError(error)) throw error
    throw new DbError(
      'DATABASE_OPEN_FAILED',
      `Could not open ${file}: ${(error as Error).message}.`,
      file,
      { cause: error },
    )
  }
}

/** Beside each database: how its file was when Atelier last closed it cleanly. */
const CLOSED_SUFFIX = '-closed.json'

interface FileState {
  ino: number
  size: number
  mtimeMs: number
  ctimeMs: number
}

function fileState(file: string): FileState | null {
  try {
    const { ino, size, mtimeMs, ctimeMs } = statSync(file)
    return { ino, size, mtimeMs, ctimeMs }
  } catch {
    return null
  }
}

/**
 * Whether `file` is exactly as a clean close left it — same inode, size and times, no WAL — so
 * that quick_check can be skipped: it reads every page of the file, a cost that grows with the
 * mirror (0.2 s at 3,000 runs) and was paid by every command. A crash, another program's write
 * or a copied-in file changes one of them, and the check runs.
 */
function leftAsClosed(file: string): boolean {
  if (existsSync(`${file}-wal`)) return false
  const now = fileState(file)
  if (now === null) return false
  try {
    const then = JSON.parse(readFileSync(file + CLOSED_SUFFIX, 'utf8')) as Partial<FileState>
    return (
      then.ino === now.ino &&
      then.size === now.size &&
      then.mtimeMs === now.mtimeMs &&
      then.ctimeMs === now.ctimeMs
    )
  } catch {
    return false
  }
}

/**
 * Closes `db` and, when it was the file's last connection (SQLite then checkpoints and removes
 * the WAL), notes how the file was left, for the next `openChecked`. With another connection
 * still open, the note is removed: that one's writes are still to come.
 */
export function closeNoted(db: Database.Database, file: string): void {
  db.close()
  const state = existsSync(`${file}-wal`) ? null : fileState(file)
  try {
    if (state === null) rmSync(file + CLOSED_SUFFIX, { force: true })
    else writeFileSync(file + CLOSED_SUFFIX, JSON.stringify(state))
  } catch {
    // Only a shortcut is lost: the next open checks the file.
  }
}

/** A file-name-safe UTC stamp, e.g. 20260101T120000Z (no colons, for Windows). */
export function fileStamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '')
}

/**
 * Renames `file` to `<file>.<label>-<stamp>` and its -wal and -shm to the same new name plus
 * their suffix, so the set stays together and SQLite tools open the moved copy with the writes
 * its WAL still holds. Nothing is deleted. Returns the new path of the main file.
 */
export function moveAside(file: string, label: string, now: Date): string {
  const base = `${file}.${label}-${fileStamp(now)}`
  let target = base
  for (let n = 2; [target, `${target}-wal`, `${target}-shm`].some(existsSync); n++) {
    target = `${base}-${n}`
  }
  if (existsSync(file)) renameSync(file, target)
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(file + suffix)) renameSync(file + suffix, target + suffix)
  }
  return target
}

/**
 * Runs `write` on a `synchronous = FULL` connection with a commit that is not flushed to disk
 * (`NORMAL`): still atomic, and kept if the process is killed, but a power loss can undo it
 * until the next FULL commit or checkpoint flushes the log (which carries it along). Each
 * flush blocks the event loop for a disk round trip; this is for writes that a later look-up
 * redoes safely when lost, such as an intent moving from sending to dispatched (it is looked
 * up again by its key). Inside a transaction it just joins it, whose commit decides.
 */
export function withoutFlush<T>(db: Database.Database, write: () => T): T {
  if (db.inTransaction) return write()
  // Not prepared once: SQLite applies this pragma when the statement is compiled, not run.
  db.pragma('synchronous = NORMAL')
  try {
    return write()
  } finally {
    db.pragma('synchronous = FULL')
  }
}

/** One transaction that held the thread, as `observeTransactions` reports it. */
export interface TransactionTiming {
  /** The database file's name: `mirror.sqlite`, `ledger.sqlite`. */
  file: string
  /**
   * For a transaction function, where it was made: the first caller outside this file and
   * `Store.transaction`, as "Type.function (path under src-main)". For a statement run outside any
   * transaction (SQLite wraps it in one of its own), its SQL, shortened.
   */
  label: string
  kind: 'transaction' | 'statement'
  /** Wall time on the calling thread, in milliseconds. */
  ms: number
}

export type TransactionObserver = (timing: TransactionTiming) => void

let observer: TransactionObserver | null = null

/**
 * For benchmarks: reports every outermost transaction of the connections opened from now on,
 * with how long it blocked the thread, to `next` (which must not throw); null stops the reports.
 * A connection opened while no observer is set is left exactly as better-sqlite3 made it, so
 * the app pays nothing. Counted: transaction functions (timed whole, BEGIN to COMMIT, when not
 * nested in another) and statements' run/get/all outside a transaction. Not counted: `pragma`,
 * `exec` and `iterate`, which nothing on the hot paths uses. Per thread: a worker's connections
 * report to the observer set in that worker.
 */
export function observeTransactions(next: TransactionObserver | null): void {
  observer = next
}

type Call = (this: unknown, ...args: unknown[]) => unknown
type TransactionFunction = Call & Record<'default' | 'deferred' | 'immediate' | 'exclusive', Call>

function observe(db: Database.Database, file: string): void {
  const name = basename(file)
  const timed = (call: Call, label: string, kind: TransactionTiming['kind']): Call =>
    function (this: unknown, ...args: unknown[]): unknown {
      // Nested work is part of the transaction around it, which is what holds the thread.
      if (db.inTransaction) return call.apply(this, args)
      const started = performance.now()
      try {
        return call.apply(this, args)
      } finally {
        observer?.({ file: name, label, kind, ms: performance.now() - started })
      }
    }

  const transaction = db.transaction.bind(db) as (fn: Call) => TransactionFunction
  Object.defineProperty(db, 'transaction', {
    value: (fn: Call): TransactionFunction => {
      const made = transaction(fn)
      const label = madeAt()
      // Same shape as better-sqlite3's: each variant carries all four and the database.
      const variants = {
        default: timed(made.default, label, 'transaction'),
        deferred: timed(made.deferred, label, 'transaction'),
        immediate: timed(made.immediate, label, 'transaction'),
        exclusive: timed(made.exclusive, label, 'transaction'),
      }
      const properties: PropertyDescriptorMap = {
        default: { value: variants.default },
        deferred: { value: variants.deferred },
        immediate: { value: variants.immediate },
        exclusive: { value: variants.exclusive },
        database: { value: db, enumerable: true },
      }
      for (const variant of Object.values(variants)) Object.defineProperties(variant, properties)
      return variants.default as TransactionFunction
    },
  })

  const prepare = db.prepare.bind(db) as (source: string) => Database.Statement
  Object.defineProperty(db, 'prepare', {
    value: (source: string): Database.Statement => {
      const statement = prepare(source)
      const label = source.replace(/\s+/g, ' ').trim().slice(0, 80)
      for (const method of ['run', 'get', 'all'] as const) {
        const call: Call = Reflect.get(statement, method)
        Object.defineProperty(statement, method, { value: timed(call, label, 'statement') })
      }
      return statement
    },
  })
}

/** Where a transaction function is being made, skipping this file and `Store.transaction`. */
function madeAt(): string {
  const saved = Reflect.get(Error, 'prepareStackTrace') as unknown
  const holder: { stack?: unknown } = {}
  let frames: unknown
  // The structured frames, not the text: formatting a stack costs far more than taking it. V8
  // builds `stack` on first read, so it is read before the usual formatter is put back.
  Error.prepareStackTrace = (_error, callSites) => callSites
  try {
    Error.captureStackTrace(holder, madeAt)
    frames = holder.stack
  } finally {
    Reflect.set(Error, 'prepareStackTrace', saved)
  }
  if (!Array.isArray(frames)) return '(unknown)'
  const pathOf = (frame: NodeJS.CallSite) => (frame.getFileName() ?? '').replace(/\\/g, '/')
  const callers = (frames as NodeJS.CallSite[]).filter((frame) => {
    const path = pathOf(frame)
    // `Store.transaction` makes one for its caller, who is the one worth naming.
    const helper =
      /\/db\/stores\.[cm]?[jt]s$/.test(path) && frame.getFunctionName() === 'transaction'
    return !helper && !/\/db\/connection\.[cm]?[jt]s$/.test(path)
  })
  const [site] = callers
  if (site === undefined) return '(unknown)'
  const path = pathOf(site)
  // A callback (`mirror.transaction(() => …)`) is named by the function of its file around it.
  const named = callers.find((frame) => pathOf(frame) === path && frame.getFunctionName()) ?? site
  const at = path.includes('src-main/') ? path.slice(path.lastIndexOf('src-main/') + 9) : path
  const fn = named.getFunctionName() ?? '(anonymous)'
  const type = named.getTypeName()
  const owner = named.isConstructor() ? 'new ' : type ? `${type}.` : ''
  return `${owner}${fn} (${at})`
}

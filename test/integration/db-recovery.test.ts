import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { openSync, closeSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import {
  DbError,
  LEDGER_FILE,
  MIRROR_FILE,
  MIRROR_MIGRATIONS,
  openDatabases,
  quickCheck,
  schemaVersion,
  type DbNotice,
} from '../../src-main/db'

const root = mkdtempSync(join(tmpdir(), 'atelier-db-recovery-'))
let count = 0
const freshHome = () => {
  const dir = join(root, String(++count))
  mkdirSync(dir)
  return dir
}

afterAll(() => {
  rmSync(root, { recursive: true, force: true })
})

const ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb23'
const SCOPE = { profile: 'default', orgId: ORG }
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

function run(n: number): Run {
  const at = iso(Date.UTC(2026, 0, 1) + n * 60_000)
  return {
    id: `01a1d8b1-2380-7baf-9ab3-${String(n).padStart(12, '0')}`,
    org_id: ORG,
    target_type_code: 'model',
    source_code: 'api',
    model_id: null,
    model_slug: 'atelier/text-to-image',
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: 'succeeded',
    input: { prompt: `a lighthouse in fog, study ${n}`, notes: 'x'.repeat(400) },
    output: null,
    metadata: null,
    callback_url: null,
    idempotency_key: null,
    progress: 1,
    cost: '0.0050',
    estimated_cost: '0.0050',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    duration_ms: 900,
    created_at: at,
    queued_at: at,
    started_at: at,
    completed_at: at,
    updated_at: at,
  }
}

/** A home with a few MB in each file, so that damage in the middle lands on pages in use. */
function populatedHome(): string {
  const home = freshHome()
  const { mirror, ledger, close } = openDatabases(home)
  const runs = Array.from({ length: 3_000 }, (_, n) => run(n))
  for (let i = 0; i < runs.length; i += 500) mirror.runs.upsertPage(runs.slice(i, i + 500))
  ledger.transaction(() => {
    for (let n = 0; n < 3_000; n++) {
      ledger.outbox.enqueue({
        ...SCOPE,
        kind: 'evaluation.feedback',
        subjectId: `evaluation-${n}`,
        payload: { is_positive: n % 2 === 0, reason: 'y'.repeat(300) },
      })
    }
  })
  close()
  // Closing the last connection checkpoints the WAL into the main file and removes it.
  expect(existsSync(join(home, `${MIRROR_FILE}-wal`))).toBe(false)
  return home
}

/** Overwrites 64 KiB in the middle of the file with bytes no page could hold. */
function damage(file: string): void {
  const size = statSync(file).size
  const fd = openSync(file, 'r+')
  try {
    const garbage = Buffer.alloc(64 * 1024)
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 197 + 13) % 251
    writeSync(fd, garbage, 0, garbage.length, Math.floor(size / 2 / 4096) * 4096)
  } finally {
    closeSync(fd)
  }
}

const asideOf = (home: string, file: string, label: string) =>
  readdirSync(home).filter(
    (name) => name.startsWith(`${file}.${label}-`) && !/-(wal|shm)$/.test(name),
  )

describe('a damaged mirror', () => {
  it('is detected at start, moved aside (kept, renamed), recreated empty, and the user is told', () => {
    const home = populatedHome()
    const mirrorFile = join(home, MIRROR_FILE)
    damage(mirrorFile)
    const damaged = readFileSync(mirrorFile)
    const ledgerBefore = readFileSync(join(home, LEDGER_FILE))

    const told: DbNotice[] = []
    const now = Date.UTC(2026, 10, 21, 6, 30, 0)
    const { mirror, ledger, notices, close } = openDatabases(home, {
      onNotice: (notice) => told.push(notice),
      clock: () => now,
    })
    try {
      expect(notices).toHaveLength(1)
      expect(told).toEqual(notices)
      const [notice] = notices
      const moved = asideOf(home, MIRROR_FILE, 'damaged')
      expect(moved).toEqual([`${MIRROR_FILE}.damaged-20261121T063000Z`])
      const movedTo = join(home, moved[0] ?? '')
      expect(notice).toMatchObject({ code: 'MIRROR_REBUILT', file: mirrorFile, movedTo })
      expect(notice?.message).toContain(movedTo)
      expect(notice?.message).toMatch(/damaged/)
      expect(notice?.message).toMatch(/next sync downloads everything again/)
      // The old file is still there, byte for byte, under its new name.
      expect(readFileSync(movedTo).equals(damaged)).toBe(true)
      // The new mirror is empty, current and healthy; the ledger was not touched.
      expect(mirror.runs.count(ORG)).toBe(0)
      expect(schemaVersion(mirror.db)).toBe(MIRROR_MIGRATIONS.length)
      expect(quickCheck(mirror.db)).toEqual([])
      expect(ledger.outbox.list({ limit: 1 }).items).toHaveLength(1)
      expect(readFileSync(join(home, LEDGER_FILE)).equals(ledgerBefore)).toBe(true)
      mirror.runs.upsertPage([run(1)])
      expect(mirror.runs.count(ORG)).toBe(1)
    } finally {
      close()
    }
    // The next start finds the new mirror healthy and says nothing.
    const again = openDatabases(home)
    expect(again.notices).toEqual([])
    again.close()
  })

  it('that is not a database at all is moved aside too', () => {
    const home = freshHome()
    const mirrorFile = join(home, MIRROR_FILE)
    writeFileSync(mirrorFile, 'these are not the bytes of a database\n'.repeat(2_000))
    const { mirror, notices, close } = openDatabases(home)
    try {
      expect(notices.map((n) => n.code)).toEqual(['MIRROR_REBUILT'])
      expect(asideOf(home, MIRROR_FILE, 'damaged')).toHaveLength(1)
      expect(schemaVersion(mirror.db)).toBe(MIRROR_MIGRATIONS.length)
    } finally {
      close()
    }
  })

  it('keeps each damaged copy when it happens twice in the same second', () => {
    const home = freshHome()
    const clock = () => Date.UTC(2026, 0, 1)
    for (let i = 0; i < 2; i++) {
      writeFileSync(join(home, MIRROR_FILE), 'garbage '.repeat(1_000))
      openDatabases(home, { clock }).close()
    }
    expect(asideOf(home, MIRROR_FILE, 'damaged').sort()).toEqual([
      `${MIRROR_FILE}.damaged-20260101T000000Z`,
      `${MIRROR_FILE}.damaged-20260101T000000Z-2`,
    ])
  })
})

describe('the check at start', () => {
  it('is skipped only for a file exactly as a clean close left it', () => {
    const home = populatedHome()
    const mirrorFile = join(home, MIRROR_FILE)
    const note = `${mirrorFile}-closed.json`
    // The clean close above noted how it left the file (the damage test above shows that any
    // later change of the file, which moves its times, brings the check back).
    expect(existsSync(note)).toBe(true)
    // Damage, with the note moved in step, as if Atelier itself had left the file so: the
    // check is skipped, so the start does not see it.
    damage(mirrorFile)
    const { ino, size, mtimeMs, ctimeMs } = statSync(mirrorFile)
    writeFileSync(note, JSON.stringify({ ino, size, mtimeMs, ctimeMs }))
    const skipped = openDatabases(home)
    expect(skipped.notices).toEqual([])
    // Closed without a note of its own: the file stays as the damage left it.
    skipped.mirror.db.close()
    skipped.ledger.db.close()
    // Without the note, the same file is checked, and the damage found.
    rmSync(note)
    const checked = openDatabases(home)
    try {
      expect(checked.notices.map((notice) => notice.code)).toEqual(['MIRROR_REBUILT'])
    } finally {
      checked.close()
    }
  })
})

describe('a damaged ledger', () => {
  it('stops the start with LEDGER_DAMAGED, naming the file, and is left exactly as it was', () => {
    const home = populatedHome()
    const ledgerFile = join(home, LEDGER_FILE)
    damage(ledgerFile)
    const before = readFileSync(ledgerFile)
    const mirrorBefore = readFileSync(join(home, MIRROR_FILE))

    let error: unknown
    try {
      openDatabases(home).close()
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(DbError)
    const dbError = error as DbError
    expect(dbError.code).toBe('LEDGER_DAMAGED')
    expect(dbError.file).toBe(ledgerFile)
    expect(dbError.message).toContain(ledgerFile)
    expect(dbError.message).toMatch(/not sent yet, run intents/)
    expect(dbError.message).toMatch(/Copy the file/)
    expect(dbError.toJSON()).toEqual({
      name: 'DbError',
      code: 'LEDGER_DAMAGED',
      message: dbError.message,
      file: ledgerFile,
    })
    // Nothing moved, nothing changed, nothing next to it; the mirror was not touched either.
    expect(readFileSync(ledgerFile).equals(before)).toBe(true)
    // (The notes of the last clean close, made before the damage, are not the refused start's.)
    expect(
      readdirSync(home)
        .filter((name) => !name.endsWith('-closed.json'))
        .sort(),
    ).toEqual([LEDGER_FILE, MIRROR_FILE].sort())
    expect(readFileSync(join(home, MIRROR_FILE)).equals(mirrorBefore)).toBe(true)

    // Asking again gives the same answer: the ledger is never replaced on its own.
    expect(() => openDatabases(home)).toThrow(DbError)
    expect(readFileSync(ledgerFile).equals(before)).toBe(true)
  })

  it('is set aside (kept, renamed) only when the user asks, with a notice saying where', () => {
    const home = populatedHome()
    const ledgerFile = join(home, LEDGER_FILE)
    damage(ledgerFile)
    const damaged = readFileSync(ledgerFile)

    const { mirror, ledger, notices, close } = openDatabases(home, {
      setLedgerAside: true,
      clock: () => Date.UTC(2026, 5, 1, 12, 0, 0),
    })
    try {
      const moved = asideOf(home, LEDGER_FILE, 'set-aside')
      expect(moved).toEqual([`${LEDGER_FILE}.set-aside-20260601T120000Z`])
      const movedTo = join(home, moved[0] ?? '')
      expect(notices).toEqual([
        expect.objectContaining({ code: 'LEDGER_SET_ASIDE', file: ledgerFile, movedTo }),
      ])
      expect(notices[0]?.message).toContain(movedTo)
      expect(readFileSync(movedTo).equals(damaged)).toBe(true)
      expect(ledger.outbox.list().items).toEqual([])
      // The mirror was healthy and stays as it was.
      expect(mirror.runs.count(ORG)).toBe(3_000)
    } finally {
      close()
    }
  })

  it('that is healthy is never set aside, even when asked', () => {
    const home = populatedHome()
    const { notices, ledger, close } = openDatabases(home, { setLedgerAside: true })
    try {
      expect(notices).toEqual([])
      expect(ledger.outbox.list({ limit: 500 }).items).toHaveLength(500)
    } finally {
      close()
    }
  })
})

import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import {
  BUSY_TIMEOUT_MS,
  checkMigrationList,
  DbError,
  LEDGER_FILE,
  LEDGER_MIGRATIONS,
  latestVersion,
  migrate,
  MIRROR_FILE,
  MIRROR_MIGRATIONS,
  openConnection,
  openDatabases,
  schemaVersion,
  type Migration,
} from '../../src-main/db'

const root = mkdtempSync(join(tmpdir(), 'atelier-db-migrations-'))
let count = 0
/** A fresh folder per test, all under one temp root removed at the end. */
const freshDir = () => {
  const dir = join(root, String(++count))
  mkdirSync(dir)
  return dir
}

afterAll(() => {
  rmSync(root, { recursive: true, force: true })
})

type TableInfo = { name: string; type: string; strict: number }

function tables(db: Database.Database): TableInfo[] {
  return (db.pragma('table_list') as (TableInfo & { schema: string })[]).filter(
    (t) => t.schema === 'main' && !t.name.startsWith('sqlite_'),
  )
}

const names = (db: Database.Database, type: 'table' | 'index' | 'trigger') =>
  (
    db
      .prepare(`SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%'`)
      .pluck()
      .all(type) as string[]
  ).sort()

const ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb23'

type RecordedStep = { version: number; name: string; hash: string; applied_ms: number | null }

const recordedSteps = (db: Database.Database) =>
  db.prepare('SELECT * FROM schema_migrations ORDER BY version').all() as RecordedStep[]

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** The SQL of a step of the real lists, which are all SQL today. */
function sqlOf(step: Migration): string {
  if (typeof step.up !== 'string') throw new Error(`step ${step.version} is not SQL`)
  return step.up
}

/**
 * A database as the builds before hashes were recorded left it: the steps' SQL applied one
 * transaction at a time, each setting user_version, and no record of them.
 */
function makeAsPreviousBuild(file: string, steps: readonly Migration[]): void {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  for (const step of steps) {
    db.transaction(() => {
      db.exec(sqlOf(step))
      db.pragma(`user_version = ${step.version}`)
    })()
  }
  db.close()
}

/** A copy of a list with the SQL of one step edited, as a faulty build would carry it. */
function withEditedStep(
  steps: readonly Migration[],
  version: number,
  edit: (sql: string) => string,
): Migration[] {
  return steps.map((step) =>
    step.version === version ? { version, name: step.name, up: edit(sqlOf(step)) } : step,
  )
}

const totalChanges = (db: Database.Database) =>
  db.prepare('SELECT total_changes()').pluck().get() as number

describe('mirror migrations, one step at a time on a real file', () => {
  const file = join(freshDir(), MIRROR_FILE)
  const db = openConnection(file, 'NORMAL')
  afterAll(() => db.close())

  it('starts at version 0 with nothing in it', () => {
    expect(schemaVersion(db)).toBe(0)
    expect(tables(db)).toEqual([])
  })

  it('step 1 creates the cache tables and the sync cursors, all STRICT, and no search index', () => {
    const report = migrate(db, MIRROR_MIGRATIONS, file, 1)
    expect(report).toEqual({ from: 0, to: 1, applied: ['1 cache tables and sync cursors'] })
    expect(schemaVersion(db)).toBe(1)
    const created = tables(db)
    expect(created.map((t) => t.name).sort()).toEqual(
      [
        'asset_folders',
        'assets',
        'catalog_records',
        'delivery_attempts',
        'evaluation_issues',
        'evaluation_judges',
        'evaluations',
        'flows',
        'model_inputs',
        'model_outputs',
        'model_pricing',
        'models',
        'node_runs',
        'run_callback_deliveries',
        'run_logs',
        'runs',
        'solutions',
        'sync_cursors',
        'workflows',
        // Not the step's: where each applied step's hash is recorded.
        'schema_migrations',
      ].sort(),
    )
    for (const table of created)
      expect({ table: table.name, strict: table.strict }).toEqual({ table: table.name, strict: 1 })
    expect(names(db, 'trigger')).toEqual([])
    expect(names(db, 'index')).toEqual(
      expect.arrayContaining([
        'runs_by_created',
        'runs_by_status',
        'runs_by_model',
        'evaluations_by_created',
        'assets_by_folder',
        'assets_by_sha256',
        'asset_folders_by_path',
      ]),
    )
    // Every record keeps an org_id, since a profile may switch organizations.
    for (const table of [
      'runs',
      'node_runs',
      'run_logs',
      'evaluations',
      'assets',
      'models',
      'flows',
    ]) {
      const columns = (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name)
      expect(columns).toEqual(expect.arrayContaining(['org_id', 'json']))
    }
  })

  it('step 2 adds one FTS5 index per searchable table and indexes the rows already there', () => {
    db.prepare(
      `INSERT INTO runs (id, org_id, status_code, target_type_code, source_code, created_ms,
         updated_ms, prompt, json)
       VALUES ('r1', ?, 'succeeded', 'model', 'api', 1, 1, 'a lighthouse in fog', '{}')`,
    ).run(ORG)
    const report = migrate(db, MIRROR_MIGRATIONS, file, 2)
    expect(report.applied).toEqual(['2 full-text search index'])
    expect(schemaVersion(db)).toBe(2)
    const virtual = tables(db)
      .filter((t) => t.type === 'virtual')
      .map((t) => t.name)
      .sort()
    expect(virtual).toEqual(
      [
        'asset_folders_fts',
        'assets_fts',
        'evaluation_issues_fts',
        'evaluation_judges_fts',
        'evaluations_fts',
        'flows_fts',
        'model_inputs_fts',
        'models_fts',
        'run_logs_fts',
        'runs_fts',
      ].sort(),
    )
    // Only deletions go through triggers (see repositories/rows.ts): one per index.
    expect(names(db, 'trigger')).toEqual(virtual.map((v) => `${v}_delete`).sort())
    const found = db.prepare(`SELECT rowid FROM runs_fts WHERE runs_fts MATCH 'lighthouse'`).all()
    expect(found).toHaveLength(1)
    // Ordinary tables stay STRICT; only FTS5's own shadow tables are not.
    for (const table of tables(db).filter((t) => t.type === 'table')) {
      expect({ table: table.name, strict: table.strict }).toEqual({ table: table.name, strict: 1 })
    }
  })

  it('step 3 adds the run-details marker, which goes with its run', () => {
    const report = migrate(db, MIRROR_MIGRATIONS, file, 3)
    expect(report.applied).toEqual(['3 run details fetched marker'])
    expect(schemaVersion(db)).toBe(3)
    db.prepare(
      'INSERT INTO run_details_fetched (run_id, run_updated_ms, fetched_ms) VALUES (?, 1, 2)',
    ).run('r1')
    db.prepare("DELETE FROM runs WHERE id = 'r1'").run()
    expect(db.prepare('SELECT count(*) FROM run_details_fetched').pluck().get()).toBe(0)
  })

  it('step 4 adds the one table of the mirrored collections, STRICT, with its list index', () => {
    const report = migrate(db, MIRROR_MIGRATIONS, file, 4)
    expect(report.applied).toEqual(['4 mirrored records of any collection'])
    expect(tables(db).find((t) => t.name === 'records')).toMatchObject({ strict: 1 })
    expect(names(db, 'index')).toContain('records_by_listed')
  })

  it('a second run applies nothing', () => {
    const latest = latestVersion(MIRROR_MIGRATIONS)
    expect(migrate(db, MIRROR_MIGRATIONS, file)).toEqual({ from: latest, to: latest, applied: [] })
  })
})

describe('ledger migrations, one step at a time on a real file', () => {
  const file = join(freshDir(), LEDGER_FILE)
  const db = openConnection(file, 'FULL')
  afterAll(() => db.close())

  it('step 1 creates intents and the outbox', () => {
    migrate(db, LEDGER_MIGRATIONS, file, 1)
    expect(schemaVersion(db)).toBe(1)
    expect(
      tables(db)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['intents', 'outbox', 'schema_migrations'])
    expect(tables(db).every((t) => t.strict === 1)).toBe(true)
    const outbox = (db.pragma('table_info(outbox)') as { name: string; pk: number }[]).map(
      (c) => c.name,
    )
    expect(outbox).toEqual(
      expect.arrayContaining([
        'seq',
        'kind',
        'payload',
        'created_ms',
        'attempts',
        'last_error',
        'state',
      ]),
    )
    const intents = (db.pragma('table_info(intents)') as { name: string }[]).map((c) => c.name)
    expect(intents).toEqual(
      expect.arrayContaining([
        'id',
        'flow_run_id',
        'node_id',
        'inputs_hash',
        'idempotency_key',
        'remote_run_id',
        'state',
        'created_ms',
        'updated_ms',
        'last_error',
      ]),
    )
    // The outbox's states are enforced by the database itself.
    expect(() =>
      db
        .prepare(
          `INSERT INTO outbox (profile, org_id, kind, payload, idempotency_key, state, created_ms,
             updated_ms) VALUES ('p', 'o', 'k', '{}', 'key', 'lost', 0, 0)`,
        )
        .run(),
    ).toThrow(/CHECK constraint failed/)
    db.prepare(
      `INSERT INTO outbox (profile, org_id, kind, payload, idempotency_key, created_ms, updated_ms)
       VALUES ('p', 'o', 'evaluation.feedback', '{"is_positive":true}', 'k1', 0, 0)`,
    ).run()
  })

  it('step 2 adds the upload tables and keeps the outbox rows', () => {
    migrate(db, LEDGER_MIGRATIONS, file, 2)
    expect(schemaVersion(db)).toBe(2)
    expect(
      tables(db)
        .map((t) => t.name)
        .sort(),
    ).toEqual(
      [
        'intents',
        'outbox',
        'schema_migrations',
        'upload_files',
        'upload_manifests',
        'upload_parts',
      ].sort(),
    )
    expect(tables(db).every((t) => t.strict === 1)).toBe(true)
    expect(db.prepare('SELECT kind FROM outbox').pluck().all()).toEqual(['evaluation.feedback'])
    const files = (db.pragma('table_info(upload_files)') as { name: string }[]).map((c) => c.name)
    expect(files).toEqual(
      expect.arrayContaining(['relative_path', 'size_bytes', 'mtime_ms', 'sha256', 'upload_id']),
    )
  })

  it('steps 3 and 4 add the outbox results and the flow runs, keeping every row', () => {
    migrate(db, LEDGER_MIGRATIONS, file)
    expect(schemaVersion(db)).toBe(latestVersion(LEDGER_MIGRATIONS))
    expect(tables(db).map((t) => t.name)).toEqual(
      expect.arrayContaining(['flow_runs', 'node_runs', 'outbox']),
    )
    expect(tables(db).every((t) => t.strict === 1)).toBe(true)
    const outbox = (db.pragma('table_info(outbox)') as { name: string }[]).map((c) => c.name)
    expect(outbox).toEqual(expect.arrayContaining(['placeholder_id', 'result_id']))
    expect(db.prepare('SELECT kind FROM outbox').pluck().all()).toEqual(['evaluation.feedback'])
  })
})

describe('openDatabases', () => {
  it('brings fresh files to the newest version, with the designed pragmas', () => {
    const home = freshDir()
    const { mirror, ledger, notices, close } = openDatabases(home)
    try {
      expect(notices).toEqual([])
      expect(mirror.file).toBe(join(home, MIRROR_FILE))
      expect(ledger.file).toBe(join(home, LEDGER_FILE))
      expect(schemaVersion(mirror.db)).toBe(MIRROR_MIGRATIONS.length)
      expect(schemaVersion(ledger.db)).toBe(LEDGER_MIGRATIONS.length)
      for (const db of [mirror.db, ledger.db]) {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
        expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
        expect(db.pragma('busy_timeout', { simple: true })).toBe(BUSY_TIMEOUT_MS)
      }
      // 1 is NORMAL, 2 is FULL: synchronous is per connection, hence two files.
      expect(mirror.db.pragma('synchronous', { simple: true })).toBe(1)
      expect(ledger.db.pragma('synchronous', { simple: true })).toBe(2)
      for (const db of [mirror.db, ledger.db]) {
        for (const table of tables(db).filter((t) => t.type === 'table')) {
          expect({ table: table.name, strict: table.strict }).toEqual({
            table: table.name,
            strict: 1,
          })
        }
      }
    } finally {
      close()
    }
    // Reopening finds them current and changes nothing.
    const again = openDatabases(home)
    expect(schemaVersion(again.mirror.db)).toBe(MIRROR_MIGRATIONS.length)
    again.close()
  })

  for (const which of ['mirror', 'ledger'] as const) {
    it(`refuses a ${which} written by a newer version, naming the file and both versions`, () => {
      const home = freshDir()
      openDatabases(home).close()
      const file = join(home, which === 'mirror' ? MIRROR_FILE : LEDGER_FILE)
      const latest = (which === 'mirror' ? MIRROR_MIGRATIONS : LEDGER_MIGRATIONS).length
      const future = latest + 5
      const raw = new Database(file)
      raw.pragma(`user_version = ${future}`)
      raw.close()
      const before = readFileSync(file)

      let error: unknown
      try {
        openDatabases(home).close()
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(DbError)
      const dbError = error as DbError
      expect(dbError.code).toBe('DATABASE_FROM_NEWER_VERSION')
      expect(dbError.file).toBe(file)
      expect(dbError.message).toContain(file)
      expect(dbError.message).toContain(`version ${future}`)
      expect(dbError.message).toContain(`up to ${latest}`)
      expect(dbError.message).toMatch(/Update Atelier/)
      expect(readFileSync(file).equals(before)).toBe(true)
    })
  }
})

describe('the migration runner', () => {
  const steps: Migration[] = [
    { version: 1, name: 'parents', up: 'CREATE TABLE parent (id TEXT PRIMARY KEY) STRICT;' },
    {
      version: 2,
      name: 'children, then a mistake',
      up: 'CREATE TABLE child (id TEXT PRIMARY KEY) STRICT; INSERT INTO nowhere VALUES (1);',
    },
  ]

  it('rolls a failing step back whole and leaves the file at the step before', () => {
    const file = join(freshDir(), 'runner.sqlite')
    const db = openConnection(file, 'FULL')
    try {
      let error: unknown
      try {
        migrate(db, steps, file)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(DbError)
      expect((error as DbError).code).toBe('MIGRATION_FAILED')
      expect((error as DbError).message).toContain('schema version 2 (children, then a mistake)')
      expect((error as DbError).message).toContain('still at version 1')
      expect(schemaVersion(db)).toBe(1)
      expect(names(db, 'table')).toEqual(['parent', 'schema_migrations'])
      expect(recordedSteps(db).map((row) => row.version)).toEqual([1])
    } finally {
      db.close()
    }
  })

  it('refuses a list whose numbers skip or repeat', () => {
    expect(() => {
      checkMigrationList([{ version: 2, name: 'two', up: '' }])
    }).toThrow(/numbered 1, 2, 3/)
    expect(() => {
      checkMigrationList([
        { version: 1, name: 'one', up: '' },
        { version: 1, name: 'one again', up: '' },
      ])
    }).toThrow(/position 2/)
  })

  it('runs a table rebuild with foreign keys off, checks them before commit, and turns them back on', () => {
    const file = join(freshDir(), 'rebuild.sqlite')
    const db = openConnection(file, 'FULL')
    try {
      const base: Migration[] = [
        {
          version: 1,
          name: 'parent and child',
          up: `CREATE TABLE parent (id TEXT PRIMARY KEY) STRICT;
               CREATE TABLE child (id TEXT PRIMARY KEY, parent_id TEXT REFERENCES parent (id)) STRICT;
               INSERT INTO parent VALUES ('p'); INSERT INTO child VALUES ('c', 'p');`,
        },
      ]
      migrate(db, base, file)
      const rebuild: Migration = {
        version: 2,
        name: 'rebuild parent with a new column',
        rebuildsTables: true,
        up: `CREATE TABLE parent_new (id TEXT PRIMARY KEY, label TEXT) STRICT;
             INSERT INTO parent_new (id) SELECT id FROM parent;
             DROP TABLE parent;
             ALTER TABLE parent_new RENAME TO parent;`,
      }
      migrate(db, [...base, rebuild], file)
      expect(schemaVersion(db)).toBe(2)
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
      expect(db.prepare('SELECT parent_id FROM child').pluck().get()).toBe('p')

      const breaking: Migration = {
        version: 3,
        name: 'drop the parents',
        rebuildsTables: true,
        up: 'DELETE FROM parent;',
      }
      expect(() => migrate(db, [...base, rebuild, breaking], file)).toThrow(/break a foreign key/)
      expect(schemaVersion(db)).toBe(2)
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    } finally {
      db.close()
    }
  })
})

describe('the record of applied steps', () => {
  const LISTS = [
    { which: 'mirror', fileName: MIRROR_FILE, steps: MIRROR_MIGRATIONS },
    { which: 'ledger', fileName: LEDGER_FILE, steps: LEDGER_MIGRATIONS },
  ] as const

  it("records each step's name and the sha256 of its SQL, in the step's own transaction", () => {
    const home = freshDir()
    const before = Date.now()
    const { mirror, ledger, close } = openDatabases(home)
    const after = Date.now()
    try {
      for (const [db, steps] of [
        [mirror.db, MIRROR_MIGRATIONS],
        [ledger.db, LEDGER_MIGRATIONS],
      ] as const) {
        const rows = recordedSteps(db)
        expect(rows.map(({ version, name, hash }) => ({ version, name, hash }))).toEqual(
          steps.map((step) => ({
            version: step.version,
            name: step.name,
            hash: sha256(sqlOf(step)),
          })),
        )
        for (const row of rows) {
          expect(row.applied_ms).toBeGreaterThanOrEqual(before)
          expect(row.applied_ms).toBeLessThanOrEqual(after)
        }
      }
    } finally {
      close()
    }
  })

  it('records a failing step nowhere: its row rolls back with it', () => {
    const file = join(freshDir(), 'failing.sqlite')
    const db = openConnection(file, 'FULL')
    try {
      const steps: Migration[] = [
        { version: 1, name: 'one', up: 'CREATE TABLE one (id TEXT PRIMARY KEY) STRICT;' },
        { version: 2, name: 'broken', up: 'INSERT INTO nowhere VALUES (1);' },
      ]
      expect(() => migrate(db, steps, file)).toThrow(DbError)
      expect(recordedSteps(db).map((row) => row.version)).toEqual([1])
    } finally {
      db.close()
    }
  })

  for (const { which, fileName, steps } of LISTS) {
    it(`fills in the hashes of a ${which} made before they were recorded, once`, () => {
      const home = freshDir()
      const file = join(home, fileName)
      makeAsPreviousBuild(file, steps)
      const databases = openDatabases(home)
      const db = which === 'mirror' ? databases.mirror.db : databases.ledger.db
      try {
        expect(schemaVersion(db)).toBe(steps.length)
        // The steps were applied by the previous build, when is unknown: applied_ms stays null.
        expect(recordedSteps(db)).toEqual(
          steps.map((step) => ({
            version: step.version,
            name: step.name,
            hash: sha256(sqlOf(step)),
            applied_ms: null,
          })),
        )
        // Once recorded, a later open only reads.
        const changes = totalChanges(db)
        expect(migrate(db, steps, file).applied).toEqual([])
        expect(totalChanges(db)).toBe(changes)
      } finally {
        databases.close()
      }
    })
  }

  it('fills in the steps an old file has, then applies and records the ones it lacks', () => {
    const home = freshDir()
    const file = join(home, LEDGER_FILE)
    const old = LEDGER_MIGRATIONS.slice(0, 3)
    makeAsPreviousBuild(file, old)
    const db = openConnection(file, 'FULL')
    try {
      const report = migrate(db, LEDGER_MIGRATIONS, file)
      expect(report.from).toBe(3)
      expect(report.applied).toEqual(
        LEDGER_MIGRATIONS.slice(3).map((step) => `${step.version} ${step.name}`),
      )
      const rows = recordedSteps(db)
      expect(rows.map((row) => row.hash)).toEqual(
        LEDGER_MIGRATIONS.map((step) => sha256(sqlOf(step))),
      )
      expect(rows.filter((row) => row.applied_ms === null).map((row) => row.version)).toEqual([
        1, 2, 3,
      ])
      expect(rows.filter((row) => row.applied_ms !== null)).toHaveLength(
        LEDGER_MIGRATIONS.length - 3,
      )
    } finally {
      db.close()
    }
  })

  const EDITS = [
    { which: 'mirror', fileName: MIRROR_FILE, steps: MIRROR_MIGRATIONS, edited: 2 },
    { which: 'ledger', fileName: LEDGER_FILE, steps: LEDGER_MIGRATIONS, edited: 1 },
    { which: 'ledger', fileName: LEDGER_FILE, steps: LEDGER_MIGRATIONS, edited: 6 },
  ] as const

  for (const { which, fileName, steps, edited } of EDITS) {
    it(`refuses a build whose ${which} step ${edited} was edited after it was applied, and leaves the file as it was`, () => {
      const home = freshDir()
      openDatabases(home).close()
      const file = join(home, fileName)
      const before = readFileSync(file)
      const step = steps[edited - 1]
      if (!step) throw new Error(`no step ${edited}`)
      // One added comment: any change to released text, however harmless it looks, is a change.
      const changed = withEditedStep(steps, edited, (sql) => `${sql}\n  -- edited`)

      const db = openConnection(file, which === 'mirror' ? 'NORMAL' : 'FULL')
      let error: unknown
      try {
        migrate(db, changed, file)
      } catch (caught) {
        error = caught
      } finally {
        db.close()
      }
      expect(error).toBeInstanceOf(DbError)
      const dbError = error as DbError
      expect(dbError.code).toBe('MIGRATION_CHANGED')
      expect(dbError.file).toBe(file)
      expect(dbError.message).toContain(`changed schema step ${edited} (${step.name})`)
      expect(dbError.message).toContain(file)
      expect(dbError.message).toMatch(/Reinstall a released version of Atelier/)
      expect(dbError.message).toMatch(/add a new step at the end/)
      expect(readFileSync(file).equals(before)).toBe(true)
      expect(existsSync(`${file}-wal`)).toBe(false)
      // The released steps still open it.
      openDatabases(home).close()
    })
  }

  it('refuses an edit even to a step a previous build applied before hashes were recorded', () => {
    const home = freshDir()
    const file = join(home, MIRROR_FILE)
    makeAsPreviousBuild(file, MIRROR_MIGRATIONS)
    openDatabases(home).close()
    const changed = withEditedStep(MIRROR_MIGRATIONS, 3, (sql) =>
      sql.replace('fetched_ms', 'fetched_at_ms'),
    )
    const db = openConnection(file, 'NORMAL')
    try {
      expect(() => migrate(db, changed, file)).toThrow(
        expect.objectContaining({ code: 'MIGRATION_CHANGED' }),
      )
    } finally {
      db.close()
    }
  })

  it('applies and records a step appended after the released ones', () => {
    const home = freshDir()
    openDatabases(home).close()
    const file = join(home, LEDGER_FILE)
    const appended: Migration = {
      version: LEDGER_MIGRATIONS.length + 1,
      name: 'a later step',
      up: 'CREATE TABLE later_step (id TEXT PRIMARY KEY) STRICT;',
    }
    const db = openConnection(file, 'FULL')
    try {
      const report = migrate(db, [...LEDGER_MIGRATIONS, appended], file)
      expect(report.applied).toEqual([`${appended.version} a later step`])
      expect(schemaVersion(db)).toBe(appended.version)
      expect(recordedSteps(db).at(-1)).toMatchObject({
        version: appended.version,
        name: 'a later step',
        hash: sha256('CREATE TABLE later_step (id TEXT PRIMARY KEY) STRICT;'),
      })
    } finally {
      db.close()
    }
  })

  it("hashes a function step's checksumText, so a bundler cannot change its hash", () => {
    const file = join(freshDir(), 'function-step.sqlite')
    const base: Migration = {
      version: 1,
      name: 'a table',
      up: 'CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER) STRICT;',
    }
    const fill: Migration = {
      version: 2,
      name: 'numbered rows',
      up: (db) => {
        const insert = db.prepare('INSERT INTO t VALUES (?, ?)')
        for (let n = 1; n <= 3; n++) insert.run(`row ${n}`, n)
      },
      checksumText: 'insert rows 1 to 3 into t (revision 1)',
    }
    const db = openConnection(file, 'FULL')
    try {
      migrate(db, [base, fill], file)
      expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(3)
      expect(recordedSteps(db)[1]?.hash).toBe(sha256('insert rows 1 to 3 into t (revision 1)'))
      // Same text, a different function (as another bundle would print it): still accepted.
      const rebundled: Migration = { ...fill, up: () => undefined }
      expect(migrate(db, [base, rebundled], file).applied).toEqual([])
      // A new revision of the text is an edit of a released step.
      const revised: Migration = { ...fill, checksumText: 'insert rows 1 to 4 into t (revision 2)' }
      expect(() => migrate(db, [base, revised], file)).toThrow(
        expect.objectContaining({ code: 'MIGRATION_CHANGED' }),
      )
    } finally {
      db.close()
    }
  })

  it('refuses a list with a function step that has no checksumText', () => {
    const untracked = { version: 1, name: 'untracked', up: () => undefined } as unknown as Migration
    expect(() => {
      checkMigrationList([untracked])
    }).toThrow(/no checksumText/)
  })
})

import type Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench, describe } from 'vitest'
import { startSandbox } from '../../src-main/sandbox'
import { openSandboxDb } from '../../src-main/sandbox/db'
import { seedHistory } from '../../src-main/sandbox/runs'

/**
 * `seedHistory` (100,000 runs with their node runs and sampled logs, and the evaluations, assets,
 * uploads and folders that come with them) against a baseline that INSERTs the very same rows,
 * read back from the database, with no JSON to build: what is left above the baseline is the cost
 * of making the history (rendering and measuring its images, writing the assets' files). Each
 * case runs twice; the summary at the end prints runs per second for both and their ratio.
 */

const RUNS = 100_000
const sandbox = await startSandbox({ latencyMs: 0 })
const baselineDir = mkdtempSync(join(tmpdir(), 'atelier-seed-bench-'))
const timings = { seed: [] as number[], baseline: [] as number[] }
let lastOrgId: string | null = null
let rows: unknown[][] | null = null
let round = 0

afterAll(async () => {
  await sandbox.close()
  rmSync(baselineDir, { recursive: true, force: true })
  const best = (values: number[]) => Math.min(...values)
  const seed = best(timings.seed)
  const baseline = best(timings.baseline)
  const perSecond = (ms: number) => Math.round((RUNS / ms) * 1000).toLocaleString('en-US')
  console.log(
    `\nseedHistory: ${RUNS.toLocaleString('en-US')} runs in ${(seed / 1000).toFixed(2)} s (${perSecond(seed)} runs/s); ` +
      `raw INSERT of the same rows: ${(baseline / 1000).toFixed(2)} s (${perSecond(baseline)} runs/s); ` +
      `ratio ${(seed / baseline).toFixed(2)}× the baseline.\n`,
  )
})

/** The rows one seeding wrote, in insertion order: what the baseline writes again. */
function readBack(db: Database.Database, orgId: string): unknown[][] {
  return db
    .prepare(
      `SELECT collection, id, org_id, parent_id, created_at, updated_at, doc FROM records
        WHERE org_id = ? AND collection IN
          ('runs', 'node_runs', 'run_logs', 'evaluations', 'assets', 'asset_uploads', 'asset_folders')
        ORDER BY rowid`,
    )
    .raw()
    .all(orgId) as unknown[][]
}

const once = { time: 0, iterations: 2, warmupTime: 0, warmupIterations: 0 }

describe(`history seeding, ${RUNS.toLocaleString('en-US')} runs`, () => {
  bench(
    'seedHistory',
    async () => {
      // A fresh organization each time, so every round writes the same amount.
      const org = sandbox.services.accounts.ensureOrg(`Seed bench ${round++}`, 0)
      const started = performance.now()
      await seedHistory(sandbox.services, org.id, RUNS)
      timings.seed.push(performance.now() - started)
      lastOrgId = org.id
    },
    once,
  )

  bench(
    'raw INSERT baseline (same rows, no JSON building)',
    () => {
      if (!rows) throw new Error('the seeding case must run first')
      const db = openSandboxDb(join(baselineDir, `baseline-${round++}.db`))
      const insert = db.prepare(
        `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      const batch = db.transaction((from: number, to: number) => {
        for (let index = from; index < to; index++) insert.run(...(rows?.[index] ?? []))
      })
      // As many transactions as the seeding uses (one per 10,000 runs).
      const perBatch = Math.ceil(rows.length / Math.ceil(RUNS / 10_000))
      const started = performance.now()
      for (let from = 0; from < rows.length; from += perBatch) {
        batch(from, Math.min(rows.length, from + perBatch))
      }
      timings.baseline.push(performance.now() - started)
      db.close()
    },
    {
      ...once,
      setup: () => {
        if (!rows && lastOrgId) rows = readBack(sandbox.services.db, lastOrgId)
      },
    },
  )
})

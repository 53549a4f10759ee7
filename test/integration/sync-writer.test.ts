import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import { openDatabases, type Databases } from '../../src-main/db'
import { observeTransactions, type TransactionTiming } from '../../src-main/db/connection'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine, type PageWriter, type SyncEngineOptions } from '../../src-main/sync'
import type { IncrementalPage } from '../../src-main/sync/collections'
import { FIRST_PART, mainThreadWriter, startPageWriter } from '../../src-main/sync/writer'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const RUNS = 1200
const PROFILE = 'writer'

let sandbox: TestSandbox
let client: ServiceClient
const service: Run[] = []
const root = mkdtempSync(join(tmpdir(), 'atelier-sync-writer-'))
let homes = 0
const open: Databases[] = []

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  await seedHistory(sandbox.services, sandbox.orgId, RUNS)
  for await (const run of client.list('/v1/runs', {
    params: { query: { sort_by: 'updated_at:asc', limit: 500 } },
  })) {
    service.push(run)
  }
}, 120_000)

afterEach(() => {
  observeTransactions(null)
})

afterAll(async () => {
  for (const dbs of open) dbs.close()
  await sandbox.close()
  rmSync(root, { recursive: true, force: true })
})

function home(): Databases {
  const dbs = openDatabases(join(root, String(++homes)))
  open.push(dbs)
  return dbs
}

const engine = (dbs: Databases, extra: Partial<SyncEngineOptions> = {}) =>
  new SyncEngine({
    client,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId: sandbox.orgId,
    detailsLimit: 0,
    ...extra,
  })

const runsCursor = (dbs: Databases) =>
  dbs.mirror.syncCursors.get({ profile: PROFILE, orgId: sandbox.orgId, collection: 'runs' })

const mirrorRunIds = (dbs: Databases) =>
  dbs.mirror.db.prepare('SELECT id FROM runs WHERE org_id = ?').pluck().all(sandbox.orgId)

describe('the page writer thread', () => {
  it('writes a big sync off the main thread, the same rows and cursor as the service holds', async () => {
    const onMain: TransactionTiming[] = []
    observeTransactions((timing) => onMain.push(timing))
    const dbs = home()
    // From here on: not the migrations of the fresh files.
    onMain.length = 0
    const writers: Pick<PageWriter, 'where' | 'fallback'>[] = []
    const at = Date.UTC(2030, 0, 1)
    const result = await engine(dbs, {
      clock: () => at,
      onPageWriter: (writer) => writers.push(writer),
    }).syncAll({ collections: ['runs'] })
    expect(result.state).toBe('ok')
    expect(writers).toEqual([{ where: 'worker' }])
    expect(result.collections[0]).toMatchObject({ pages: 3, fetched: RUNS, written: RUNS })
    // No page transaction ran on this thread: the main connection only read.
    expect(onMain.filter((t) => t.label.includes('writeIncrementalPage'))).toEqual([])
    expect(onMain.every((t) => t.kind === 'statement' && t.label.startsWith('SELECT'))).toBe(true)
    expect(new Set(mirrorRunIds(dbs))).toEqual(new Set(service.map((run) => run.id)))
    const last = service.at(-1)
    // The cursor's times are the engine's clock, not the thread's.
    expect(runsCursor(dbs)).toMatchObject({
      updatedAt: last?.updated_at,
      id: last?.id,
      lastSyncMs: at,
      lastFullSyncMs: at,
    })
  })

  it('leaves a small sync on the main thread, and `main-thread` keeps every page there', async () => {
    const dbs = home()
    const writers: unknown[] = []
    const first = await engine(dbs, {
      pageWrites: 'main-thread',
      onPageWriter: (writer) => writers.push(writer),
    }).syncAll({ collections: ['runs'] })
    expect(first.state).toBe('ok')
    expect(mirrorRunIds(dbs)).toHaveLength(RUNS)
    // Nothing new since: the one page re-reads the cursor's record, far below the threshold.
    const again = await engine(dbs, { onPageWriter: (writer) => writers.push(writer) }).syncAll({
      collections: ['runs'],
    })
    expect(again.collections[0]).toMatchObject({ pages: 1, fetched: 0 })
    expect(writers).toEqual([])
  })

  it('resumes after an abort between pages written by the thread, with no gap', async () => {
    const dbs = home()
    const controller = new AbortController()
    const first = await engine(dbs, {
      onProgress: (p) => {
        if (p.collection === 'runs' && p.phase === 'page' && p.pages === 1) controller.abort()
      },
    }).syncAll({ collections: ['runs'], signal: controller.signal })
    expect(first.state).toBe('aborted')
    expect(mirrorRunIds(dbs)).toHaveLength(500)
    expect(runsCursor(dbs)).toMatchObject({ id: service[499]?.id, lastFullSyncMs: null })
    const second = await engine(dbs).syncAll({ collections: ['runs'] })
    expect(second.collections[0]?.fetched).toBe(RUNS - 500)
    expect(new Set(mirrorRunIds(dbs))).toEqual(new Set(service.map((run) => run.id)))
    expect(mirrorRunIds(dbs)).toHaveLength(RUNS)
  })

  it('fails a write as the main thread would, with nothing of the page written', async () => {
    const dbs = home()
    const cursor = { profile: PROFILE, orgId: sandbox.orgId, collection: 'runs' }
    const good = service.slice(0, 2)
    // A run without its times cannot be stored: the repository refuses the page.
    const broken: IncrementalPage = {
      collection: 'runs',
      items: [...good, { ...service[2], created_at: 'not a time' }],
      orgId: sandbox.orgId,
      cursor: { ...cursor, updatedAt: service[2]?.updated_at ?? null, id: service[2]?.id ?? null },
    }
    const here = await mainThreadWriter(dbs.mirror)
      .write(broken, Date.now())
      .then(
        () => null,
        (error: unknown) => error as Error,
      )
    expect(here).toBeInstanceOf(Error)
    const writer = await startPageWriter(dbs.mirror)
    try {
      expect(writer.where).toBe('worker')
      const there = await writer.write(broken, Date.now()).then(
        () => null,
        (error: unknown) => error as Error,
      )
      expect(there).toMatchObject({ name: here?.name, message: here?.message })
      expect(mirrorRunIds(dbs)).toEqual([])
      expect(runsCursor(dbs)).toBeNull()
      // The thread goes on: the next page is written.
      const page: IncrementalPage = {
        collection: 'runs',
        items: good,
        orgId: sandbox.orgId,
        cursor: { ...cursor, updatedAt: good[1]?.updated_at ?? null, id: good[1]?.id ?? null },
      }
      await expect(writer.write(page, Date.now())).resolves.toEqual({ written: 2, removed: 0 })
    } finally {
      await writer.close()
    }
    expect(new Set(mirrorRunIds(dbs))).toEqual(new Set(good.map((run) => run.id)))
  })

  it('writes the pages handed over before close, each crossing in parts, then closes', async () => {
    // 300 records: several messages per page, the page written once its last part is in.
    expect(FIRST_PART).toBeLessThan(300)
    const dbs = home()
    const writer = await startPageWriter(dbs.mirror)
    const cursor = { profile: PROFILE, orgId: sandbox.orgId, collection: 'runs' }
    const pages = [service.slice(0, 300), service.slice(300, 600)].map(
      (items): IncrementalPage => ({
        collection: 'runs',
        items,
        orgId: sandbox.orgId,
        cursor: {
          ...cursor,
          updatedAt: items.at(-1)?.updated_at ?? null,
          id: items.at(-1)?.id ?? null,
        },
      }),
    )
    const written = pages.map((page) => writer.write(page, Date.now()))
    await writer.close()
    await expect(Promise.all(written)).resolves.toEqual([
      { written: 300, removed: 0 },
      { written: 300, removed: 0 },
    ])
    expect(mirrorRunIds(dbs)).toHaveLength(600)
    expect(runsCursor(dbs)?.id).toBe(service[599]?.id)
    await expect(writer.write(pages[0] as IncrementalPage, Date.now())).rejects.toThrow(
      /page writer/,
    )
  })
})

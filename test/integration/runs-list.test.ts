import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { decimalMicro, openDatabases, type Databases } from '../../src-main/db'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import { isRunListError, RunsList } from '../../src-main/review/runs-list'
import type { Run } from '../../src-shared/api'
import type {
  RunFilterOptions,
  RunListPage,
  RunListQueryInput,
  RunListRow,
} from '../../src-shared/domain/runs-list'
import { FLOW_ID, makeRun, MODELS, runId, runPages } from '../helpers/mirror-runs'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The runs list over a real mirror: every filter, words and cursor paging checked against the
 * same runs filtered in memory; then the channels as the window reaches them, over a real core
 * that synced a real sandbox, answered again with the sandbox closed.
 */

const ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb90'
const OTHER_ORG = '01a1fcaa-7c20-7fae-95eb-8e58b9d0fb99'
const NEWEST = Date.UTC(2026, 2, 1, 12)
const COUNT = 700

let home: string
let databases: Databases
let list: RunsList
const all: Run[] = []

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'atelier-runs-list-'))
  databases = openDatabases(home)
  for (const page of runPages(COUNT, { orgId: ORG, newestMs: NEWEST }, 250)) {
    databases.mirror.runs.upsertPage(page)
    all.push(...page)
  }
  // Another organization's runs, at the same times: never listed.
  databases.mirror.runs.upsertPage(
    [0, 1, 2].map((n) => ({
      ...makeRun(n, { orgId: OTHER_ORG, newestMs: NEWEST }),
      id: runId(9000 + n),
    })),
  )
  list = new RunsList(databases.mirror, { orgId: ORG })
})

afterAll(() => {
  databases.close()
  rmSync(home, { recursive: true, force: true })
})

/** Every page of a list, following `next`, bounded in count. */
function walk(query: RunListQueryInput, limit = 37): { rows: RunListRow[]; pages: RunListPage[] } {
  const pages: RunListPage[] = []
  let cursor: string | null = null
  for (let i = 0; i < 200; i++) {
    const page = list.list({ ...query, limit, cursor })
    pages.push(page)
    if (page.next === null) return { rows: pages.flatMap((p) => p.items), pages }
    cursor = page.next
  }
  throw new Error('The list did not end within 200 pages.')
}

/** The ids the mirror should answer: the runs kept by `keep`, newest first. */
function expected(keep: (run: Run) => boolean): string[] {
  return all
    .filter(keep)
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
    .map((run) => run.id)
}

const micro = (cost: string | null) => (cost === null ? null : decimalMicro(cost))

describe('the runs list over the mirror', () => {
  it('walks every run of the organization newest first, each once, with a count', () => {
    const { rows, pages } = walk({})
    expect(rows.map((row) => row.id)).toEqual(expected(() => true))
    expect(new Set(rows.map((row) => row.id)).size).toBe(COUNT)
    expect(pages[0]?.total).toEqual({ count: COUNT, more: false })
    // Counting again page after page would cost: only the first page has it.
    expect(pages.slice(1).every((page) => page.total === null)).toBe(true)
  })

  it('shapes rows for the list: what ran, when, how long, cost, a line of the prompt', () => {
    const [first] = list.list({ limit: 1 }).items
    const run = all[0] as Run
    expect(first).toEqual({
      id: run.id,
      status: run.status_code,
      target: 'model',
      // No catalog in this mirror: the slug names it.
      name: run.model_slug,
      model: run.model_slug,
      flowId: null,
      createdMs: NEWEST,
      durationMs: run.duration_ms,
      cost: run.cost,
      text: run.input.prompt,
      hasOutputs: true,
      failure: null,
    })
    const failed = list.list({ statuses: ['failed'], limit: 1 }).items[0]
    expect(failed).toMatchObject({ status: 'failed', hasOutputs: false })
    expect(failed?.failure).toBe('The model ran out of memory.')
    const flow = list.list({ flowId: FLOW_ID, limit: 1 }).items[0]
    expect(flow).toMatchObject({ target: 'flow', flowId: FLOW_ID, model: null, name: FLOW_ID })
  })

  it('filters by status, several statuses, model, flow, dates and cost, alone and together', () => {
    const from = NEWEST - 300 * 60_000
    const to = NEWEST - 100 * 60_000
    const cases: [RunListQueryInput, (run: Run) => boolean][] = [
      [{ statuses: ['failed'] }, (r) => r.status_code === 'failed'],
      [
        { statuses: ['queued', 'running', 'canceled'] },
        (r) => ['queued', 'running', 'canceled'].includes(r.status_code),
      ],
      [{ model: MODELS[1] }, (r) => r.model_slug === MODELS[1]],
      [{ flowId: FLOW_ID }, (r) => r.flow_id === FLOW_ID],
      [
        { fromMs: from, toMs: to },
        (r) => Date.parse(r.created_at) >= from && Date.parse(r.created_at) < to,
      ],
      [
        { minCost: '0.05', maxCost: '0.0800' },
        (r) => (micro(r.cost) ?? -1) >= 50_000 && (micro(r.cost) ?? Infinity) <= 80_000,
      ],
      [
        { statuses: ['succeeded'], model: MODELS[0], fromMs: from, minCost: '0.03' },
        (r) =>
          r.status_code === 'succeeded' &&
          r.model_slug === MODELS[0] &&
          Date.parse(r.created_at) >= from &&
          (micro(r.cost) ?? -1) >= 30_000,
      ],
    ]
    for (const [query, keep] of cases) {
      const want = expected(keep)
      expect(want.length, JSON.stringify(query)).toBeGreaterThan(0)
      const { rows, pages } = walk(query)
      expect(
        rows.map((row) => row.id),
        JSON.stringify(query),
      ).toEqual(want)
      expect(pages[0]?.total).toEqual({ count: want.length, more: false })
    }
  })

  it('finds runs by the words of their prompt, the last word as a prefix, newest first', () => {
    const words = (run: Run) => String(run.input.prompt)
    expect(walk({ text: 'lighthouse fog' }).rows.map((r) => r.id)).toEqual(
      expected((r) => words(r).includes('lighthouse') && words(r).includes('fog')),
    )
    expect(walk({ text: 'observ' }).rows.map((r) => r.id)).toEqual(
      expected((r) => words(r).includes('observatory')),
    )
    // Words and filters together.
    expect(walk({ text: 'glacier', statuses: ['failed'] }).rows.map((r) => r.id)).toEqual(
      expected((r) => words(r).includes('glacier') && r.status_code === 'failed'),
    )
    // Punctuation and FTS syntax are searched for, not parsed.
    expect(list.list({ text: 'harbour OR "' }).items).toEqual([])
    // No letter or digit: nothing can match.
    expect(list.list({ text: '--- !!' })).toEqual({
      items: [],
      next: null,
      total: { count: 0, more: false },
    })
  })

  it('finds a run by its pasted id', () => {
    const id = runId(123)
    expect(list.list({ text: ` ${id.toUpperCase()} ` }).items.map((row) => row.id)).toEqual([id])
  })

  it('keeps its place while a sync adds newer runs on top', () => {
    const first = list.list({ limit: 10 })
    databases.mirror.runs.upsertPage([
      { ...makeRun(0, { orgId: ORG, newestMs: NEWEST + 60_000 }), id: runId(5000) },
    ])
    try {
      const second = list.list({ limit: 10, cursor: first.next })
      expect(second.items[0]?.id).toBe(all[10]?.id)
      expect(list.list({ limit: 1 }).items[0]?.id).toBe(runId(5000))
    } finally {
      databases.mirror.runs.remove([runId(5000)])
    }
  })

  it('refuses bad input with stable codes and messages that say what to do', () => {
    const refused = (input: unknown) => {
      try {
        list.list(input)
      } catch (error) {
        if (isRunListError(error)) return { code: error.code, message: error.message }
        throw error
      }
      throw new Error(`${JSON.stringify(input)} was accepted.`)
    }
    expect(refused({ statuses: ['done'] })).toMatchObject({
      code: 'RUNS_INVALID_QUERY',
      message: expect.stringContaining('statuses.0') as string,
    })
    expect(refused({ model: 'text-to-image' })).toMatchObject({
      code: 'RUNS_INVALID_QUERY',
      message: expect.stringContaining('provider/model') as string,
    })
    expect(refused({ minCost: 'cheap' }).message).toContain('0.05')
    expect(refused({ minCost: '0.5', maxCost: '0.1' }).message).toContain('maxCost')
    expect(refused({ fromMs: 10, toMs: 5 }).message).toContain('toMs')
    expect(refused({ limit: 0 }).code).toBe('RUNS_INVALID_QUERY')
    expect(refused({ sort: 'oldest' }).code).toBe('RUNS_INVALID_QUERY')
    expect(refused({ cursor: 'not-a-cursor' })).toMatchObject({
      code: 'RUNS_INVALID_CURSOR',
      message: expect.stringContaining('leave it out') as string,
    })
    // A cursor of another list would walk the wrong rows: refused.
    const failedNext = list.list({ statuses: ['failed'], limit: 5 }).next
    expect(refused({ statuses: ['canceled'], cursor: failedNext }).code).toBe('RUNS_INVALID_CURSOR')
    // Of the same list with another page size: fine.
    expect(list.list({ statuses: ['failed'], limit: 50, cursor: failedNext }).items).toHaveLength(
      50,
    )
  })

  it('counts up to its cap and says there are more', () => {
    const extra = [...runPages(10_050, { orgId: OTHER_ORG, newestMs: NEWEST }, 2_000)]
    const otherList = new RunsList(databases.mirror, { orgId: OTHER_ORG })
    for (const page of extra) {
      databases.mirror.runs.upsertPage(
        page.map((run) => ({ ...run, id: run.id.replace(/^0a/, '0b') })),
      )
    }
    expect(otherList.list({ limit: 5 }).total).toEqual({ count: 10_000, more: true })
  })
})

describe('the runs channels over a core that synced the sandbox', () => {
  let sandbox: TestSandbox
  let coreHome: string
  let logger: Logger
  let core: Core
  const web = { shell: 'web' } as const
  const handlers = () =>
    createHandlers({
      platform: 'linux',
      backend: () => null,
      openExternal: () => Promise.resolve(),
      core: () => core,
    })
  const call = async <T>(channel: string, args?: unknown): Promise<T> => {
    const result = await dispatchIpc(handlers(), channel, args, web)
    if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`)
    return result.value as T
  }

  beforeAll(async () => {
    sandbox = await startTestSandbox({ latencyMs: 0 })
    for (const prompt of ['a brass astrolabe on velvet', 'a lighthouse in fog']) {
      const answer = await sandbox.call('POST', '/v1/models/atelier/text-to-image/runs', {
        body: { input: { prompt } },
      })
      expect(answer.status).toBe(201)
    }
    coreHome = mkdtempSync(join(tmpdir(), 'atelier-runs-channels-'))
    logger = openLogger({ home: coreHome, level: 'info' })
    core = openCore({
      home: coreHome,
      logger,
      backend: { ...sandboxBackend(sandbox), close: () => Promise.resolve() },
    })
    expect((await core.syncNow()).last?.outcome).toBe('ok')
    await sandbox.close()
  }, 60_000)

  afterAll(async () => {
    await core.close()
    logger.close()
    rmSync(coreHome, { recursive: true, force: true })
  })

  it('lists the synced runs named from the catalog, with the service gone', async () => {
    const page = await call<RunListPage>('runs.list', {})
    expect(page.total).toEqual({ count: 2, more: false })
    expect(page.items.map((row) => row.text)).toEqual([
      'a lighthouse in fog',
      'a brass astrolabe on velvet',
    ])
    expect(page.items.every((row) => row.name === 'Atelier Text to Image')).toBe(true)
    const found = await call<RunListPage>('runs.list', { text: 'astro' })
    expect(found.items.map((row) => row.text)).toEqual(['a brass astrolabe on velvet'])
  })

  it('offers the models the runs were made with, by name', async () => {
    const options = await call<RunFilterOptions>('runs.filterOptions')
    expect(options.models).toEqual([
      { slug: 'atelier/text-to-image', name: 'Atelier Text to Image' },
    ])
    expect(options.flows).toEqual([])
  })

  it('answers bad input with the stable codes', async () => {
    const invalid = await dispatchIpc(handlers(), 'runs.list', { limit: 0 }, web)
    expect(invalid).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
    const cursor = await dispatchIpc(handlers(), 'runs.list', { cursor: 'nope' }, web)
    expect(cursor).toMatchObject({ ok: false, error: { code: 'RUNS_INVALID_CURSOR' } })
  })
})

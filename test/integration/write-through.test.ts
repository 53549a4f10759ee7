import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import type { AccountSummary } from '../../src-shared/domain/app'
import { evaluationListSchema, evaluationSubmitSchema } from '../../src-shared/domain/evaluations'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { IpcEventName, IpcEvents } from '../../src-shared/ipc'
import { openCore, type Core, type Timers } from '../../src-main/core'
import { openLogger, type Logger } from '../../src-main/log'
import { sandboxBackend } from '../../src-main/workspace'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Write-through, through the real core on a real sandbox with no sync at all (its timers never
 * fire, and nothing here asks for one): what the app does itself is in the mirror, and the
 * balance after its charge is told, as soon as the service has answered.
 */

/** Timers that never fire: the background sync never starts on its own. */
const NO_TIMERS: Timers = { setTimeout: () => null, clearTimeout: () => undefined }
const WAIT_MS = 30_000

let sandbox: TestSandbox
let home: string
let logger: Logger
let core: Core
/** Every event, with the status the mirror gave the watched run when it came. */
const heard: { event: IpcEventName; payload: unknown; watched: string | undefined }[] = []
let watchedRunId: string | null = null
/** Each waiting test's check, run at every event until it resolves. */
const waiting = new Set<() => void>()

/** Resolves with the first event (after `from`, an index into `heard`) that `match` accepts. */
function nextEvent<E extends IpcEventName>(
  event: E,
  from: number,
  match: (payload: IpcEvents[E], watched: string | undefined) => boolean = () => true,
): Promise<IpcEvents[E]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(check)
      reject(new Error(`no ${event} within ${String(WAIT_MS)} ms`))
    }, WAIT_MS)
    const check = () => {
      const found = heard
        .slice(from)
        .find((h) => h.event === event && match(h.payload as IpcEvents[E], h.watched))
      if (!found) return
      clearTimeout(timer)
      waiting.delete(check)
      resolve(found.payload as IpcEvents[E])
    }
    waiting.add(check)
    check()
  })
}

async function serviceBalanceMicro(): Promise<number> {
  const answer = await sandbox.call('GET', '/v1/billing/balance')
  return Math.round(Number((answer.body as { balance: string }).balance) * 1_000_000)
}

async function pictureFlow() {
  const models = await sandbox.call('GET', '/v1/models?limit=500')
  const model = (models.body as { items: { id: string; slug: string }[] }).items.find(
    (m) => m.slug === 'atelier/text-to-image',
  )
  expect(model).toBeDefined()
  const node = (slug: string, prompt: string) => ({
    id: randomUUID(),
    label: slug,
    slug,
    type_code: 'model',
    model_id: model?.id,
    config: {},
    inputs: [{ id: randomUUID(), name: 'prompt', variable_type_code: 'text', value: prompt }],
    outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
  })
  return {
    id: randomUUID(),
    name: 'Two pictures',
    inputs: [],
    outputs: [],
    nodes: [
      node('kite', `a red kite ${randomUUID()}`),
      node('boat', `a blue boat ${randomUUID()}`),
    ],
  }
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  home = mkdtempSync(join(tmpdir(), 'atelier-write-through-'))
  logger = openLogger({ home, level: 'info' })
  core = openCore({
    home,
    logger,
    backend: { ...sandboxBackend(sandbox), close: async () => {} },
    timers: NO_TIMERS,
    firstSyncAfterMs: 3_600_000,
    client: { retry: { maxAttempts: 1 } },
  })
  core.onEvent((event, payload) => {
    const watched =
      watchedRunId === null ? undefined : core.databases.mirror.runs.get(watchedRunId)?.status_code
    heard.push({ event, payload, watched })
    for (const check of [...waiting]) check()
  })
}, 60_000)

afterAll(async () => {
  await core.close()
  logger.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

describe('what the app did, without a sync', () => {
  it('lists a flow run’s remote runs with their end states, and tells the balance after the charge', async () => {
    const from = heard.length
    // Read once before the run: the cached balance must not be what is told after it.
    const before = (await core.accountSummary()).balanceMicro
    const { flowRunId } = await core.flows.startRun({
      flow: await pictureFlow(),
      inputs: {},
      force: [],
    })
    const finished = await nextEvent(
      'flowRuns.event',
      from,
      (m: FlowRunEventMessage) => m.flowRunId === flowRunId && m.event.type === 'flow-finished',
    )
    expect(finished.event.type === 'flow-finished' && finished.event.state).toBe('succeeded')
    const told: AccountSummary = await nextEvent('account.changed', from)

    const remoteRunIds = heard
      .slice(from)
      .map((h) => h.payload as FlowRunEventMessage)
      .filter((m) => m.flowRunId === flowRunId && m.event.type === 'node-remote-run')
      .map((m) => (m.event.type === 'node-remote-run' ? m.event.runId : ''))
    expect(remoteRunIds).toHaveLength(2)

    // No sync ran: the mirror has them from the write-through alone.
    expect(core.syncStatus().last).toBeNull()
    const page = core.runs.list({ limit: 50 })
    const listed = new Map(page.items.map((row) => [row.id, row.status]))
    for (const id of remoteRunIds) expect(listed.get(id)).toBe('succeeded')
    expect(page.total?.count).toBe(2)
    expect(
      heard.slice(from).some((h) => h.event === 'mirror.changed'),
      'the window was told the runs changed',
    ).toBe(true)

    // The balance told is the service's after the charge, and what the summary answers.
    const service = await serviceBalanceMicro()
    expect(service).toBeLessThan(before ?? Number.POSITIVE_INFINITY)
    expect(told.balanceMicro).toBe(service)
    expect((await core.accountSummary()).balanceMicro).toBe(service)
  })

  it('lists a re-run at once, follows it to its end, and tells the balance after its charge', async () => {
    const [original] = core.runs.list({ limit: 1 }).items
    expect(original).toBeDefined()
    const from = heard.length
    const { runId } = await core.runPage.rerun({
      runId: original?.id ?? '',
      idempotencyKey: randomUUID(),
    })
    // In the list as soon as the service answered.
    expect(core.runs.list({ limit: 50 }).items.map((row) => row.id)).toContain(runId)
    watchedRunId = runId
    // The balance told once the re-run had ended (the one told at its start is the hold).
    const told = await nextEvent('account.changed', from, (_, status) => status === 'succeeded')
    const rerun = core.databases.mirror.runs.get(runId) as Run | undefined
    expect(rerun?.status_code).toBe('succeeded')
    expect(core.runs.list({ limit: 50 }).items.find((row) => row.id === runId)?.status).toBe(
      'succeeded',
    )
    // Told after the end: the charge is settled by then.
    expect(told.balanceMicro).toBe(await serviceBalanceMicro())
    expect(core.syncStatus().last).toBeNull()
  })

  it('lists a submitted evaluation and its uploaded image at once, with the balance after it', async () => {
    const path = join(home, 'kite.png')
    const png = await sharp({
      create: { width: 96, height: 64, channels: 3, background: { r: 200, g: 40, b: 90 } },
    })
      .png()
      .toBuffer()
    writeFileSync(path, png)
    const from = heard.length
    const { evaluation, upload } = await core.evaluations.submit(
      evaluationSubmitSchema.parse({ image: { path }, jobClass: 'quick' }),
    )
    expect(upload?.how).toBe('uploaded')
    const changed = await nextEvent('mirror.changed', from, (c) =>
      c.collections.includes('evaluations'),
    )
    expect(changed.collections).toEqual(['evaluations', 'assets'])
    const list = core.evaluations.list(evaluationListSchema.parse({ limit: 20 }))
    expect(list.items.map((row) => row.id)).toContain(evaluation.id)
    const told = await nextEvent('account.changed', from)
    expect(told.balanceMicro).toBe(await serviceBalanceMicro())
    expect(core.syncStatus().last).toBeNull()
  })
})

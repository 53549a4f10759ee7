import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Core } from '../../src-main/core'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { SyncStatus } from '../../src-shared/domain/sync'
import { ipcCalls } from '../helpers/ipc-calls'
import { pictureFlow } from '../helpers/picture-flow'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'
import { openSyncedCore, type SyncedCore } from '../helpers/synced-core'

/**
 * Offline on purpose and back: a real core against a real sandbox that is stopped and started
 * again on the same port with the same data (so the same keys). The app refuses runs at once
 * while it knows it is offline, notices the service back without a click, and resumes a run
 * the outage interrupted without paying twice.
 */

let sandbox: TestSandbox
let port: number
let dataDir: string
let opened: SyncedCore
let core: Core
let modelId: string
const messages: FlowRunEventMessage[] = []
const statuses: SyncStatus[] = []
const listeners = new Set<() => void>()

async function startSandboxHere(): Promise<TestSandbox> {
  return startTestSandbox({ latencyMs: 20, dataDir, ...(port ? { port } : {}) })
}

const { ok, fails } = ipcCalls(() => core)

/** Resolves once `done` holds, checked at every event of the core; fails after `ms`. */
function until(what: string, done: () => boolean, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!done()) return
      listeners.delete(check)
      clearTimeout(timer)
      resolve()
    }
    const timer = setTimeout(() => {
      listeners.delete(check)
      reject(new Error(`${what}: not within ${ms} ms`))
    }, ms)
    listeners.add(check)
    check()
  })
}

const eventsOf = (flowRunId: string): FlowRunEvent[] =>
  messages.filter((m) => m.flowRunId === flowRunId).map((m) => m.event)

const finishedEvent = (flowRunId: string) =>
  eventsOf(flowRunId).find(
    (e): e is Extract<FlowRunEvent, { type: 'flow-finished' }> => e.type === 'flow-finished',
  )

/** A prompt (flow input) → text-to-image → picture (flow output) flow. */
const offlinePicture = () => pictureFlow(randomUUID(), 'Offline picture', modelId, 64)

async function remoteRunCount(): Promise<number> {
  const answer = await sandbox.call('GET', '/v1/runs?limit=500')
  expect(answer.status).toBe(200)
  return (answer.body as { items: unknown[] }).items.length
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'atelier-offline-sandbox-'))
  sandbox = await startSandboxHere()
  port = Number(new URL(sandbox.url).port)
  // The backend outlives each sandbox: its url and keys stay the same across restarts.
  opened = await openSyncedCore(sandbox, 'offline', (name, payload) => {
    if (name === 'flowRuns.event') messages.push(payload as FlowRunEventMessage)
    if (name === 'sync.status') statuses.push(payload as SyncStatus)
    for (const listener of [...listeners]) listener()
  })
  core = opened.core
  const model = core.databases.mirror.models.withSlug(
    { orgId: sandbox.orgId },
    'atelier/text-to-image',
  )
  if (!model) throw new Error('The mirror has no atelier/text-to-image.')
  modelId = model.id
}, 60_000)

afterAll(async () => {
  await opened.close()
  await sandbox.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('offline on purpose', () => {
  it('refuses a run at once with OFFLINE while the app knows the service is gone', async () => {
    await sandbox.close()
    const status = await core.syncNow()
    expect(status.state).toBe('offline')

    const started = performance.now()
    const error = await fails('flowRuns.start', {
      flow: offlinePicture(),
      inputs: { prompt: 'a lighthouse at dusk' },
    })
    const elapsed = performance.now() - started

    expect(error.code).toBe('OFFLINE')
    expect(error.message).toMatch(/^You are offline: .*Run again when the service is back\.$/)
    // Loose: the point is that no request and no retry stands between the click and the answer.
    expect(elapsed).toBeLessThan(1000)
  })

  it('notices the service back within 5 s without being asked, and syncs', async () => {
    expect(core.syncStatus().state).toBe('offline')
    const seen = statuses.length
    sandbox = await startSandboxHere()
    const back = performance.now()

    // Noticed: the probe's answer starts a sync (the probe waits at most 4 s between asks).
    await until(
      'a sync started after the sandbox came back',
      () => statuses.slice(seen).some((s) => s.state === 'syncing'),
      5000,
    )
    expect(performance.now() - back).toBeLessThan(5000)
    await until(
      'that sync to end well',
      () => statuses.slice(seen).some((s) => s.state === 'idle' && s.last?.outcome === 'ok'),
      30_000,
    )
    expect(core.syncStatus().state).toBe('idle')
  })
})

describe('an interrupted run', () => {
  it('fails soon in plain words, and Resume finishes it with one remote run', async () => {
    const before = await remoteRunCount()
    const flow = offlinePicture()
    // While online: the model's inputs and outputs are fetched once, as opening the flow does.
    await ok('flows.check', { flow, inputs: { prompt: 'a quiet harbour' } })
    await sandbox.close()

    // The app does not know yet: the run starts, and its dispatch finds nobody listening.
    const started = performance.now()
    const { flowRunId } = await ok('flowRuns.start', {
      flow,
      inputs: { prompt: 'a quiet harbour' },
    })
    await until('the interrupted run to end', () => finishedEvent(flowRunId) !== undefined, 10_000)
    // No 13 s of retries: a refused connection is tried twice, and the dispatch stops there.
    expect(performance.now() - started).toBeLessThan(5000)
    expect(finishedEvent(flowRunId)?.state).toBe('failed')
    const failure = eventsOf(flowRunId).find(
      (e): e is Extract<FlowRunEvent, { type: 'node-failed' }> => e.type === 'node-failed',
    )
    expect(failure?.error).toEqual({
      code: 'SERVICE_UNREACHABLE',
      message:
        'The run stopped because the service could not be reached. Nothing was charged twice: Resume continues where it stopped.',
    })

    sandbox = await startSandboxHere()
    const resumed = await ok('flowRuns.resume', { flow, flowRunId })
    expect(resumed.flowRunId).toBe(flowRunId)
    await until(
      'the resumed run to end',
      () => eventsOf(flowRunId).filter((e) => e.type === 'flow-finished').length === 2,
      20_000,
    )
    const ends = eventsOf(flowRunId).filter(
      (e): e is Extract<FlowRunEvent, { type: 'flow-finished' }> => e.type === 'flow-finished',
    )
    expect(ends.at(-1)?.state).toBe('succeeded')
    expect(eventsOf(flowRunId).find((e) => e.type === 'flow-started' && e.resumed)).toBeDefined()
    // The node was sent once in all: the outage made no second remote run.
    expect(await remoteRunCount()).toBe(before + 1)

    // A finished run has nothing left to resume.
    const again = await fails('flowRuns.resume', { flow, flowRunId })
    expect(again.code).toBe('RUN_REFUSED')
    expect(again.message).toContain('nothing left to resume')
  }, 60_000)

  it('says a flow run it does not know cannot be resumed', async () => {
    const error = await fails('flowRuns.resume', {
      flow: offlinePicture(),
      flowRunId: randomUUID(),
    })
    expect(error.code).toBe('FLOW_RUN_NOT_FOUND')
  })
})

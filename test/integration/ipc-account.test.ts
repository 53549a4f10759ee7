import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import type { AccountSummary } from '../../src-shared/domain/app'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { IpcArgs, IpcChannel, IpcValue } from '../../src-shared/ipc'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The account channel as the window reaches it: the real dispatcher and handlers over a real
 * core on a real sandbox, whose balance the test sets through the sandbox's own control route.
 */

const TTL_MS = 30_000

let sandbox: TestSandbox
let home: string
let logger: Logger
let core: Core
/** Added to the real time: moves the core's clock past the balance's cache by hand. */
let skewMs = 0
const finished = new Map<string, () => void>()

async function ok<C extends IpcChannel>(channel: C, args: IpcArgs<C>): Promise<IpcValue<C>> {
  const handlers = createHandlers({
    platform: 'linux',
    backend: () => null,
    openExternal: () => Promise.resolve(),
    core: () => core,
  })
  const result = await dispatchIpc(handlers, channel, args, { shell: 'web' })
  if (!result.ok) throw new Error(`${channel}: ${result.error.code}: ${result.error.message}`)
  return result.value as IpcValue<C>
}

const summary = () => ok('account.summary', undefined)

async function setBalance(balance: string) {
  expect((await sandbox.call('PUT', '/_sandbox/balance', { body: { balance } })).status).toBe(200)
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  home = mkdtempSync(join(tmpdir(), 'atelier-ipc-account-'))
  logger = openLogger({ home, level: 'info' })
  core = openCore({
    home,
    logger,
    backend: { ...sandboxBackend(sandbox), close: async () => {} },
    clock: () => Date.now() + skewMs,
    // Offline must be told in one attempt, not after the client's backoff.
    client: { retry: { maxAttempts: 1 } },
  })
  core.onEvent((name, payload) => {
    if (name !== 'flowRuns.event') return
    const { flowRunId, event } = payload as FlowRunEventMessage
    if (event.type === 'flow-finished') finished.get(flowRunId)?.()
  })
  const status = await core.syncNow()
  expect(status.last?.outcome).toBe('ok')
}, 60_000)

afterAll(async () => {
  await core.close()
  logger.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

describe('the account summary through IPC', () => {
  it('names the organization and gives the balance in micro-credits, with no profile on the sandbox', async () => {
    await setBalance('12.345678')
    skewMs += TTL_MS
    const answer: AccountSummary = await summary()
    const account = await sandbox.call('GET', '/v1/account')
    const name = (account.body as { organization: { name: string } }).organization.name
    expect(name.length).toBeGreaterThan(0)
    expect(answer).toEqual({
      profileName: null,
      organization: { id: sandbox.orgId, name },
      balanceMicro: 12_345_678,
      backendKind: 'sandbox',
    })
  })

  it('keeps the balance briefly, then reads it again', async () => {
    await setBalance('20')
    skewMs += TTL_MS
    expect((await summary()).balanceMicro).toBe(20_000_000)
    await setBalance('19.5')
    // Within the cache's time: the same answer, the service not asked.
    skewMs += TTL_MS - 1000
    expect((await summary()).balanceMicro).toBe(20_000_000)
    skewMs += 1000
    expect((await summary()).balanceMicro).toBe(19_500_000)
  })

  it('reads the balance again after a sync, without waiting for the cache to expire', async () => {
    await setBalance('7')
    skewMs += TTL_MS
    expect((await summary()).balanceMicro).toBe(7_000_000)
    await setBalance('6.25')
    expect((await core.syncNow()).last?.outcome).toBe('ok')
    expect((await summary()).balanceMicro).toBe(6_250_000)
  })

  it('reads the balance again after a flow run, which spent credit', async () => {
    await setBalance('5')
    skewMs += TTL_MS
    const before = (await summary()).balanceMicro
    expect(before).toBe(5_000_000)
    const model = core.databases.mirror.models.withSlug(
      { orgId: sandbox.orgId },
      'atelier/text-to-image',
    )
    expect(model).toBeDefined()
    const output = randomUUID()
    const flow = {
      id: randomUUID(),
      name: 'One picture',
      inputs: [],
      outputs: [],
      nodes: [
        {
          id: randomUUID(),
          label: 'picture',
          slug: 'picture',
          type_code: 'model',
          model_id: model?.id,
          config: {},
          inputs: [
            { id: randomUUID(), name: 'prompt', variable_type_code: 'text', value: 'a red kite' },
          ],
          outputs: [{ id: output, name: 'image', variable_type_code: 'image' }],
        },
      ],
    }
    const { flowRunId } = await ok('flowRuns.start', { flow, inputs: {} })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`flow run ${flowRunId} did not finish`))
      }, 20_000)
      finished.set(flowRunId, () => {
        clearTimeout(timer)
        resolve()
      })
    })
    const service = await sandbox.call('GET', '/v1/billing/balance')
    const spent = Math.round(Number((service.body as { balance: string }).balance) * 1_000_000)
    expect(spent).toBeLessThan(5_000_000)
    // The cache was not expired by hand: the run's end is what made it read again.
    expect((await summary()).balanceMicro).toBe(spent)
  })

  it('answers null for the balance while offline, and keeps the organization it knows', async () => {
    const faults = await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ pathPrefix: '/v1/', reset: 'before' }] },
    })
    expect(faults.status).toBe(200)
    try {
      expect((await core.syncNow()).state).toBe('offline')
      const offline = await summary()
      expect(offline.balanceMicro).toBeNull()
      expect(offline.organization?.id).toBe(sandbox.orgId)
      expect(offline.organization?.name).not.toBeNull()
    } finally {
      expect((await sandbox.call('DELETE', '/_sandbox/faults')).status).toBe(204)
    }
    await setBalance('3')
    expect((await core.syncNow()).last?.outcome).toBe('ok')
    expect((await summary()).balanceMicro).toBe(3_000_000)
  })
})

import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AccountSummary } from '../../src-shared/domain/app'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { IpcEventName, IpcEvents } from '../../src-shared/ipc'
import { openCore, type Core, type Timers } from '../../src-main/core'
import { openLogger, type Logger } from '../../src-main/log'
import { sandboxBackend } from '../../src-main/workspace'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The balance is read once after a flow run (issue 19): by the write-through, after the run's
 * charge, and told to every view with `account.changed`; nothing else reads it again for the
 * run's end. The core talks to the sandbox through a counting relay, so every request is seen.
 */

const NO_TIMERS: Timers = { setTimeout: () => null, clearTimeout: () => undefined }
const WAIT_MS = 30_000
const BALANCE = 'GET /v1/billing/balance'

let sandbox: TestSandbox
let relay: Server
let home: string
let logger: Logger
let core: Core
/** Every request the core sent, as `METHOD /path` (no query), in order. */
const sent: string[] = []
const heard: { event: IpcEventName; payload: unknown; sentBefore: number }[] = []
const waiting = new Set<() => void>()

function nextEvent<E extends IpcEventName>(
  event: E,
  from: number,
  match: (payload: IpcEvents[E]) => boolean = () => true,
): Promise<{ payload: IpcEvents[E]; sentBefore: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(check)
      reject(new Error(`no ${event} within ${String(WAIT_MS)} ms`))
    }, WAIT_MS)
    const check = () => {
      const found = heard
        .slice(from)
        .find((h) => h.event === event && match(h.payload as IpcEvents[E]))
      if (!found) return
      clearTimeout(timer)
      waiting.delete(check)
      resolve({ payload: found.payload as IpcEvents[E], sentBefore: found.sentBefore })
    }
    waiting.add(check)
    check()
  })
}

/** Passes each request on to the sandbox as it came, and notes it. */
function startRelay(target: string): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const method = request.method ?? 'GET'
      sent.push(`${method} ${(request.url ?? '').split('?')[0] ?? ''}`)
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) {
        if (['host', 'connection', 'content-length'].includes(name) || value === undefined) continue
        headers.set(name, Array.isArray(value) ? value.join(', ') : value)
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined
      fetch(`${target}${request.url ?? ''}`, { method, headers, body })
        .then(async (answer) => {
          const bytes = Buffer.from(await answer.arrayBuffer())
          const out: Record<string, string> = {}
          answer.headers.forEach((value, name) => {
            if (!['content-encoding', 'transfer-encoding', 'content-length'].includes(name)) {
              out[name] = value
            }
          })
          response.writeHead(answer.status, out)
          response.end(bytes)
        })
        .catch(() => {
          response.writeHead(502)
          response.end()
        })
    })
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve(server)
    })
  })
}

async function pictureFlow() {
  const models = await sandbox.call('GET', '/v1/models?limit=500')
  const model = (models.body as { items: { id: string; slug: string }[] }).items.find(
    (m) => m.slug === 'atelier/text-to-image',
  )
  expect(model).toBeDefined()
  return {
    id: randomUUID(),
    name: 'One picture',
    inputs: [],
    outputs: [],
    nodes: [
      {
        id: randomUUID(),
        label: 'kite',
        slug: 'kite',
        type_code: 'model',
        model_id: model?.id,
        config: {},
        inputs: [
          {
            id: randomUUID(),
            name: 'prompt',
            variable_type_code: 'text',
            value: `a kite ${randomUUID()}`,
          },
        ],
        outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
      },
    ],
  }
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  relay = await startRelay(sandbox.url)
  const { port } = relay.address() as AddressInfo
  home = mkdtempSync(join(tmpdir(), 'atelier-write-through-balance-'))
  logger = openLogger({ home, level: 'info' })
  core = openCore({
    home,
    logger,
    backend: {
      ...sandboxBackend({ ...sandbox, url: `http://127.0.0.1:${String(port)}` }),
      close: async () => {},
    },
    timers: NO_TIMERS,
    firstSyncAfterMs: 3_600_000,
    client: { retry: { maxAttempts: 1 } },
  })
  core.onEvent((event, payload) => {
    heard.push({ event, payload, sentBefore: sent.length })
    for (const check of [...waiting]) check()
  })
}, 60_000)

afterAll(async () => {
  await core.close()
  logger.close()
  await new Promise((resolve) => relay.close(resolve))
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

describe('the balance after a flow run', () => {
  it('is read once, after the charge, and told to the views', async () => {
    // A summary before the run: the balance it cached must not stand for the one after it.
    const before = (await core.accountSummary()).balanceMicro
    const from = heard.length
    // A view that asks for the account the moment it hears the run ended, as the window once
    // did: that must not be a second read (the write-through's is the one).
    const atEnd: { asked: Promise<AccountSummary> | null } = { asked: null }
    const off = core.onEvent((event, payload) => {
      const message = payload as FlowRunEventMessage
      if (event === 'flowRuns.event' && message.event.type === 'flow-finished') {
        atEnd.asked ??= core.accountSummary()
      }
    })
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
    const told: { payload: AccountSummary; sentBefore: number } = await nextEvent(
      'account.changed',
      from,
    )
    // A view asking once it was told costs no request: the value told is the one kept.
    const asked = await core.accountSummary()
    off()
    expect(atEnd.asked).not.toBeNull()
    await atEnd.asked
    const afterRun = sent.slice(finished.sentBefore)
    expect(afterRun.filter((request) => request === BALANCE)).toEqual([BALANCE])
    expect(sent.slice(told.sentBefore).filter((request) => request === BALANCE)).toEqual([])

    const service = await sandbox.call('GET', '/v1/billing/balance')
    const serviceMicro = Math.round(
      Number((service.body as { balance: string }).balance) * 1_000_000,
    )
    expect(serviceMicro).toBeLessThan(before ?? Number.POSITIVE_INFINITY)
    expect(told.payload.balanceMicro).toBe(serviceMicro)
    expect(asked.balanceMicro).toBe(serviceMicro)
  }, 60_000)
})

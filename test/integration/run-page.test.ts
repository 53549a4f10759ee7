import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import type { RunDetail } from '../../src-shared/domain/run-page'
import { openDatabases, type Databases } from '../../src-main/db'
import { isRunPageError, RunPageService } from '../../src-main/review/run-page'
import { osKeychain, type Keychain } from '../../src-main/secrets'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import { secretServiceAvailability, startSecretService } from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

// A callback receiver of our own (plain node:http): it keeps the signature header and the raw
// body of every request, and hands each one to whoever waits for it.
interface Received {
  signature: string
  body: string
}

interface Receiver {
  url: string
  /** The request number `index` (from 0), as soon as it has arrived. */
  request: (index: number) => Promise<Received>
  close: () => Promise<void>
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = []
  const waiting = new Map<number, (r: Received) => void>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry = {
        signature: String(req.headers['service-signature'] ?? ''),
        body: Buffer.concat(chunks).toString('utf8'),
      }
      received.push(entry)
      waiting.get(received.length - 1)?.(entry)
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('taken')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/callbacks`,
    request: (index) => {
      const known = received[index]
      if (known) return Promise.resolve(known)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`callback ${index} did not arrive within 10 s`))
        }, 10_000)
        waiting.set(index, (r) => {
          clearTimeout(timer)
          resolve(r)
        })
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      }),
  }
}

/** Refreshes until `done` holds: bounded in count, each round a real request to the sandbox. */
async function refreshUntil(
  page: RunPageService,
  runId: string,
  done: (detail: RunDetail) => boolean,
): Promise<RunDetail> {
  const deadline = Date.now() + 15_000
  for (let round = 0; round < 300; round++) {
    const { detail } = await page.refresh({ runId })
    if (done(detail)) return detail
    if (Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`run ${runId} did not reach the expected state in time`)
}

async function caught(work: () => unknown): Promise<unknown> {
  try {
    await work()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to fail')
}

/** A keychain that is not there: what a machine without a Secret Service gives. */
const noKeychain = osKeychain('aix')

describe('the run page service, against the sandbox and a real mirror', () => {
  let sandbox: TestSandbox
  let receiver: Receiver
  let home: string
  let databases: Databases
  let client: ServiceClient
  let page: RunPageService
  let secret: string
  let failedRun: Run

  const makePage = (keychain: Keychain) =>
    new RunPageService({
      databases,
      client,
      profile: 'default',
      orgId: sandbox.orgId,
      keychain,
    })

  beforeAll(async () => {
    ;[sandbox, receiver] = await Promise.all([startTestSandbox(), startReceiver()])
    home = mkdtempSync(join(tmpdir(), 'atelier-run-page-'))
    databases = openDatabases(home)
    client = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    })
    // The catalogs (log levels among them) come with a sync, as in the app.
    const sync = await new SyncEngine({
      client,
      mirror: databases.mirror,
      profileName: 'default',
      orgId: sandbox.orgId,
    }).syncAll()
    expect(sync.state).toBe('ok')
    page = makePage(noKeychain)

    const created = await sandbox.call('POST', '/v1/callback-secrets', {
      body: { label: 'run page test' },
    })
    const made = created.body as { id: string; plain_secret: string }
    secret = made.plain_secret
    const dispatched = await sandbox.call('POST', '/v1/models/atelier/flaky/runs', {
      body: {
        input: { prompt: 'a test pattern', failure_rate: 1 },
        callback_url: receiver.url,
        callback_secret_id: made.id,
      },
    })
    expect(dispatched.status).toBe(201)
    failedRun = dispatched.body as Run
  })

  afterAll(async () => {
    databases.close()
    await Promise.all([sandbox.close(), receiver.close()])
    rmSync(home, { recursive: true, force: true })
  })

  it('knows no run the mirror lacks, then fetches it and its details on refresh', async () => {
    const missing = await caught(() => page.get({ runId: failedRun.id }))
    expect(isRunPageError(missing) && missing.code).toBe('RUN_NOT_FOUND')

    await receiver.request(0)
    const detail = await refreshUntil(
      page,
      failedRun.id,
      (d) => d.deliveries[0]?.status_code === 'succeeded',
    )
    expect(detail.run).toMatchObject({
      status_code: 'failed',
      failure_code: 'MODEL_ERROR',
      failure_stage: 'inference',
    })
    expect(detail.run.failure_message).toContain('fails about 100% of runs')
    expect(detail.detailsFetched).toBe(true)
    expect(detail.logs.items.map((l) => l.level_code)).toContain('error')
    expect(detail.logLevels.find((l) => l.code === 'error')).toEqual({
      code: 'error',
      name: 'Error',
      color: '#d32f2f',
    })
    expect(detail.nodeRuns).toHaveLength(1)
    expect(detail.nodeRuns[0]?.status_code).toBe('failed')
    expect(detail.deliveries).toHaveLength(1)
    expect(detail.deliveries[0]?.attempts).toMatchObject([
      { attempt_number: 1, status_code: 200, response_body: 'taken' },
    ])
    // No local flow dispatched it.
    expect(detail.flow).toBeNull()

    // Read again from the mirror alone: the same run, with no request made.
    const offline = page.get({ runId: failedRun.id })
    expect(offline.run.id).toBe(failedRun.id)
    expect(offline.deliveries).toEqual(detail.deliveries)
  })

  it('checks a signature: true with the right secret, false with a wrong one', async () => {
    const { signature } = await receiver.request(0)
    const [delivery] = page.get({ runId: failedRun.id }).deliveries
    if (!delivery) throw new Error('no delivery')
    const args = { runId: failedRun.id, deliveryId: delivery.id, signature }
    expect(await page.verify({ ...args, secret })).toEqual({
      valid: true,
      secretFrom: 'pasted',
      remembered: false,
    })
    expect(await page.verify({ ...args, secret: `${secret}x` })).toMatchObject({ valid: false })
    // Another delivery's signature does not fit these bytes, even with the right secret.
    const flipped = signature.replace(/^./, (c) => (c === '0' ? '1' : '0'))
    expect(await page.verify({ ...args, signature: flipped, secret })).toMatchObject({
      valid: false,
    })
    const malformed = await caught(() => page.verify({ ...args, signature: 'not hex', secret }))
    expect(isRunPageError(malformed) && malformed.code).toBe('SIGNATURE_MALFORMED')
    const unknown = await caught(() => page.verify({ ...args, deliveryId: randomUUID(), secret }))
    expect(isRunPageError(unknown) && unknown.code).toBe('DELIVERY_NOT_FOUND')
    // Without a keychain there is nothing remembered to check with, and it says so.
    const noSecret = await caught(() => page.verify(args))
    expect(isRunPageError(noSecret) && noSecret.code).toBe('KEYCHAIN_UNAVAILABLE')
  })

  it('redelivers: a new delivery at once, and its attempt after a refresh', async () => {
    const deliveries = await page.redeliver({ runId: failedRun.id })
    expect(deliveries).toHaveLength(2)
    expect(deliveries[1]).toMatchObject({ is_automatic: false })
    // The mirror has it before any refresh.
    expect(page.get({ runId: failedRun.id }).deliveries).toHaveLength(2)

    const again = await receiver.request(1)
    expect(again.body).toBe((await receiver.request(0)).body)
    const detail = await refreshUntil(
      page,
      failedRun.id,
      (d) => d.deliveries[1]?.status_code === 'succeeded',
    )
    expect(detail.deliveries[1]?.attempts).toMatchObject([{ attempt_number: 1, status_code: 200 }])
    // The new delivery carries the very bytes: the same secret verifies its signature.
    const check = await page.verify({
      runId: failedRun.id,
      deliveryId: detail.deliveries[1]?.id ?? '',
      signature: again.signature,
      secret,
    })
    expect(check.valid).toBe(true)
  })

  it('re-runs once per confirmation: the same key gives the same new run', async () => {
    const key = randomUUID()
    const started = await page.rerun({ runId: failedRun.id, idempotencyKey: key })
    expect(started.runId).not.toBe(failedRun.id)
    const newRun = page.get({ runId: started.runId }).run
    expect(newRun).toMatchObject({ parent_run_id: failedRun.id, source_code: 'rerun' })
    expect(newRun.input).toEqual(failedRun.input)
    const twice = await page.rerun({ runId: failedRun.id, idempotencyKey: key })
    expect(twice.runId).toBe(started.runId)
    await refreshUntil(page, started.runId, (d) => d.run.status_code === 'failed')
  })

  it('cancels a run under way, and the service refuses a second cancel', async () => {
    const dispatched = await sandbox.call('POST', '/v1/models/atelier/slow-render/runs', {
      body: { input: { prompt: 'long', width: 1024, height: 1024 } },
    })
    const run = dispatched.body as Run
    await page.refresh({ runId: run.id })
    const detail = await page.cancel({ runId: run.id })
    expect(detail.run.status_code).toBe('canceled')
    expect(page.get({ runId: run.id }).run.status_code).toBe('canceled')
    const second = await caught(() => page.cancel({ runId: run.id }))
    expect(second).toMatchObject({ status: 409 })
  })

  it('keeps showing the mirror when the service fails, and says why', async () => {
    await sandbox.call('PUT', '/_sandbox/faults', {
      body: { rules: [{ operationId: 'getRun', status: 503 }] },
    })
    try {
      const refresh = await page.refresh({ runId: failedRun.id })
      expect(refresh.refreshed).toBe(false)
      expect(refresh.problem?.code).toBe('SERVICE_UNAVAILABLE')
      expect(refresh.detail.run.status_code).toBe('failed')
    } finally {
      await sandbox.call('DELETE', '/_sandbox/faults')
    }
    // While the sync says offline, nothing is asked at all.
    let asked = 0
    const counting = createServiceClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.keys.admin,
      fetch: (input, init) => {
        asked++
        return fetch(input, init)
      },
    })
    const offlinePage = new RunPageService({
      databases,
      client: counting,
      profile: 'default',
      orgId: sandbox.orgId,
      keychain: noKeychain,
      offline: () => true,
    })
    const refresh = await offlinePage.refresh({ runId: failedRun.id })
    expect(refresh).toMatchObject({ refreshed: false, problem: { code: 'OFFLINE' } })
    expect(asked).toBe(0)
  })

  it('does not show a run of another organization', async () => {
    const other = await sandbox.call('POST', '/v1/models/atelier/flaky/runs', {
      key: sandbox.keys.otherOrg,
      body: { input: { prompt: 'theirs', failure_rate: 1 } },
    })
    const theirs = other.body as Run
    databases.mirror.transaction(() => databases.mirror.runs.upsertPage([theirs]))
    const error = await caught(() => page.get({ runId: theirs.id }))
    expect(isRunPageError(error) && error.code).toBe('RUN_NOT_FOUND')
  })

  describe.runIf(secretServiceAvailability().available)('with a real keychain', () => {
    let session: Awaited<ReturnType<typeof startSecretService>>
    let bus: string | undefined

    beforeAll(async () => {
      session = await startSecretService()
      // The binding reads the session bus from this process's environment.
      bus = process.env.DBUS_SESSION_BUS_ADDRESS
      process.env.DBUS_SESSION_BUS_ADDRESS = session.env.DBUS_SESSION_BUS_ADDRESS
    })

    afterAll(async () => {
      if (bus === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS
      else process.env.DBUS_SESSION_BUS_ADDRESS = bus
      await session.close()
    })

    it('remembers a pasted secret for the callback URL and checks with it later', async () => {
      const withKeychain = makePage(osKeychain())
      const { signature } = await receiver.request(0)
      const [delivery] = withKeychain.get({ runId: failedRun.id }).deliveries
      const args = { runId: failedRun.id, deliveryId: delivery?.id ?? '', signature }
      const none = await caught(() => withKeychain.verify(args))
      expect(isRunPageError(none) && none.code).toBe('SECRET_NEEDED')

      expect(await withKeychain.verify({ ...args, secret, remember: true })).toEqual({
        valid: true,
        secretFrom: 'pasted',
        remembered: true,
      })
      expect(session.lookup(`callback-secret:${receiver.url}`)).toBe(secret)
      expect(await withKeychain.verify(args)).toEqual({
        valid: true,
        secretFrom: 'keychain',
        remembered: false,
      })
      // Nothing of the secret reached the mirror or the ledger.
      for (const db of [databases.mirror.db, databases.ledger.db]) {
        const tables = db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%'")
          .pluck()
          .all() as string[]
        for (const table of tables) {
          const rows = db.prepare(`SELECT * FROM "${table}"`).all()
          expect(JSON.stringify(rows)).not.toContain(secret)
        }
      }
    })
  })
})

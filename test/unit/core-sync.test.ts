import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { SyncStatus } from '../../src-shared/domain/sync'
import type { IpcEventName } from '../../src-shared/ipc'
import { sandboxBackend, type Backend } from '../../src-main/workspace'
import {
  openCore,
  OFFLINE_BACKOFF,
  PROGRESS_EVENT_MS,
  SYNC_INTERVAL_MS,
  type AfterSyncContext,
  type Core,
  type CoreOptions,
  type Timers,
} from '../../src-main/core'
import { openDatabases } from '../../src-main/db'
import { openLogger, type Logger } from '../../src-main/log'
import { OutboxReplayer } from '../../src-main/outbox'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient } from '../../src-main/service'
import { SYNC_COLLECTIONS } from '../../src-main/sync'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/** Timers moved on by hand: only the interval and the backoff go through them. */
class ManualTimers implements Timers {
  now = 0
  private next = 1
  private queue: { id: number; at: number; callback: () => void }[] = []

  setTimeout = (callback: () => void, ms: number): unknown => {
    const id = this.next++
    this.queue.push({ id, at: this.now + ms, callback })
    return id
  }

  clearTimeout = (handle: unknown): void => {
    this.queue = this.queue.filter((timer) => timer.id !== handle)
  }

  /** The delays still to run, from now. */
  pending(): number[] {
    return this.queue.map((timer) => timer.at - this.now)
  }

  advance(ms: number): void {
    this.now += ms
    const due = this.queue.filter((timer) => timer.at <= this.now)
    this.queue = this.queue.filter((timer) => timer.at > this.now)
    for (const timer of due) timer.callback()
  }
}

const START = Date.parse('2026-03-01T09:00:00Z')

interface Harness {
  core: Core
  timers: ManualTimers
  clock: () => number
  logger: Logger
  home: string
  /** Every event pushed since open, with the moment it arrived. */
  events: { name: IpcEventName; payload: unknown; at: number }[]
  statuses: () => SyncStatus[]
  /** Resolves with the first status (from now on) that passes, bounded in time. */
  until: (test: (status: SyncStatus) => boolean) => Promise<SyncStatus>
}

let sandbox: TestSandbox
const homes: string[] = []
const opened: Harness[] = []

function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'atelier-core-'))
  homes.push(home)
  return home
}

function open(
  options: { home?: string; backend?: Backend } & Partial<
    Omit<CoreOptions, 'home' | 'backend'>
  > = {},
): Harness {
  const home = options.home ?? newHome()
  const timers = new ManualTimers()
  const clock = () => START + timers.now
  const logger = openLogger({ home, level: 'debug' })
  const events: Harness['events'] = []
  const waiters = new Set<(status: SyncStatus) => void>()
  const { backend = sandboxBackend(sandbox), ...rest } = options
  const core = openCore({
    logger,
    clock,
    timers,
    // One attempt: a refused connection is known at once, not after the client's own backoff.
    client: { retry: { maxAttempts: 1 } },
    ...rest,
    home,
    backend: { ...backend, close: () => Promise.resolve() },
  })
  core.onEvent((name, payload) => {
    events.push({ name, payload, at: performance.now() })
    if (name === 'sync.status') for (const waiter of waiters) waiter(payload as SyncStatus)
  })
  const harness: Harness = {
    core,
    timers,
    clock,
    logger,
    home,
    events,
    statuses: () =>
      events.filter((e) => e.name === 'sync.status').map((e) => e.payload as SyncStatus),
    until: (test) =>
      new Promise((resolve, reject) => {
        const current = core.syncStatus()
        if (test(current)) {
          resolve(current)
          return
        }
        const timeout = setTimeout(() => {
          waiters.delete(check)
          reject(
            new Error(`no such status within 15 s; last: ${JSON.stringify(core.syncStatus())}`),
          )
        }, 15_000)
        const check = (status: SyncStatus) => {
          if (!test(status)) return
          clearTimeout(timeout)
          waiters.delete(check)
          resolve(status)
        }
        waiters.add(check)
      }),
  }
  opened.push(harness)
  return harness
}

const idle = (status: SyncStatus) => status.state === 'idle' && status.last !== null

function runCount(core: Core): number {
  return core.databases.mirror.db.prepare('SELECT count(*) FROM runs').pluck().get() as number
}

async function setFaults(rules: object[]): Promise<void> {
  const answer = await sandbox.call('PUT', '/_sandbox/faults', { body: { rules } })
  expect(answer.status).toBe(200)
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 0 })
  await seedHistory(sandbox.services, sandbox.orgId, 120)
}, 60_000)

afterEach(async () => {
  await setFaults([])
  for (const harness of opened.splice(0)) {
    await harness.core.close()
    harness.logger.close()
  }
})

afterAll(async () => {
  await sandbox.close()
  for (const home of homes) rmSync(home, { recursive: true, force: true })
})

describe('the background sync', () => {
  it('syncs at start into the mirror, then again every 5 minutes', async () => {
    const h = open()
    const first = await h.until(idle)
    expect(first).toMatchObject({
      state: 'idle',
      lastOkAt: h.clock(),
      progress: null,
      nextAt: h.clock() + SYNC_INTERVAL_MS,
      last: { outcome: 'ok', message: null, code: null },
    })
    expect(first.last?.fetched).toBeGreaterThanOrEqual(120)
    expect(runCount(h.core)).toBe(120)
    expect(h.timers.pending()).toEqual([SYNC_INTERVAL_MS])

    const states = h.statuses().map((s) => s.state)
    expect(states[0]).toBe('syncing')
    expect(states.at(-1)).toBe('idle')
    // Progress names each collection in order, with its place among all of them.
    const progress = h.statuses().flatMap((s) => (s.progress ? [s.progress] : []))
    expect(progress.length).toBeGreaterThan(0)
    for (const p of progress) {
      // The pull's collections, then the default after-sync steps: the outbox and the media.
      expect(p.steps).toBe(SYNC_COLLECTIONS.length + 2)
      expect(p.step).toBeGreaterThanOrEqual(1)
    }
    expect(progress.at(-1)?.collection).toBe('media')
    expect(existsSync(join(h.home, 'media'))).toBe(true)

    // A change on the service arrives with the next scheduled sync, and only it.
    const [run] = (
      (await sandbox.call('GET', '/v1/runs?limit=1')).body as { items: { id: string }[] }
    ).items
    if (!run) throw new Error('no run')
    await sandbox.call('PATCH', `/v1/runs/${run.id}`, { body: { metadata: { starred: true } } })
    h.timers.advance(SYNC_INTERVAL_MS - 1)
    expect(h.core.syncStatus().state).toBe('idle')
    const before = h.statuses().length
    h.timers.advance(1)
    await h.until((s) => s.state === 'syncing')
    const second = await h.until((s) => idle(s) && s.last?.finishedAt === h.clock())
    expect(second.last?.fetched).toBeGreaterThanOrEqual(1)
    expect(h.statuses().slice(before)[0]?.state).toBe('syncing')
    const stored = h.core.databases.mirror.runs.get(run.id)
    expect(stored?.metadata).toEqual({ starred: true })

    // The log has the requests and the results, and never the key.
    const log = readFileSync(h.logger.file, 'utf8')
    expect(log).toMatch(/"msg":"GET \/v1\/runs\?[^"]*sort_by=updated_at:asc[^"]* 200 \d+ ms"/)
    expect(log).toContain('"msg":"sync ok in')
    expect(log).not.toContain(sandbox.keys.admin)
  })

  it("lets a window's first screen go first: the first sync waits `firstSyncAfterMs`, unless asked for", async () => {
    const h = open({ firstSyncAfterMs: 1000 })
    expect(h.core.syncStatus().state).toBe('idle')
    expect(h.timers.pending()).toEqual([1000])
    h.timers.advance(999)
    expect(h.core.syncStatus().state).toBe('idle')
    expect(runCount(h.core)).toBe(0)
    h.timers.advance(1)
    const first = await h.until(idle)
    expect(first.last?.outcome).toBe('ok')
    expect(runCount(h.core)).toBe(120)
    expect(h.timers.pending()).toEqual([SYNC_INTERVAL_MS])

    // Asked for before then (the Sync button), it starts at once and the planned one goes.
    const asked = open({ firstSyncAfterMs: 1000 })
    const status = await asked.core.syncNow()
    expect(status.last?.outcome).toBe('ok')
    expect(runCount(asked.core)).toBe(120)
    expect(asked.timers.pending()).toEqual([SYNC_INTERVAL_MS])
  })

  it('lets a demand made during a sync join it, and answers when it ends', async () => {
    const h = open()
    // The one at start, joined by the two demands made while it runs.
    const [a, b] = await Promise.all([h.core.syncNow(), h.core.syncNow()])
    expect(a).toBe(b)
    expect(a.state).toBe('idle')
    expect(h.statuses().filter((s) => s.state === 'syncing' && s.progress === null)).toHaveLength(1)
    // Once it has ended, a demand starts a new one, and the planned one moves after it.
    h.timers.advance(60_000)
    const again = await h.core.syncNow()
    expect(again.last?.finishedAt).toBe(h.clock())
    expect(h.statuses().filter((s) => s.state === 'syncing' && s.progress === null)).toHaveLength(2)
    expect(h.timers.pending()).toEqual([SYNC_INTERVAL_MS])
  })

  it('goes offline with a backoff from 30 s doubling to 5 min, and comes back as soon as a request succeeds', async () => {
    const h = open()
    await h.until(idle)
    const runs = runCount(h.core)
    await setFaults([{ pathPrefix: '/v1/', reset: 'before' }])

    const offline = await h.core.syncNow()
    expect(offline).toMatchObject({
      state: 'offline',
      lastOkAt: START,
      nextAt: h.clock() + OFFLINE_BACKOFF.initialMs,
      last: { outcome: 'offline', code: 'NETWORK_ERROR' },
    })
    expect(offline.last?.message).toContain('offline')
    // What was synced stays readable.
    expect(runCount(h.core)).toBe(runs)

    const waits: number[] = []
    for (let i = 0; i < 6; i++) {
      const [wait] = h.timers.pending()
      if (wait === undefined) throw new Error('no retry planned')
      waits.push(wait)
      h.timers.advance(wait)
      await h.until((s) => s.state === 'offline' && s.last?.finishedAt === h.clock())
    }
    expect(waits).toEqual([30_000, 60_000, 120_000, 240_000, 300_000, 300_000])

    // The service is back; any request that gets an answer brings the sync back at once.
    await setFaults([])
    await h.core.client.get('/v1/account')
    const back = await h.until(idle)
    expect(back.last?.outcome).toBe('ok')
    expect(back.lastOkAt).toBe(h.clock())
    expect(h.timers.pending()).toEqual([SYNC_INTERVAL_MS])
  })

  it('says when the key is refused, and waits the regular interval to ask again', async () => {
    const h = open({
      backend: { ...sandboxBackend(sandbox), apiKey: sandbox.keys.otherOrg },
    })
    const refused = await h.until((s) => s.last !== null)
    expect(refused).toMatchObject({
      state: 'unauthorized',
      lastOkAt: null,
      nextAt: h.clock() + SYNC_INTERVAL_MS,
      last: { outcome: 'unauthorized', code: 'ORGANIZATION_MEMBERSHIP_REQUIRED' },
    })
    expect(readFileSync(h.logger.file, 'utf8')).not.toContain(sandbox.keys.otherOrg)
  })

  it('replays writes made offline after a pull that reached the service', async () => {
    const home = newHome()
    // A folder created while Atelier could not reach the service: queued in the ledger only.
    const offline = openDatabases(home)
    const queued = new OutboxReplayer({
      client: createServiceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
      ledger: offline.ledger,
      mirror: offline.mirror,
      profileName: sandboxBackend(sandbox).profile,
      orgId: sandbox.orgId,
    }).createFolder('made offline')
    offline.close()

    const h = open({ home })
    await h.until(idle)
    const entry = h.core.databases.ledger.outbox.get(queued.seq)
    expect(entry?.state).toBe('sent')
    const folders = (
      (await sandbox.call('GET', '/v1/asset-folders?limit=500')).body as {
        items: { id: string; name: string }[]
      }
    ).items.filter((f) => f.name === 'made offline')
    expect(folders).toHaveLength(1)
    expect(h.core.databases.mirror.assetFolders.get(folders[0]?.id ?? '')?.name).toBe(
      'made offline',
    )
  })

  it('runs the after-sync steps with their progress, and a failing step changes nothing', async () => {
    const seen: { state: string; aborted: boolean }[] = []
    const h = open({
      afterSync: [
        {
          name: 'outbox',
          run: () => Promise.reject(new Error('the outbox broke')),
        },
        {
          name: 'media',
          run: async (context: AfterSyncContext) => {
            seen.push({ state: context.result.state, aborted: context.signal.aborted })
            context.progress(1, 2)
            await new Promise((resolve) => setTimeout(resolve, PROGRESS_EVENT_MS * 2))
            context.progress(2, 2)
            return { summary: 'two files', report: { files: 2 } }
          },
        },
      ],
    })
    const done = await h.until(idle)
    expect(done.last?.outcome).toBe('ok')
    expect(seen).toEqual([{ state: 'ok', aborted: false }])
    const media = h.statuses().flatMap((s) => (s.progress?.collection === 'media' ? [s] : []))
    expect(media.at(-1)?.progress).toEqual({
      collection: 'media',
      done: 2,
      total: 2,
      step: SYNC_COLLECTIONS.length + 2,
      steps: SYNC_COLLECTIONS.length + 2,
    })
    expect(readFileSync(h.logger.file, 'utf8')).toContain('the after-sync step \\"outbox\\" failed')
  })

  it('pushes progress at most ten times a second', async () => {
    const h = open({
      afterSync: [
        {
          name: 'media',
          run: async ({ progress }) => {
            for (let done = 1; done <= 40; done++) {
              progress(done, 40)
              await new Promise((resolve) => setTimeout(resolve, 5))
            }
            await new Promise((resolve) => setTimeout(resolve, PROGRESS_EVENT_MS * 3))
            return undefined
          },
        },
      ],
    })
    await h.until(idle)
    const pushes = h.events.filter(
      (e) => e.name === 'sync.status' && (e.payload as SyncStatus).progress?.collection === 'media',
    )
    for (let i = 1; i < pushes.length; i++) {
      const gap = (pushes[i]?.at ?? 0) - (pushes[i - 1]?.at ?? 0)
      expect(gap).toBeGreaterThanOrEqual(PROGRESS_EVENT_MS - 5)
    }
    // Throttled, never stale: the latest count goes out once the wait is over.
    expect((pushes.at(-1)?.payload as SyncStatus).progress?.done).toBe(40)
    expect(pushes.length).toBeLessThan(40)
  })

  it('closes what it had opened when its open fails halfway, the databases included', async () => {
    const home = newHome()
    const logger = openLogger({ home, level: 'debug' })
    // The first sync's timer is the last thing the open sets up: a failure there comes after the
    // databases, the flow runner and the scheduler are open.
    const failing: Timers = {
      setTimeout: () => {
        throw new Error('no timers here')
      },
      clearTimeout: () => undefined,
    }
    expect(() =>
      openCore({
        logger,
        timers: failing,
        firstSyncAfterMs: 1,
        home,
        backend: { ...sandboxBackend(sandbox), close: () => Promise.resolve() },
      }),
    ).toThrow('no timers here')
    // Closed in the background (the open is synchronous): each database's clean-close note is
    // written once its last connection closed, and the WAL is gone.
    for (const file of ['mirror.sqlite', 'ledger.sqlite']) {
      await expect.poll(() => existsSync(join(home, `${file}-closed.json`))).toBe(true)
      expect(existsSync(join(home, `${file}-wal`))).toBe(false)
    }
    await expect
      .poll(() => readFileSync(join(home, 'logs', 'atelier.log'), 'utf8'))
      .toMatch(/"msg":"closed"/)
    logger.close()
  })

  it('stops the running sync on close, plans nothing more, and can be closed twice', async () => {
    await setFaults([{ operationId: 'listRuns', latencyMs: 3_000 }])
    const h = open()
    await h.until((s) => s.progress?.collection === 'runs')
    const pending = h.core.syncNow()
    const closing = h.core.close()
    expect(h.core.close()).toBe(closing)
    await closing
    await pending
    const count = h.events.length
    expect(h.timers.pending()).toEqual([])
    expect(h.core.databases.mirror.db.open).toBe(false)
    h.timers.advance(SYNC_INTERVAL_MS)
    expect(h.events.length).toBe(count)
  })

  it('remembers the last full sync across restarts, and refills a mirror found damaged', async () => {
    const home = newHome()
    const first = open({ home })
    const synced = await first.until(idle)
    await first.core.close()
    first.logger.close()

    const reopened = open({ home })
    expect(reopened.core.syncStatus().lastOkAt).not.toBeNull()
    expect(reopened.core.syncStatus().lastOkAt).toBeLessThanOrEqual(synced.lastOkAt ?? 0)
    await reopened.until(idle)
    await reopened.core.close()
    reopened.logger.close()

    writeFileSync(join(home, 'mirror.sqlite'), Buffer.alloc(8192, 7))
    const rebuilt = open({ home })
    expect(rebuilt.core.notices).toHaveLength(1)
    expect(rebuilt.core.notices[0]).toMatchObject({ level: 'warning' })
    expect(rebuilt.core.notices[0]?.message).toContain('was damaged')
    expect(rebuilt.core.syncStatus().lastOkAt).toBeNull()
    await rebuilt.until(idle)
    expect(runCount(rebuilt.core)).toBe(120)
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PROBE_BACKOFF, SyncScheduler, type SyncJob } from '../../src-main/core/sync-schedule'
import type { Timers } from '../../src-main/core/timers'
import { openLogger } from '../../src-main/log'
import type { SyncResult } from '../../src-main/sync'
import type { SyncStatus } from '../../src-shared/domain/sync'

/** Timers moved on by hand: each planned wait is kept with its delay, run when the test says. */
function manualTimers() {
  const planned = new Map<number, { ms: number; run: () => void }>()
  let next = 0
  const timers: Timers = {
    setTimeout: (run, ms) => {
      const id = ++next
      planned.set(id, { ms, run })
      return id
    },
    clearTimeout: (id) => {
      planned.delete(id as number)
    },
  }
  /** Runs the planned wait of exactly `ms`, and says it was there. */
  const fire = (ms: number): boolean => {
    for (const [id, timer] of planned) {
      if (timer.ms !== ms) continue
      planned.delete(id)
      timer.run()
      return true
    }
    return false
  }
  return { timers, planned, fire }
}

const result = (state: SyncResult['state']): SyncResult => ({
  state,
  collections: [],
  elapsedMs: 1,
})

/** Resolves once `statuses` has one that `done` holds of; the scheduler pushes them in order. */
function statusWhere(statuses: SyncStatus[], done: (s: SyncStatus) => boolean) {
  return new Promise<SyncStatus>((resolve) => {
    const check = () => {
      const found = statuses.find(done)
      if (found) resolve(found)
      else setImmediate(check)
    }
    check()
  })
}

describe('the probe while offline', () => {
  it('asks at 0.5 s, 1 s, 2 s, 4 s, 4 s… and syncs at once when the service answers', async () => {
    const { timers, planned, fire } = manualTimers()
    const outcomes: SyncResult['state'][] = ['offline', 'ok']
    let syncs = 0
    const job: SyncJob = () => {
      syncs++
      return Promise.resolve(result(outcomes.shift() ?? 'ok'))
    }
    const answers = [false, false, false, false, true]
    let probes = 0
    const statuses: SyncStatus[] = []
    const home = mkdtempSync(join(tmpdir(), 'atelier-probe-'))
    const logger = openLogger({ home, level: 'error' })
    const scheduler = new SyncScheduler({
      job,
      logger,
      clock: Date.now,
      timers,
      intervalMs: 60_000,
      backoff: { initialMs: 30_000, maxMs: 300_000 },
      lastOkAt: null,
      onStatus: (status) => statuses.push(status),
      probe: () => {
        probes++
        return Promise.resolve(answers.shift() ?? true)
      },
    })

    expect((await scheduler.syncNow()).state).toBe('offline')
    expect(PROBE_BACKOFF).toEqual({ initialMs: 500, maxMs: 4_000 })
    for (const [index, ms] of [500, 1000, 2000, 4000].entries()) {
      expect(fire(ms)).toBe(true)
      // The failed probe plans the next one; wait until it has.
      await new Promise<void>((resolve) => {
        const check = () => {
          if (probes === index + 1 && planned.size > 1) resolve()
          else setImmediate(check)
        }
        check()
      })
    }
    expect(syncs).toBe(1)
    // The ceiling: the fifth probe waits 4 s again, and this one answers.
    expect(fire(4000)).toBe(true)
    const back = await statusWhere(statuses, (s) => s.state === 'idle' && s.last?.outcome === 'ok')
    expect(back.state).toBe('idle')
    expect(probes).toBe(5)
    expect(syncs).toBe(2)
    // Online again: no probe is planned any more, only the regular sync.
    expect([...planned.values()].map((t) => t.ms)).toEqual([60_000])
    await scheduler.close()
    logger.close()
    rmSync(home, { recursive: true, force: true })
  })
})

import { describe, expect, it } from 'vitest'
import { Limiter } from '../../src-main/limiter'
import {
  DEFAULT_POLL,
  nextPollWait,
  presignedExpiryMs,
  RunDurations,
  type PollTiming,
} from '../../src-main/executor/remote'

const timing: PollTiming = {
  initialMs: 100,
  factor: 1.5,
  maxMs: 5000,
  dueShare: 0.02,
  minMs: 5,
  progressMs: 1000,
}

describe('the timing of polls', () => {
  it('backs off from the first wait when nothing is known of the target', () => {
    const waits = [0, 1, 2, 3, 20].map((polls) =>
      nextPollWait(timing, { expectedMs: undefined, elapsedMs: 0, polls, latePolls: 0 }),
    )
    expect(waits).toEqual([100, 150, 225, 337.5, 5000])
  })

  it('looks first half an interval after the run is due, then close together', () => {
    // Expected 300 ms: the interval is 2% of it, 6 ms; the first look lands at 303 ms.
    expect(nextPollWait(timing, { expectedMs: 300, elapsedMs: 2, polls: 0, latePolls: 0 })).toBe(
      301,
    )
    expect(
      nextPollWait(timing, { expectedMs: 300, elapsedMs: 303, polls: 1, latePolls: 0 }),
    ).toBeCloseTo(6)
  })

  it('reads a long run at least every progressMs until it is due', () => {
    const wait = nextPollWait(timing, {
      expectedMs: 60_000,
      elapsedMs: 10_000,
      polls: 3,
      latePolls: 0,
    })
    expect(wait).toBe(1000)
  })

  it('backs off from a run that stays late, up to maxMs', () => {
    const late = [0, 1, 2, 30].map((latePolls) =>
      nextPollWait(timing, { expectedMs: 1000, elapsedMs: 1500, polls: 5, latePolls }),
    )
    expect(late[0]).toBeCloseTo(20)
    expect(late[1]).toBeCloseTo(30)
    expect(late[2]).toBeCloseTo(45)
    expect(late[3]).toBe(5000)
  })

  it('never polls closer than minMs, however short the run', () => {
    expect(nextPollWait(timing, { expectedMs: 10, elapsedMs: 20, polls: 4, latePolls: 0 })).toBe(5)
  })

  it('has defaults that describe a sane policy', () => {
    expect(DEFAULT_POLL.minMs).toBeGreaterThan(0)
    expect(DEFAULT_POLL.dueShare).toBeGreaterThan(0)
    expect(DEFAULT_POLL.dueShare).toBeLessThan(0.1)
    expect(DEFAULT_POLL.maxMs).toBeGreaterThanOrEqual(DEFAULT_POLL.progressMs)
  })
})

describe('the durations of recent runs', () => {
  const run = (createdMs: number, ms: number | null) => ({
    created_at: new Date(createdMs).toISOString(),
    completed_at: ms === null ? null : new Date(createdMs + ms).toISOString(),
  })

  it('expects the median of the last runs of each target', () => {
    const durations = new RunDurations()
    expect(durations.expected('a/model')).toBeUndefined()
    for (const ms of [300, 320, 900, 310, 305]) durations.note('a/model', run(1e12, ms))
    expect(durations.expected('a/model')).toBe(310)
    expect(durations.expected('other/model')).toBeUndefined()
  })

  it('forgets all but the last 16, and ignores runs without an end', () => {
    const durations = new RunDurations()
    for (let i = 0; i < 16; i++) durations.note('a/model', run(1e12, 5000))
    for (let i = 0; i < 16; i++) durations.note('a/model', run(1e12, 200))
    durations.note('a/model', run(1e12, null))
    expect(durations.expected('a/model')).toBe(200)
  })

  it('starts from the history it is given for a target seen the first time', () => {
    const asked: string[] = []
    const durations = new RunDurations((target) => {
      asked.push(target)
      return target === 'a/model' ? [400, 420, 410] : []
    })
    expect(durations.expected('a/model')).toBe(410)
    durations.note('a/model', run(1e12, 100))
    durations.note('a/model', run(1e12, 100))
    expect(durations.expected('a/model')).toBe(400)
    expect(asked).toEqual(['a/model'])
  })
})

describe('the concurrency limiter', () => {
  async function grantOrder(limit: number, priorities: number[]): Promise<number[]> {
    const limiter = new Limiter(limit)
    const signal = new AbortController().signal
    const held = await Promise.all(Array.from({ length: limit }, () => limiter.acquire(signal)))
    const order: number[] = []
    const waiting = priorities.map((priority, index) =>
      limiter.acquire(signal, priority).then((release) => {
        order.push(index)
        release()
      }),
    )
    for (const release of held) release()
    await Promise.all(waiting)
    return order
  }

  it('gives a free slot to the waiter with the most work behind it', async () => {
    expect(await grantOrder(1, [1, 5, 3, 5, 0])).toEqual([1, 3, 2, 0, 4])
  })

  it('keeps arrival order among equal priorities', async () => {
    expect(await grantOrder(2, [2, 2, 2, 2])).toEqual([0, 1, 2, 3])
  })

  it('drops a waiter whose signal aborts, and the slot goes to the next', async () => {
    const limiter = new Limiter(1)
    const release = await limiter.acquire(new AbortController().signal)
    const leaving = new AbortController()
    const first = limiter.acquire(leaving.signal, 10)
    const second = limiter.acquire(new AbortController().signal, 1)
    leaving.abort(new Error('canceled'))
    await expect(first).rejects.toThrow('canceled')
    release()
    const next = await second
    next()
  })
})

describe('the expiry of presigned URLs', () => {
  it('is read from the forms storage services sign URLs with', () => {
    expect(
      presignedExpiryMs('http://127.0.0.1:1/_storage/blobs/ab?expires=1800000000&signature=x'),
    ).toBe(1_800_000_000_000)
    expect(presignedExpiryMs('https://cdn.example/a.png?Expires=1800000000&Signature=x')).toBe(
      1_800_000_000_000,
    )
    expect(
      presignedExpiryMs(
        'https://bucket.s3.amazonaws.com/a.png?X-Amz-Date=20261121T100000Z&X-Amz-Expires=3600&X-Amz-Signature=x',
      ),
    ).toBe(Date.parse('2026-11-21T11:00:00Z'))
    expect(
      presignedExpiryMs(
        'https://storage.googleapis.com/b/a.png?X-Goog-Date=20261121T100000Z&X-Goog-Expires=600',
      ),
    ).toBe(Date.parse('2026-11-21T10:10:00Z'))
  })

  it('is unknown for a URL that does not say, or is no URL', () => {
    expect(presignedExpiryMs('https://example.com/a.png')).toBeUndefined()
    expect(presignedExpiryMs('https://example.com/a.png?expires=soon')).toBeUndefined()
    expect(presignedExpiryMs('not a url')).toBeUndefined()
  })
})

import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { Limiter } from '../../src-main/limiter'

describe('the limiter', () => {
  it('hangs one listener on a signal that many waiters share, and none once they are served', async () => {
    const limiter = new Limiter(2)
    const run = new AbortController()
    const held = await Promise.all([limiter.acquire(run.signal), limiter.acquire(run.signal)])
    const waiting = Array.from({ length: 250 }, () => limiter.acquire(run.signal))
    expect(limiter.waiting).toBe(250)
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1)
    for (const release of held) release()
    // Each release hands its slot on; serve every waiter in turn.
    for (const next of waiting) (await next)()
    expect(limiter.inFlight).toBe(0)
    expect(limiter.waiting).toBe(0)
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0)
  })

  it('rejects every waiter of an aborted signal, and only those', async () => {
    const limiter = new Limiter(1)
    const first = new AbortController()
    const second = new AbortController()
    const release = await limiter.acquire(first.signal)
    const mine = [limiter.acquire(first.signal), limiter.acquire(first.signal)]
    const theirs = limiter.acquire(second.signal)
    first.abort(new Error('canceled'))
    for (const waiter of mine) await expect(waiter).rejects.toThrow('canceled')
    expect(limiter.waiting).toBe(1)
    release()
    const granted = await theirs
    expect(limiter.inFlight).toBe(1)
    granted()
    expect(limiter.inFlight).toBe(0)
    expect(getEventListeners(second.signal, 'abort')).toHaveLength(0)
  })

  it('serves higher priorities first, equal ones in the order they came', async () => {
    const limiter = new Limiter(1)
    const signal = new AbortController().signal
    const release = await limiter.acquire(signal)
    const order: string[] = []
    const waiters = [
      ['low a', 0],
      ['high', 5],
      ['low b', 0],
      ['mid', 2],
    ].map(([name, priority]) =>
      limiter.acquire(signal, priority as number).then((done) => {
        order.push(name as string)
        done()
      }),
    )
    release()
    await Promise.all(waiters)
    expect(order).toEqual(['high', 'mid', 'low a', 'low b'])
  })
})

import { describe, expect, expectTypeOf, it } from 'vitest'
import type { ItemOf, ListPath, ResultOf } from '../../src-main/service'
import {
  paginate,
  paginatePages,
  ServiceError,
  type FetchPage,
  type Page,
} from '../../src-main/service'
import type { components } from '../../src-shared/api/schema.gen'

function pagesFrom(pages: Record<string, Page<number>>): {
  fetchPage: FetchPage<number>
  asked: (string | null)[]
} {
  const asked: (string | null)[] = []
  const fetchPage: FetchPage<number> = (cursor) => {
    asked.push(cursor)
    const page = pages[cursor ?? 'start']
    return page ? Promise.resolve(page) : Promise.reject(new Error(`no page ${String(cursor)}`))
  }
  return { fetchPage, asked }
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

describe('paginate', () => {
  it('follows next until it is null', async () => {
    const { fetchPage, asked } = pagesFrom({
      start: { items: [1, 2], next: 'b' },
      b: { items: [3], next: 'c' },
      c: { items: [], next: 'd' },
      d: { items: [4], next: null },
    })
    await expect(collect(paginate(fetchPage))).resolves.toEqual([1, 2, 3, 4])
    expect(asked).toEqual([null, 'b', 'c', 'd'])
  })

  it('treats a missing next as the end', async () => {
    const { fetchPage } = pagesFrom({ start: { items: [1] } as Page<number> })
    await expect(collect(paginate(fetchPage))).resolves.toEqual([1])
  })

  it('starts from a saved cursor', async () => {
    const { fetchPage, asked } = pagesFrom({ b: { items: [3], next: null } })
    await expect(collect(paginatePages(fetchPage, { start: 'b' }))).resolves.toEqual([
      { items: [3], next: null },
    ])
    expect(asked).toEqual(['b'])
  })

  it('fetches nothing more once the consumer stops', async () => {
    const { fetchPage, asked } = pagesFrom({
      start: { items: [1, 2], next: 'b' },
      b: { items: [3], next: null },
    })
    for await (const item of paginate(fetchPage)) {
      expect(item).toBe(1)
      break
    }
    expect(asked).toEqual([null])
  })

  it.each([
    ['to itself', { start: { items: [1], next: 'a' }, a: { items: [2], next: 'a' } }],
    [
      'to an earlier cursor',
      {
        start: { items: [1], next: 'a' },
        a: { items: [2], next: 'b' },
        b: { items: [3], next: 'a' },
      },
    ],
  ])('throws BAD_RESPONSE when a cursor points back %s', async (_what, pages) => {
    const { fetchPage } = pagesFrom(pages)
    const seen: number[] = []
    const walk = async () => {
      for await (const item of paginate(fetchPage, { path: '/v1/runs' })) seen.push(item)
    }
    const error = await walk().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ code: 'BAD_RESPONSE', path: '/v1/runs' })
    expect(seen.length).toBeLessThanOrEqual(3)
  })

  it('throws BAD_RESPONSE for a page without items', async () => {
    const { fetchPage } = pagesFrom({ start: { next: null } as unknown as Page<number> })
    await expect(collect(paginate(fetchPage))).rejects.toMatchObject({ code: 'BAD_RESPONSE' })
  })
})

describe('typed listing', () => {
  it('knows which paths list and what they hold', () => {
    expectTypeOf<'/v1/runs'>().toExtend<ListPath>()
    expectTypeOf<'/v1/billing/balance'>().not.toExtend<ListPath>()
    expectTypeOf<ItemOf<'/v1/runs'>>().toEqualTypeOf<components['schemas']['Run']>()
    expectTypeOf<ResultOf<'get', '/v1/billing/balance'>>().toEqualTypeOf<
      components['schemas']['Balance']
    >()
  })
})

import type { ServiceClient } from '../service'

/** A list page as the engine reads it: the contract's envelope, items still untyped. */
export interface ListPage {
  items: unknown[]
  next: string | null
}

export type Query = Record<string, string | number>

/** The client's typed calls, loosened: the engine picks paths from tables, not literals. */
interface LooseInit {
  params?: { query?: Query; header?: Record<string, string>; path?: Record<string, string> }
  signal?: AbortSignal
  onHeaders?: (headers: Headers) => void
}
type LooseGet = (path: string, init: LooseInit) => Promise<unknown>
type LoosePages = (path: string, init: LooseInit) => AsyncGenerator<ListPage>

export const PREFER_COUNT = { Prefer: 'count=exact' } as const

/** `X-Total-Count` as a whole number; undefined when the service did not count. */
export function totalOf(headers: Headers): number | undefined {
  const value = headers.get('X-Total-Count')
  if (value === null || !/^\d+$/.test(value.trim())) return undefined
  const total = Number(value)
  return Number.isSafeInteger(total) ? total : undefined
}

/**
 * Every page of a list. The first is asked for with `Prefer: count=exact` when `onTotal` is
 * given (the count is the same on every page, so only the first pays for it); the rest resume
 * from its `next` through the client's own walk, which refuses a cursor handed out twice.
 */
export async function* listPages(
  client: ServiceClient,
  path: string,
  query: Query,
  options: { signal?: AbortSignal | undefined; onTotal?: (total: number) => void } = {},
): AsyncGenerator<ListPage, void, undefined> {
  const { signal, onTotal } = options
  const get = client.get as unknown as LooseGet
  const first = (await get(path, {
    params: { query, ...(onTotal ? { header: PREFER_COUNT } : {}) },
    ...(signal ? { signal } : {}),
    ...(onTotal
      ? {
          onHeaders: (headers: Headers) => {
            const total = totalOf(headers)
            if (total !== undefined) onTotal(total)
          },
        }
      : {}),
  })) as ListPage
  yield first
  if (first.next === null) return
  yield* (client as unknown as { pages: LoosePages }).pages(path, {
    params: { query: { ...query, pq: first.next } },
    ...(signal ? { signal } : {}),
  })
}

/**
 * Pulls pages one ahead of the consumer: while the consumer writes a page (synchronously, in
 * SQLite), the request for the next one is already on the wire. Starting the request is not
 * enough on its own: `fetch` only sends it after a few turns of the microtask queue, which a
 * synchronous write would hold back until it is done, so each prefetch waits one macrotask turn
 * (the request reaches the socket) before the page is handed over.
 */
export async function* prefetched<T>(
  source: AsyncGenerator<T, void, undefined>,
  isLast: (item: T) => boolean,
): AsyncGenerator<T, void, undefined> {
  let pending = source.next()
  try {
    for (;;) {
      const result = await pending
      if (result.done) return
      const last = isLast(result.value)
      pending = last ? Promise.resolve({ done: true, value: undefined }) : source.next()
      // A failed prefetch is seen at the next await; until then it must not go unhandled.
      pending.catch(() => undefined)
      if (!last) await new Promise((resolve) => setImmediate(resolve))
      yield result.value
    }
  } finally {
    await source.return(undefined).catch(() => undefined)
  }
}

import { oneLine, ServiceError } from './errors'

/** The service's list envelope. `first` and `previous` are not needed to walk forward. */
export interface Page<T> {
  items: T[]
  next: string | null
  first?: string | null
  previous?: string | null
}

/** Fetches the page at `cursor` (passed back as `pq`); null asks for the first page. */
export type FetchPage<T> = (cursor: string | null) => Promise<Page<T>>

export interface PaginateOptions {
  /** A cursor saved earlier, to resume a listing where it stopped. */
  start?: string | null
  /** Named in errors. */
  path?: string
}

/**
 * Walks the `next` cursors until the service says there is no next page.
 * Pages are fetched only as the consumer pulls them, so breaking out of the
 * loop fetches nothing more.
 */
export async function* paginatePages<T>(
  fetchPage: FetchPage<T>,
  options: PaginateOptions = {},
): AsyncGenerator<Page<T>, void, undefined> {
  const path = options.path ?? ''
  let cursor = options.start ?? null
  // Every cursor ever followed: a service that hands one out twice would
  // otherwise keep us listing the same pages forever.
  const followed = new Set<string>(cursor === null ? [] : [cursor])
  for (;;) {
    const page = await fetchPage(cursor)
    if (!Array.isArray(page.items)) {
      throw badPage(path, 'The service sent a list page without items.')
    }
    yield page
    const next = page.next ?? null
    if (next === null) return
    if (followed.has(next)) {
      throw badPage(
        path,
        `The service sent the page cursor "${oneLine(next, 60)}" a second time, so listing stopped instead of repeating itself.`,
      )
    }
    followed.add(next)
    cursor = next
  }
}

/** The items of every page, in order. */
export async function* paginate<T>(
  fetchPage: FetchPage<T>,
  options: PaginateOptions = {},
): AsyncGenerator<T, void, undefined> {
  for await (const page of paginatePages(fetchPage, options)) yield* page.items
}

function badPage(path: string, what: string): ServiceError {
  return new ServiceError(`${what} Try again later; if it keeps happening, report it.`, {
    status: 200,
    code: 'BAD_RESPONSE',
    serviceMessage: null,
    errors: null,
    requestId: null,
    method: 'GET',
    path,
    attempts: 1,
    outcomeUnknown: false,
  })
}

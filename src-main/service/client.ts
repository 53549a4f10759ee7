import createClient, {
  type Client,
  type ClientPathsWithMethod,
  type MaybeOptionalInit,
  type MethodResponse,
} from 'openapi-fetch'
import type { paths } from '../../src-shared/api/schema.gen'
import {
  paginate,
  paginatePages,
  type FetchPage,
  type Page,
  type PaginateOptions,
} from './pagination'
import { defaultSleep, resolveRetryPolicy, type RetryPolicy, type Sleep } from './retry'
import {
  createTransport,
  parsedBodies,
  type AuthHeader,
  type RequestLog,
  type RetryInfo,
  type TransportConfig,
} from './transport'

export interface ServiceClientOptions {
  /** Where the service lives, e.g. `https://api.example.com`; paths start at `/v1`. */
  baseUrl: string
  apiKey: string
  /** Sent as `X-Organization-Id` on every call unless a call sends its own. */
  organizationId?: string | undefined
  /** `bearer` (default) sends `Authorization: Bearer <key>`; `x-api-key` sends that header. */
  authHeader?: AuthHeader | undefined
  /** Per attempt, not per call; 30 s by default. */
  timeoutMs?: number | undefined
  retry?: Partial<RetryPolicy> | undefined
  fetch?: typeof fetch | undefined
  /** Injected by tests to record the backoff instead of waiting it out. */
  sleep?: Sleep | undefined
  /** Injected by tests to pin the jitter. */
  random?: (() => number) | undefined
  /** Told before each wait; never sees the key. */
  onRetry?: ((info: RetryInfo) => void) | undefined
  /** Told after each attempt (a debug log): method, path, status, time; never a header or key. */
  log?: ((entry: RequestLog) => void) | undefined
  userAgent?: string | undefined
}

/** Options every call accepts besides openapi-fetch's own (`params`, `body`, `headers`, `signal`). */
export interface CallOptions {
  /** Overrides the client's per-attempt timeout for this call. */
  timeoutMs?: number | undefined
  /**
   * Told the headers of each successful answer (every page, for `list` and `pages`), for what
   * the body does not carry, such as `X-Total-Count`.
   */
  onHeaders?: ((headers: Headers) => void) | undefined
}

type Api = Client<paths>
export type Verb = 'get' | 'put' | 'post' | 'delete' | 'patch'
export type PathFor<M extends Verb> = ClientPathsWithMethod<Api, M>
export type InitFor<M extends Verb, P extends PathFor<M>> = MaybeOptionalInit<paths[P], M>
// The init argument may be left out only when the operation needs no parameters and no body.
type Args<Init> = undefined extends Init ? [init?: Init & CallOptions] : [init: Init & CallOptions]
// An operation without a response body (204) resolves to undefined, not to `never`.
type OrUndefined<T> = [T] extends [never] ? undefined : T
export type ResultOf<M extends Verb, P extends PathFor<M>, Init = object> = OrUndefined<
  MethodResponse<Api, M, P, Init>
>

/** Resolves to the response body; every failure rejects with a ServiceError. */
export type Call<M extends Verb> = <P extends PathFor<M>, Init extends InitFor<M, P>>(
  path: P,
  ...init: Args<Init>
) => Promise<ResultOf<M, P, Init>>

/** GET operations that answer with the list envelope. */
export type ListPath = {
  [P in PathFor<'get'>]: ResultOf<'get', P> extends Page<unknown> ? P : never
}[PathFor<'get'>]
export type ItemOf<P extends ListPath> = ResultOf<'get', P> extends Page<infer T> ? T : never

export interface ServiceClient {
  get: Call<'get'>
  post: Call<'post'>
  put: Call<'put'>
  patch: Call<'patch'>
  delete: Call<'delete'>
  /**
   * Every item of a list operation, following `next` through `pq`. A `pq` in
   * the query resumes from that cursor.
   */
  list<P extends ListPath>(path: P, ...init: Args<InitFor<'get', P>>): AsyncGenerator<ItemOf<P>>
  /** Page by page, so that a caller can store each page's `next` as it goes. */
  pages<P extends ListPath>(
    path: P,
    ...init: Args<InitFor<'get', P>>
  ): AsyncGenerator<ResultOf<'get', P>>
}

type LooseInit = Record<string, unknown> & CallOptions & { params?: { query?: object } }

export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const { baseUrl, config } = resolveOptions(options)
  const transport = createTransport(config)
  // openapi-fetch builds the Request from the typed call; the transport, passed
  // per call so that it can carry the call's options, does everything after
  // that, so no endpoint has request code of its own.
  const api = createClient<paths>({ baseUrl })
  // The wrapper's signatures carry the types; inside, one untyped path serves all verbs.
  const request = api.request as unknown as (
    method: Verb,
    path: string,
    init: Record<string, unknown>,
  ) => Promise<{ response: Response }>

  async function call(method: Verb, path: string, init: object = {}): Promise<unknown> {
    const { timeoutMs, onHeaders, signal, ...rest } = init as LooseInit & { signal?: AbortSignal }
    if (timeoutMs !== undefined) assertTimeout(timeoutMs)
    // A non-2xx never reaches openapi-fetch: the transport turns it into a
    // ServiceError, so there is no `error` branch for a caller to forget.
    const { response } = await request(method, path, {
      ...rest,
      // The transport has parsed the body already (see parsedBodies); openapi-fetch leaves it.
      parseAs: 'stream',
      // The signal goes to the transport, not into the Request: a Request made with a signal
      // hangs a listener on it until a garbage collection, and one signal may serve thousands
      // of calls (an upload).
      fetch: (req: Request) => transport(req, { timeoutMs, signal }),
    })
    onHeaders?.(response.headers)
    return parsedBodies.get(response)
  }

  // The cursor goes back as `pq`; a `pq` the caller passed is where the walk starts.
  function listing(path: string, options: object = {}): [FetchPage<unknown>, PaginateOptions] {
    const init = options as LooseInit
    const query = init.params?.query as { pq?: unknown } | undefined
    const fetchPage: FetchPage<unknown> = (cursor) =>
      call('get', path, {
        ...init,
        params: { ...init.params, query: { ...query, ...(cursor === null ? {} : { pq: cursor }) } },
      }) as Promise<Page<unknown>>
    return [fetchPage, { start: typeof query?.pq === 'string' ? query.pq : null, path }]
  }

  const verb =
    <M extends Verb>(method: M): Call<M> =>
    (path, ...init) =>
      call(method, path, init[0]) as never

  return {
    get: verb('get'),
    post: verb('post'),
    put: verb('put'),
    patch: verb('patch'),
    delete: verb('delete'),
    list: (path, ...init) => paginate(...listing(path, init[0])) as never,
    pages: (path, ...init) => paginatePages(...listing(path, init[0])) as never,
  }
}

function resolveOptions(options: ServiceClientOptions): {
  baseUrl: string
  config: TransportConfig
} {
  let url: URL
  try {
    url = new URL(options.baseUrl)
  } catch {
    throw new TypeError('baseUrl is not a valid URL.')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError('baseUrl must start with https:// or http://.')
  }
  // fetch refuses URLs with credentials, and they would end up in error messages.
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('baseUrl must not contain a user name or password.')
  }
  // Checked here because Headers would otherwise throw later with the key in its message.
  if (!/^[\x21-\x7e]+$/.test(options.apiKey)) {
    throw new TypeError('apiKey must be non-empty printable ASCII without spaces.')
  }
  const timeoutMs = options.timeoutMs ?? 30_000
  assertTimeout(timeoutMs)
  return {
    baseUrl: url.href.replace(/\/+$/, ''),
    config: {
      apiKey: options.apiKey,
      authHeader: options.authHeader ?? 'bearer',
      organizationId: options.organizationId,
      userAgent: options.userAgent ?? 'Atelier',
      timeoutMs,
      retry: resolveRetryPolicy(options.retry),
      fetch: options.fetch ?? globalThis.fetch,
      sleep: options.sleep ?? defaultSleep,
      random: options.random ?? Math.random,
      onRetry: options.onRetry,
      log: options.log,
    },
  }
}

function assertTimeout(timeoutMs: number): void {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError('timeoutMs must be a positive number of milliseconds.')
  }
}

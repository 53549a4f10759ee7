/**
 * A service that is not ours: every answer is made at random from the contract's response
 * schemas (json-schema-faker, seeded), so the client meets what the real service may send
 * wherever the spec says "not shown". It is a test double of the service, not of our code:
 *
 * - Each request is routed by the contract (`resources/openapi.yaml`) and answered with its
 *   operation's success status and a body generated from that response's schema; the same seed
 *   gives the same answers, whatever order concurrent requests arrive in (each answer's seed is
 *   the service's seed and what the answer is for).
 * - What any real service keeps consistent is kept: the organization asked for, the ids in the
 *   path, a child's parent id, a created record echoing what was sent, a record read again by
 *   id, lists that end (collections of at most `maxListItems`, sorted by `sort_by`, filtered by
 *   `q`, walked with opaque cursors), runs a client dispatched reaching a terminal status after
 *   a few polls, and presigned upload URLs that point back here, so the three-step upload can
 *   finish.
 * - `extraProperties` adds a field the client never saw to every object; `unknownEnumValues` adds
 *   a value it never saw to every string enum (a new status code among them).
 * - It remembers every record it answered (`sent`), for a test to compare with what the client
 *   kept.
 */
import { createHash, randomUUID } from 'node:crypto'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { EXTRA_ENUM_VALUE, EXTRA_PROPERTY, loadContract, type Route } from './contract'
import { pageOf } from './lists'
import { pinChildren, pinPath, RecordMaker, seedFor } from './records'

export interface RandomServiceOptions {
  seed: number
  /** Adds a field no client knows to every object (default false). */
  extraProperties?: boolean
  /** Adds a value no client knows to every string enum, a new status code among them (default false). */
  unknownEnumValues?: boolean
  /** The most records one collection holds (default 8). */
  maxListItems?: number
  /** The most records on one page, whatever `limit` asks (default 5: every walk takes pages). */
  maxPageSize?: number
}

export { EXTRA_ENUM_VALUE, EXTRA_PROPERTY }

export interface SentRecord {
  /** The contract path of the operation that answered it, e.g. `/v1/runs/{run_id}/logs`. */
  template: string
  /** Its components schema name. */
  schema: string
  record: Record<string, unknown>
  /** Whether the (widened) contract allows it: a generator slip is not the client's fault. */
  conforms: boolean
}

export interface RandomService {
  readonly url: string
  readonly seed: number
  readonly orgId: string
  readonly apiKey: string
  /** Every record answered, in order (a record read twice is here twice). */
  readonly sent: SentRecord[]
  /** Every request, as `METHOD path?query`. */
  readonly requests: string[]
  close(): Promise<void>
}

type Json = Record<string, unknown>
type Params = Record<string, string>

const TERMINAL = ['succeeded', 'failed', 'canceled']
const GOING = ['queued', 'starting', 'running']
/** Which list holds a tombstone's collection, so some tombstones delete what was sent. */
const TOMBSTONED: Record<string, string> = {
  runs: '/v1/runs',
  assets: '/v1/assets',
  asset_folders: '/v1/asset-folders',
  evaluations: '/v1/evaluations',
  flows: '/v1/flows',
  wfengine_workflows: '/v1/comfyui-workflows',
}
const PART_SIZE = 8 * 1024 * 1024
/** Actions whose answer is the record the path names (not a new one, as a re-run is). */
const ACTS_ON_ITSELF = /\/(cancel|feedback|graph)$/

/** A record's next updated_at: a second after its last, so a client takes it as newer. */
function later(record: Json): string {
  const ms = Date.parse(String(record.updated_at))
  return new Date((Number.isNaN(ms) ? Date.now() : ms) + 1000).toISOString()
}

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

class Answer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

export async function startRandomService(options: RandomServiceOptions): Promise<RandomService> {
  const { seed } = options
  const maxListItems = options.maxListItems ?? 8
  const contract = loadContract()
  const orgId = randomUuid(seed, 'organization')
  const widening = {
    extraProperty: options.extraProperties ? EXTRA_PROPERTY : undefined,
    extraEnumValue: options.unknownEnumValues ? EXTRA_ENUM_VALUE : undefined,
  }
  const maker = new RecordMaker(contract, widening, seed, orgId)
  const sent: SentRecord[] = []
  const requests: string[] = []
  /** Collections by the path that lists them (parameters filled in). */
  const collections = new Map<string, { schema: string; top: boolean; records: Json[] }>()
  /** Records created through the API, by schema, for the lists of their kind made later. */
  const created = new Map<string, Json[]>()
  /** Every record answered with an id, by id: read again, it is the same record. */
  const known = new Map<string, { schema: string; record: Json }>()
  /** Runs a client dispatched: polled, they go on to a terminal status. */
  const followed = new Map<string, { polls: number; finishAt: number }>()
  const uploads = new Map<string, Json>()
  let base = ''

  const roll = (key: string, n: number) => seedFor(seed, key) % n

  function remember(template: string, schema: string, record: unknown): void {
    if (!isObject(record)) return
    // A copy: the record as it was answered, whatever this service changes in it later.
    const copy = structuredClone(record)
    sent.push({ template, schema, record: copy, conforms: maker.conforms(schema, copy) })
    if (typeof record.id === 'string') known.set(record.id, { schema, record })
  }

  function collection(route: Route, path: string, itemSchema: string, params: Params): Json[] {
    const held = collections.get(path)
    if (held) return held.records
    const count = roll(`${path}#count`, maxListItems + 1)
    const records: Json[] = []
    for (let i = 0; i < count; i++) {
      const record = maker.make(itemSchema, `${path}#${i}`) as Json
      pinPath(record, params, false)
      pinChildren(record, itemSchema)
      if (itemSchema === 'Tombstone') aimTombstone(record, `${path}#${i}`)
      // A collection's keys are unique; the generator's short random codes are not always.
      for (const key of ['id', 'code'] as const) {
        const value = record[key]
        if (typeof value === 'string' && records.some((other) => other[key] === value)) {
          record[key] = `${value}-${i}`
        }
      }
      records.push(record)
    }
    const top = route.template === path
    if (top) records.push(...(created.get(itemSchema) ?? []))
    collections.set(path, { schema: itemSchema, top, records })
    return records
  }

  /** A record created through the API is in the lists of its kind from then on. */
  function joinLists(schema: string, value: Json): void {
    created.set(schema, [...(created.get(schema) ?? []), value])
    for (const list of collections.values()) {
      if (list.top && list.schema === schema) list.records.push(value)
    }
  }

  /** Half the tombstones delete a record this service sent, the others one it never did. */
  function aimTombstone(tombstone: Json, key: string): void {
    const list = TOMBSTONED[String(tombstone.collection)]
    const ids = sent.filter((s) => s.template === list).map((s) => s.record.id)
    if (ids.length > 0 && roll(`${key}#aim`, 2) === 0) {
      tombstone.record_id = ids[roll(`${key}#which`, ids.length)]
    }
  }

  function list(
    route: Route,
    path: string,
    params: Params,
    query: URLSearchParams,
    prefer: string,
  ) {
    const itemSchema = route.itemSchema ?? ''
    const page = pageOf(collection(route, path, itemSchema, params), {
      q: query.get('q'),
      sortBy: query.get('sort_by'),
      limit: Number(query.get('limit') ?? 50),
      cursor: query.get('pq'),
      pageSize: 1 + roll(`${path}#page-size`, options.maxPageSize ?? 5),
    })
    for (const item of page.items) remember(route.template, itemSchema, item)
    const headers: Record<string, string> = {}
    // A service may leave the count out even when asked: the client must do without it.
    if (/count=exact/.test(prefer) && roll(`${path}#counts`, 3) > 0) {
      headers['X-Total-Count'] = String(page.total)
    }
    const { items, first, next, previous } = page
    return new Answer(route.status, { items, first, next, previous }, headers)
  }

  /**
   * A single record. Asked for by id (the path ends with it, or acts on it: cancel, feedback, a
   * graph), it is the record answered before, changed by what a PATCH or PUT sent; else a new
   * one, made for this very request.
   */
  function record(route: Route, path: string, params: Params, method: string, body: unknown) {
    const schema = route.recordSchema ?? ''
    const ownId =
      (/\}$/.test(route.template) && method !== 'POST') || ACTS_ON_ITSELF.test(route.template)
    const id = ownId ? (Object.values(params).at(-1) ?? '') : null
    const held = id === null ? undefined : known.get(id)
    let value: Json
    if (held && held.schema === schema && method !== 'DELETE') {
      value = method === 'GET' ? held.record : { ...held.record, updated_at: later(held.record) }
    } else {
      // The same request gets the same answer, whatever else came between.
      value = maker.make(schema, requestKey(method, path, body)) as Json
      pinPath(value, params, ownId)
      pinChildren(value, schema)
    }
    if (method !== 'GET' && isObject(body)) echo(value, body)
    if (schema === 'Run') value = runAnswer(route, path, params, method, value, body)
    if (route.template === '/v1/asset-uploads' && method === 'POST') value = declared(value)
    if (route.template.startsWith('/v1/asset-uploads/')) value = uploadAnswer(route, params, value)
    remember(route.template, schema, value)
    if (method === 'POST' && !ownId && typeof value.id === 'string') joinLists(schema, value)
    return new Answer(route.status, value)
  }

  /** A created or changed record says back what was sent, where it has such a field. */
  function echo(value: Json, body: Json): void {
    for (const [key, sentValue] of Object.entries(body)) if (key in value) value[key] = sentValue
  }

  function runAnswer(
    route: Route,
    path: string,
    params: Params,
    method: string,
    run: Json,
    body: unknown,
  ): Json {
    if (method === 'POST' && /\/(runs|rerun)$/.test(route.template)) {
      // Dispatched here: it is followed to a terminal status over a few polls.
      if (route.template.endsWith('/rerun')) run.parent_run_id = params.run_id
      if (typeof params.provider === 'string')
        run.model_slug = `${params.provider}/${params.model ?? ''}`
      run.status_code = GOING[roll(`${path}#first`, GOING.length)]
      run.id = randomUuid(seed, requestKey(method, path, body))
      followed.set(run.id as string, { polls: 0, finishAt: 1 + roll(`${String(run.id)}#polls`, 4) })
      return run
    }
    const follow = typeof run.id === 'string' ? followed.get(run.id) : undefined
    if (method !== 'GET' || !follow) return run
    follow.polls++
    const fresh = maker.make('Run', `${path}#poll${follow.polls}`) as Json
    const done = follow.polls >= follow.finishAt
    const statuses = done
      ? TERMINAL
      : [...GOING, ...(options.unknownEnumValues ? [EXTRA_ENUM_VALUE] : [])]
    const next: Json = {
      ...run,
      status_code: statuses[roll(`${String(run.id)}#status${follow.polls}`, statuses.length)],
      progress: done ? 1 : fresh.progress,
      updated_at: later(run),
    }
    if (done) {
      for (const key of [
        'output',
        'cost',
        'failure_code',
        'failure_stage',
        'failure_message',
        'completed_at',
      ]) {
        next[key] = fresh[key]
      }
    }
    known.set(String(run.id), { schema: 'Run', record: next })
    return next
  }

  /** A new upload: its parts cover the declared size, each PUT to this service's storage. */
  function declared(upload: Json): Json {
    const size = Number(upload.size_bytes)
    const partSize =
      typeof upload.part_size === 'number' && upload.part_size > 0 ? upload.part_size : PART_SIZE
    const count = upload.status_code === 'duplicate' ? 0 : Math.max(1, Math.ceil(size / partSize))
    upload.part_size = partSize
    upload.part_count = count
    upload.parts = Array.from({ length: count }, (_, i) => part(String(upload.id), i + 1))
    uploads.set(String(upload.id), upload)
    return upload
  }

  const part = (uploadId: string, partNumber: number): Json => ({
    part_number: partNumber,
    url: `${base}/_storage/${uploadId}/${partNumber}`,
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    received: false,
    etag: null,
  })

  function uploadAnswer(route: Route, params: Params, value: Json): Json {
    const upload = uploads.get(params.upload_id ?? '')
    if (!upload) return value
    if (route.template.endsWith('/confirmations')) {
      // The asset is the bytes declared; the rest of it is the generator's.
      for (const key of ['sha256', 'size_bytes', 'content_type', 'folder_id'])
        value[key] = upload[key]
      value.name = upload.filename
      return value
    }
    if (route.template.endsWith('/parts')) {
      const parts = upload.parts as Json[]
      upload.parts = parts.map((p) =>
        p.received ? p : part(String(upload.id), Number(p.part_number)),
      )
    }
    return upload
  }

  function storagePut(path: string, bytes: number): Answer {
    const [, , uploadId = '', partNumber = ''] = path.split('/')
    const upload = uploads.get(uploadId)
    const parts = (upload?.parts ?? []) as Json[]
    const stored = parts.find((p) => p.part_number === Number(partNumber))
    if (!stored)
      return new Answer(404, {
        code: 'NO_SUCH_PART',
        message: 'Storage has no such part.',
        errors: null,
      })
    stored.received = true
    stored.etag = createHash('sha256').update(`${path}:${bytes}`).digest('hex').slice(0, 32)
    return new Answer(200, null, { ETag: `"${String(stored.etag)}"` })
  }

  function answer(method: string, url: URL, body: unknown, bytes: number, prefer: string): Answer {
    const path = url.pathname
    if (method === 'PUT' && path.startsWith('/_storage/')) return storagePut(path, bytes)
    for (const route of contract.routes) {
      if (route.method !== method) continue
      const params = route.match(path)
      if (!params) continue
      if (route.itemSchema) return list(route, path, params, url.searchParams, prefer)
      if (route.recordSchema) return record(route, path, params, method, body)
      if (route.arrayOf) {
        const items = maker.make(route.schema ?? {}, `${method} ${path}`) as Json[]
        for (const item of items) {
          pinPath(item, params, false)
          pinChildren(item, route.arrayOf)
          remember(route.template, route.arrayOf, item)
        }
        return new Answer(route.status, items)
      }
      return new Answer(route.status, null)
    }
    return new Answer(404, {
      code: 'NOT_FOUND',
      message: `The contract has no ${method} ${path}.`,
      errors: null,
    })
  }

  const sockets = new Set<Socket>()
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base)
      const method = req.method ?? 'GET'
      requests.push(`${method} ${url.pathname}${url.search}`)
      const raw = Buffer.concat(chunks)
      let reply: Answer
      try {
        const body: unknown =
          raw.length > 0 && /json/.test(req.headers['content-type'] ?? '')
            ? JSON.parse(raw.toString('utf8'))
            : null
        reply = answer(method, url, body, raw.length, String(req.headers.prefer ?? ''))
      } catch (error) {
        // A mistake of this test double, said plainly rather than as a made-up answer.
        reply = new Answer(500, {
          code: 'RANDOM_SERVICE_BUG',
          message: error instanceof Error ? error.message : String(error),
          errors: null,
        })
      }
      const text = reply.body === null ? '' : JSON.stringify(reply.body)
      res.writeHead(reply.status, {
        'Service-Request-Id': randomUUID(),
        ...(text === '' ? {} : { 'Content-Type': 'application/json' }),
        'Content-Length': String(Buffer.byteLength(text)),
        ...reply.headers,
      })
      res.end(text)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    url: base,
    seed,
    orgId,
    apiKey: `random-${seed}`,
    sent,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
}

const requestKey = (method: string, path: string, body: unknown) =>
  `${method} ${path} ${createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('hex')}`

/** A version 4 UUID that depends only on the seed and the key. */
function randomUuid(seed: number, key: string): string {
  const hex = createHash('sha256').update(`${seed}:${key}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

import { Agent, request as httpRequest } from 'node:http'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findModel } from '../../src-main/sandbox/models'
import type { Evaluation, Flow } from '../../src-shared/api'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Every request body is read, parsed, held to the limits and validated in one place
 * (src-main/sandbox/request) before a handler sees it. Each case sends what a misbehaving client
 * would, over real HTTP, and reads the organization's records back to show nothing changed.
 */

let sandbox: TestSandbox
/** Keep-alive, so that the server answering early (413, 415) never cuts a body mid-write. */
const agent = new Agent({ keepAlive: true, maxSockets: 4 })

interface Problem {
  field: string | null
  code: string
  message: string
}
interface Envelope {
  code: string
  message: string
  errors: Problem[] | null
}
interface Answer {
  status: number
  text: string
  body: unknown
}

interface Sent {
  /** Sent as is: a string is the exact bytes, so `__proto__` keys survive. */
  body?: string | Buffer
  /** The Content-Type header; none when left out. */
  type?: string
  /** Sent chunked, without a Content-Length, and never finished: the server must decide alone. */
  unfinished?: boolean
}

/** One request with exactly these headers and bytes (fetch would add a Content-Type itself). */
function send(
  method: string,
  path: string,
  { body, type, unfinished }: Sent = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${sandbox.keys.admin}` }
    if (type !== undefined) headers['content-type'] = type
    if (body !== undefined && !unfinished)
      headers['content-length'] = String(Buffer.byteLength(body))
    let answered = false
    const request = httpRequest(
      new URL(path, sandbox.url),
      { method, headers, agent: unfinished ? false : agent },
      (response) => {
        answered = true
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', reject)
        response.on('end', () => {
          if (unfinished) request.destroy()
          const text = Buffer.concat(chunks).toString('utf8')
          let parsed: unknown
          try {
            parsed = text ? JSON.parse(text) : undefined
          } catch {
            parsed = undefined
          }
          resolve({ status: response.statusCode ?? 0, text, body: parsed })
        })
      },
    )
    request.on('error', (error) => {
      // Our own destroy after the answer, for an unfinished body.
      if (!answered) reject(error)
    })
    if (body === undefined) request.end()
    else if (unfinished) request.write(body)
    else request.end(body)
  })
}

const json = (method: string, path: string, body: string, type = 'application/json') =>
  send(method, path, { body, type })

function envelopeOf(answer: Answer): Envelope {
  expect(answer.body, answer.text.slice(0, 300)).toMatchObject({
    code: expect.any(String),
    message: expect.any(String),
  })
  return answer.body as Envelope
}

/** Status, code and the fields of errors[], in order; the message must say something. */
function expectRefusal(answer: Answer, status: number, code: string, fields: (string | null)[]) {
  expect(answer.status, answer.text.slice(0, 300)).toBe(status)
  const envelope = envelopeOf(answer)
  expect(envelope.code).toBe(code)
  expect(envelope.message.length).toBeGreaterThan(20)
  expect(envelope.errors?.map((problem) => problem.field)).toEqual(fields)
  for (const problem of envelope.errors ?? []) expect(problem.message.length).toBeGreaterThan(10)
  return envelope
}

async function read(path: string): Promise<unknown> {
  const response = await sandbox.call('GET', path)
  expect(response.status, response.text.slice(0, 300)).toBe(200)
  return response.body
}

/** The organization's records, as the API shows them. */
async function snapshot(): Promise<unknown[]> {
  const lists = [
    '/v1/flows?limit=500',
    '/v1/runs?limit=500',
    '/v1/evaluations?limit=500',
    '/v1/webhooks?limit=500',
    '/v1/asset-folders?limit=500',
    '/v1/assets?limit=500',
    '/v1/batches?limit=500',
    '/v1/comfyui-workflows?limit=500',
  ]
  return Promise.all(lists.map(read))
}

/** Sends a refused request and proves it changed nothing. */
async function refusedWithoutChange(
  attempt: () => Promise<Answer>,
  status: number,
  code: string,
  fields: (string | null)[],
): Promise<Envelope> {
  const before = await snapshot()
  const envelope = expectRefusal(await attempt(), status, code, fields)
  expect(await snapshot()).toEqual(before)
  return envelope
}

/** `{"a": {"a": … 1}}`: `levels` objects, one inside the other. */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
}

/** The dotted path of the object at `depth` inside `{"context_variables": nested(…)}`. */
function pathAtDepth(depth: number): string {
  return ['context_variables', ...Array<string>(depth - 2).fill('a')].join('.')
}

async function createFlow(name: string): Promise<Flow> {
  const response = await sandbox.call('POST', '/v1/flows', { body: { name } })
  expect(response.status, response.text).toBe(201)
  return response.body as Flow
}

/** A flow and everything under it, as read back over the API. */
async function flowState(id: string): Promise<unknown[]> {
  return Promise.all(
    ['', '/nodes', '/inputs', '/outputs'].map((part) => read(`/v1/flows/${id}${part}`)),
  )
}

let flow: Flow

beforeAll(async () => {
  sandbox = await startTestSandbox()
  const graph = await sandbox.call('POST', '/v1/flows', {
    body: {
      name: 'Bodies under test',
      description: 'kept as it is by every refused request',
      context_variables: { mood: 'calm' },
      nodes: [
        {
          label: 'Upscale',
          type_code: 'model',
          model_id: findModel('atelier/upscale')?.id ?? '',
          inputs: [{ name: 'image', variable_type_code: 'image' }],
          outputs: [{ name: 'image', variable_type_code: 'image' }],
        },
      ],
    },
  })
  expect(graph.status, graph.text).toBe(201)
  flow = graph.body as Flow
})

afterAll(async () => {
  agent.destroy()
  await sandbox.close()
})

describe('a body that is not JSON', () => {
  /** Every operation of the contract that declares a body, with placeholder path values. */
  function bodyOperations(required: boolean): { method: string; path: string }[] {
    const paths = sandbox.services.contract.document.paths as Record<
      string,
      Record<string, { requestBody?: { required?: boolean } }>
    >
    const found: { method: string; path: string }[] = []
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!operation.requestBody || (operation.requestBody.required === true) !== required)
          continue
        const path = template.replace(/{\w+}/g, '0190a000-0000-7000-8000-000000000000')
        found.push({ method: method.toUpperCase(), path })
      }
    }
    return found
  }

  it('is refused by every operation that requires one: none at all or text/plain 415, empty JSON 400', async () => {
    const operations = bodyOperations(true)
    expect(operations.length).toBeGreaterThanOrEqual(14)
    const before = await snapshot()
    for (const { method, path } of operations) {
      const none = await send(method, path)
      const noneEnvelope = expectRefusal(none, 415, 'UNSUPPORTED_MEDIA_TYPE', [null])
      expect(noneEnvelope.errors?.[0]?.code).toBe('missing_body')
      expect(noneEnvelope.message).toContain('needs a body and none was sent')
      expect(noneEnvelope.message).toContain('Content-Type: application/json')
      const empty = await send(method, path, { body: '', type: 'application/json' })
      const emptyEnvelope = expectRefusal(empty, 400, 'BAD_REQUEST', [null])
      expect(emptyEnvelope.errors?.[0]?.code).toBe('missing_body')
      const text = await json(method, path, '{}', 'text/plain')
      const textEnvelope = expectRefusal(text, 415, 'UNSUPPORTED_MEDIA_TYPE', [null])
      expect(textEnvelope.errors?.[0]?.code).toBe('unsupported_media_type')
      expect(textEnvelope.message).toContain('text/plain')
      // Content with no Content-Type at all is no better.
      const untyped = await send(method, path, { body: '{}' })
      expectRefusal(untyped, 415, 'UNSUPPORTED_MEDIA_TYPE', [null])
    }
    expect(await snapshot()).toEqual(before)
  })

  it('leaves an optional body optional, but still refuses one that is not JSON', async () => {
    const operations = bodyOperations(false)
    expect(operations.map((operation) => operation.path)).toContain(
      '/v1/runs/0190a000-0000-7000-8000-000000000000/rerun',
    )
    for (const { method, path } of operations) {
      // No body reaches the handler, which answers for the run it cannot find.
      const none = await send(method, path)
      expect(none.status, none.text).toBe(404)
      expectRefusal(await json(method, path, '{}', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE', [
        null,
      ])
    }
  })

  it('does not empty a flow when its graph is sent as text/plain', async () => {
    const before = await flowState(flow.id)
    await refusedWithoutChange(
      () => json('PUT', `/v1/flows/${flow.id}/graph`, '{}', 'text/plain'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      [null],
    )
    expect(await flowState(flow.id)).toEqual(before)
    expect((before[1] as { items: unknown[] }).items).toHaveLength(1)
  })

  it('does not store text/plain as a flow patch', async () => {
    const before = await flowState(flow.id)
    await refusedWithoutChange(
      () => json('PATCH', `/v1/flows/${flow.id}`, '{}', 'text/plain'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      [null],
    )
    await refusedWithoutChange(
      () => json('PATCH', `/v1/flows/${flow.id}`, '{"name":"Renamed"}', 'text/plain'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      [null],
    )
    expect(await flowState(flow.id)).toEqual(before)
  })

  it('answers invalid JSON with 400 and says what to send', async () => {
    const envelope = await refusedWithoutChange(
      () => json('PATCH', `/v1/flows/${flow.id}`, '{"name":'),
      400,
      'BAD_REQUEST',
      [null],
    )
    expect(envelope.errors?.[0]?.code).toBe('invalid_json')
    expect(envelope.message).toMatch(/not valid JSON.*Content-Type: application\/json/)
  })

  it('reads application/json with a charset', async () => {
    const answer = await json(
      'PATCH',
      `/v1/flows/${flow.id}`,
      '{"description":"naïve café"}',
      'application/json; charset=utf-8',
    )
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toMatchObject({ description: 'naïve café' })
    const restore = await json(
      'PATCH',
      `/v1/flows/${flow.id}`,
      `{"description":${JSON.stringify(flow.description)}}`,
    )
    expect(restore.status, restore.text).toBe(200)
  })

  it('refuses a body sent to an operation that takes none, before it acts', async () => {
    const deleted = await json('DELETE', `/v1/flows/${flow.id}`, '{}')
    const envelope = expectRefusal(deleted, 400, 'BAD_REQUEST', [null])
    expect(envelope.errors?.[0]?.code).toBe('unexpected_body')
    expect(envelope.message).toContain('DELETE /v1/flows/{flow_id} takes no body')
    await read(`/v1/flows/${flow.id}`)
    const cancel = await json('POST', '/v1/runs/0190a000-0000-7000-8000-000000000000/cancel', '{}')
    expectRefusal(cancel, 400, 'BAD_REQUEST', [null])
  })

  it('keeps the sandbox-only admin routes on JSON', async () => {
    expectRefusal(
      await json('PUT', '/_sandbox/faults', '{"rules":[]}', 'text/plain'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      [null],
    )
    const set = await json('PUT', '/_sandbox/faults', '{"rules":[]}')
    expect(set.status, set.text).toBe(200)
    expect(set.body).toEqual({ rules: [] })
  })

  it('still answers 404 for a path that does not exist, whatever the body', async () => {
    const answer = await json('POST', '/v1/no-such-thing', 'hello', 'text/plain')
    expect(answer.status).toBe(404)
    expect(envelopeOf(answer).code).toBe('NOT_FOUND')
  })
})

describe('strict JSON bodies', () => {
  let evaluation: Evaluation

  beforeAll(async () => {
    const png = await sharp({
      create: { width: 64, height: 48, channels: 3, background: '#3a6ea5' },
    })
      .png()
      .toBuffer()
    const submitted = await sandbox.call('POST', '/v1/evaluations', {
      body: { generated_image_url: `data:image/png;base64,${png.toString('base64')}` },
    })
    expect(submitted.status, submitted.text).toBe(201)
    const id = (submitted.body as Evaluation).id ?? ''
    // Rated only once it is completed; until then its status moves on its own.
    for (let attempt = 0; ; attempt++) {
      const current = (await read(`/v1/evaluations/${id}`)) as Evaluation
      if (current.status_code === 'completed') break
      expect(current.status_code).not.toBe('failed')
      if (attempt > 400) throw new Error('the evaluation did not complete')
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const rated = await sandbox.call('PATCH', `/v1/evaluations/${id}/feedback`, {
      body: { is_positive: true, reason: 'Clear sky.' },
    })
    expect(rated.status, rated.text).toBe(200)
    evaluation = rated.body as Evaluation
  })

  it.each([
    ['""', 'string'],
    ['"true"', 'string'],
    ['1', 'number'],
    ['0', 'number'],
    ['"bogus"', 'string'],
  ])('refuses feedback is_positive %s instead of reading it as a boolean', async (value, kind) => {
    const path = `/v1/evaluations/${evaluation.id ?? ''}/feedback`
    const envelope = await refusedWithoutChange(
      () => json('PATCH', path, `{"is_positive":${value}}`),
      422,
      'VALIDATION_FAILED',
      ['is_positive'],
    )
    expect(envelope.errors?.[0]).toMatchObject({
      code: 'type',
      message: `is_positive must be a boolean or null (got ${kind}).`,
    })
    expect(await read(`/v1/evaluations/${evaluation.id ?? ''}`)).toMatchObject({
      feedback_is_positive: true,
      feedback_reason: 'Clear sky.',
      updated_at: evaluation.updated_at,
    })
  })

  it('refuses feedback sent as text/plain', async () => {
    await refusedWithoutChange(
      () =>
        json(
          'PATCH',
          `/v1/evaluations/${evaluation.id ?? ''}/feedback`,
          '{"is_positive":"bogus"}',
          'text/plain',
        ),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      [null],
    )
  })

  it('keeps a smaller maxLength of the contract: a 2,001-character reason is refused', async () => {
    await refusedWithoutChange(
      () =>
        json(
          'PATCH',
          `/v1/evaluations/${evaluation.id ?? ''}/feedback`,
          JSON.stringify({ is_positive: false, reason: 'x'.repeat(2001) }),
        ),
      422,
      'VALIDATION_FAILED',
      ['reason'],
    )
  })

  it.each([
    ['123', 'number'],
    ['["a"]', 'array'],
    ['true', 'boolean'],
  ])('refuses the name %s instead of storing it as text', async (value, kind) => {
    const envelope = await refusedWithoutChange(
      () => json('POST', '/v1/flows', `{"name":${value}}`),
      422,
      'VALIDATION_FAILED',
      ['name'],
    )
    expect(envelope.errors?.[0]?.message).toBe(`name must be a string (got ${kind}).`)
    await refusedWithoutChange(
      () => json('POST', '/v1/asset-folders', `{"name":${value}}`),
      422,
      'VALIDATION_FAILED',
      ['name'],
    )
    await refusedWithoutChange(
      () => json('PATCH', `/v1/flows/${flow.id}`, `{"name":${value}}`),
      422,
      'VALIDATION_FAILED',
      ['name'],
    )
  })

  it('refuses nodes "abc" instead of wrapping it into an array', async () => {
    const before = await flowState(flow.id)
    const envelope = await refusedWithoutChange(
      () => json('PUT', `/v1/flows/${flow.id}/graph`, '{"nodes":"abc","inputs":[],"outputs":[]}'),
      422,
      'VALIDATION_FAILED',
      ['nodes'],
    )
    expect(envelope.errors?.[0]?.message).toBe('nodes must be an array (got string).')
    await refusedWithoutChange(
      () => json('POST', '/v1/flows', '{"name":"Wrapped","nodes":"abc"}'),
      422,
      'VALIDATION_FAILED',
      ['nodes'],
    )
    expect(await flowState(flow.id)).toEqual(before)
  })

  it('names the body itself (field null) when it is not an object', async () => {
    const envelope = await refusedWithoutChange(
      () => json('POST', '/v1/flows', '["name"]'),
      422,
      'VALIDATION_FAILED',
      [null],
    )
    expect(envelope.errors?.[0]?.message).toBe('The body must be an object (got array).')
  })

  it('still turns query strings into numbers: limit=5', async () => {
    for (let index = 0; index < 5; index++) await createFlow(`Listed ${String(index)}`)
    const page = (await read('/v1/flows?limit=5')) as { items: unknown[] }
    expect(page.items).toHaveLength(5)
    expectRefusal(await send('GET', '/v1/flows?limit=five'), 422, 'VALIDATION_FAILED', [
      'query.limit',
    ])
  })

  it('checks headers against the contract too, whatever their case', async () => {
    for (const key of ['', 'k'.repeat(256)]) {
      await refusedWithoutChange(
        () =>
          sandbox.call('POST', '/v1/models/atelier/caption/runs', {
            headers: { 'iDEMPOTENCY-kEY': key },
            body: { input: {} },
          }),
        422,
        'VALIDATION_FAILED',
        ['header.idempotency-key'],
      )
    }
  })
})

describe('limits', () => {
  it('takes nesting 64 deep and refuses 65, naming where it went over', async () => {
    // The body is level 1 and context_variables level 2: 63 more objects make 64.
    const fits = await json('PATCH', `/v1/flows/${flow.id}`, `{"context_variables":${nested(63)}}`)
    expect(fits.status, fits.text.slice(0, 300)).toBe(200)
    const stored = (await read(`/v1/flows/${flow.id}`)) as Flow
    expect(stored.context_variables).toEqual(JSON.parse(nested(63)))

    const before = await flowState(flow.id)
    const envelope = await refusedWithoutChange(
      () => json('PATCH', `/v1/flows/${flow.id}`, `{"context_variables":${nested(64)}}`),
      422,
      'VALIDATION_FAILED',
      [pathAtDepth(65)],
    )
    expect(envelope.errors?.[0]?.code).toBe('too_deep')
    expect(envelope.message).toContain('64')
    expect(await flowState(flow.id)).toEqual(before)

    // Arrays count as objects do.
    const arrays = `{"name":"Deep","context_variables":{"list":${'['.repeat(63)}${']'.repeat(63)}}}`
    const deepArrays = await refusedWithoutChange(
      () => json('POST', '/v1/flows', arrays),
      422,
      'VALIDATION_FAILED',
      [['context_variables', 'list', ...Array<string>(62).fill('0')].join('.')],
    )
    expect(deepArrays.errors?.[0]?.code).toBe('too_deep')
  })

  it.each([
    [
      'a flow',
      'POST',
      '/v1/flows',
      (deep: string) => `{"name":"Deep","context_variables":${deep}}`,
    ],
    [
      'a run',
      'POST',
      '/v1/models/atelier/caption/runs',
      (deep: string) => `{"input":{},"metadata":${deep}}`,
    ],
    [
      'a workflow',
      'POST',
      '/v1/comfyui-workflows',
      (deep: string) => `{"name":"Deep","workflow_json":${deep}}`,
    ],
  ])(
    'refuses %s nested 5,000 deep with 422, and stays healthy',
    async (_what, method, path, make) => {
      // The free-form object is level 2; the object at level 65 is 63 keys below it.
      const field = (root: string) => [root, ...Array<string>(63).fill('a')].join('.')
      const root = path.endsWith('/runs')
        ? 'metadata'
        : path.includes('workflows')
          ? 'workflow_json'
          : 'context_variables'
      const envelope = await refusedWithoutChange(
        () => json(method, path, make(nested(5000))),
        422,
        'VALIDATION_FAILED',
        [field(root)],
      )
      expect(envelope.errors?.[0]?.code).toBe('too_deep')
      const health = await sandbox.call('GET', '/v1/health')
      expect(health.status).toBe(200)
    },
  )

  it('takes a string of 1,048,576 characters and refuses one of 1,048,577', async () => {
    // In a free-form object, where no schema gives a maxLength of its own.
    const longest = 'x'.repeat(1_048_576)
    const fits = await json(
      'PATCH',
      `/v1/flows/${flow.id}`,
      JSON.stringify({ context_variables: { notes: [longest] } }),
    )
    expect(fits.status, fits.text.slice(0, 300)).toBe(200)
    const stored = (await read(`/v1/flows/${flow.id}`)) as Flow
    expect(stored.context_variables).toEqual({ notes: [longest] })

    const before = await flowState(flow.id)
    const envelope = await refusedWithoutChange(
      () =>
        json(
          'PATCH',
          `/v1/flows/${flow.id}`,
          JSON.stringify({ context_variables: { notes: [`${longest}y`] } }),
        ),
      422,
      'VALIDATION_FAILED',
      ['context_variables.notes.0'],
    )
    expect(envelope.errors?.[0]).toMatchObject({ code: 'too_long' })
    expect(envelope.errors?.[0]?.message).toContain('1048577')
    // Keys are strings too.
    await refusedWithoutChange(
      () =>
        json(
          'PATCH',
          `/v1/flows/${flow.id}`,
          JSON.stringify({ context_variables: { [`${longest}y`]: 1 } }),
        ),
      422,
      'VALIDATION_FAILED',
      ['context_variables'],
    )
    expect(await flowState(flow.id)).toEqual(before)
  })

  it('refuses a 17 MiB body with 413 before reading it', async () => {
    const huge = JSON.stringify({ name: 'Huge', description: 'x'.repeat(17 * 1024 * 1024) })
    const envelope = await refusedWithoutChange(
      () => json('POST', '/v1/flows', huge),
      413,
      'PAYLOAD_TOO_LARGE',
      [null],
    )
    expect(envelope.errors?.[0]?.code).toBe('too_large')
    expect(envelope.message).toContain('16 MiB')
  })

  it('refuses a body past 16 MiB sent without a length, once the 16 MiB are read', async () => {
    const past = Buffer.alloc(16 * 1024 * 1024 + 1, 0x20)
    const envelope = await refusedWithoutChange(
      () => send('POST', '/v1/flows', { body: past, type: 'application/json', unfinished: true }),
      413,
      'PAYLOAD_TOO_LARGE',
      [null],
    )
    expect(envelope.errors?.[0]?.code).toBe('too_large')
    expect(envelope.message).toContain('16 MiB')
  })
})

describe('forbidden keys', () => {
  it.each([
    ['{"__proto__":{"name":"Polluted"}}', '__proto__'],
    ['{"context_variables":{"a":{"__proto__":{"x":1}}}}', 'context_variables.a.__proto__'],
    ['{"context_variables":{"list":[{"__proto__":null}]}}', 'context_variables.list.0.__proto__'],
    [
      '{"context_variables":{"constructor":{"prototype":{"x":1}}}}',
      'context_variables.constructor.prototype',
    ],
  ])('refuses %s by naming the key', async (body, field) => {
    const before = await flowState(flow.id)
    const envelope = await refusedWithoutChange(
      () => json('PATCH', `/v1/flows/${flow.id}`, body),
      422,
      'VALIDATION_FAILED',
      [field],
    )
    expect(envelope.errors?.[0]?.code).toBe('forbidden_key')
    expect(envelope.message).not.toContain('not valid JSON')
    expect(await flowState(flow.id)).toEqual(before)
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })

  it('takes a plain constructor key in free-form data', async () => {
    const answer = await json(
      'PATCH',
      `/v1/flows/${flow.id}`,
      '{"context_variables":{"constructor":"Ford","prototype":"T"}}',
    )
    expect(answer.status, answer.text).toBe(200)
    expect(((await read(`/v1/flows/${flow.id}`)) as Flow).context_variables).toEqual({
      constructor: 'Ford',
      prototype: 'T',
    })
  })
})

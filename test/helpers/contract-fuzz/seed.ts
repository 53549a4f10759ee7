import { createHash } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import sharp from 'sharp'
import type { TestSandbox } from '../sandbox'

/** What the seed made that no list of the contract gives back. */
export interface SeededOrganization {
  /**
   * Path values the fuzzer cannot find through a list: an upload (there is no list of uploads)
   * and the provider and model of a slug (the dispatch path splits it in two).
   */
  knownValues: Record<string, string>
  /**
   * Every body the seed sent that the sandbox accepted, with its method and path: realistic
   * bodies (existing references, a real model's inputs) to build cases on.
   */
  acceptedBodies: { method: string; path: string; body: unknown }[]
  /** Stops the receiver of callbacks and webhook deliveries. */
  close: () => Promise<void>
}

type Body = Record<string, unknown>

const MODEL = 'atelier/text-to-image'
const TERMINAL_RUN = ['succeeded', 'failed', 'canceled']
const FINAL_DELIVERY = ['succeeded', 'failed', 'failed_non_retryable']

/** A receiver that acknowledges every delivery at once, so none is retried later. */
async function startReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(204).end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

/**
 * Waits for a state of the sandbox (a run finished, a delivery acknowledged), asking again
 * every few milliseconds: the seed's background work must be over before the fuzzer compares
 * snapshots, and this waits for that state itself rather than for a guessed time.
 */
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`The seed gave up waiting for ${what}.`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/**
 * Fills the sandbox's main organization through the API, as a user would: a callback secret, a
 * webhook, a folder with an uploaded image, a second upload left open, a flow with a graph, a
 * model run with a callback, a flow run, a batch, an evaluation with feedback and a workflow.
 * Every path id the fuzzer uses then points at a real record, and "the data did not change"
 * covers all of them. Returns once every run, delivery and evaluation has settled.
 */
export async function seedOrganization(sandbox: TestSandbox): Promise<SeededOrganization> {
  const receiver = await startReceiver()
  const acceptedBodies: SeededOrganization['acceptedBodies'] = []
  const send = async (method: string, path: string, body?: Body): Promise<Body> => {
    const answer = await sandbox.call(method, path, body === undefined ? {} : { body })
    if (answer.status >= 300) {
      throw new Error(`The seed's ${method} ${path} answered ${answer.status}: ${answer.text}`)
    }
    if (body !== undefined) acceptedBodies.push({ method, path, body: structuredClone(body) })
    return answer.body as Body
  }
  const id = (record: Body) => String(record.id)

  const secret = await send('POST', '/v1/callback-secrets', { label: 'Fuzz secret' })
  const webhook = await send('POST', '/v1/webhooks', {
    url: receiver.url,
    secret_ciphertext: 'fuzz-ciphertext',
    secret_fingerprint: 'fz01',
    event_subscriptions: [{ event_type_code: 'run.completed' }],
  })
  const folder = await send('POST', '/v1/asset-folders', { name: 'Fuzz folder' })

  const image = await sharp({
    create: { width: 64, height: 48, channels: 3, background: '#c84030' },
  })
    .png()
    .toBuffer()
  const sha256 = createHash('sha256').update(image).digest('hex')
  const upload = await send('POST', '/v1/asset-uploads', {
    filename: 'fuzz.png',
    content_type: 'image/png',
    size_bytes: image.length,
    sha256,
    folder_id: id(folder),
  })
  const parts: Body[] = []
  for (const part of upload.parts as { part_number: number; url: string }[]) {
    const put = await fetch(part.url, { method: 'PUT', body: image })
    if (put.status !== 200) throw new Error(`The seed's part upload answered ${put.status}.`)
    parts.push({ part_number: part.part_number, etag: put.headers.get('etag') ?? '' })
  }
  const asset = await send('POST', `/v1/asset-uploads/${id(upload)}/confirmations`, { parts })
  // An upload left open: its parts and confirmation are what a wrongly accepted request would change.
  const open = await send('POST', '/v1/asset-uploads', {
    filename: 'open.png',
    content_type: 'image/png',
    size_bytes: image.length + 1,
    sha256: createHash('sha256').update('open').digest('hex'),
  })

  const models = await send('GET', `/v1/models?q=${encodeURIComponent(`slug=${MODEL}`)}`)
  const model = (models.items as Body[])[0]
  if (!model) throw new Error(`The sandbox has no model ${MODEL}.`)
  const flow = await send('POST', '/v1/flows', {
    name: 'Fuzz flow',
    description: 'A prompt turned into an image.',
    context_variables: { tone: 'warm' },
    inputs: [{ name: 'prompt', variable_type_code: 'text', is_required: true }],
    outputs: [{ name: 'image', variable_type_code: 'image' }],
    nodes: [
      {
        label: 'Generate',
        type_code: 'model',
        model_id: id(model),
        config: { flow_inputs: { prompt: 'prompt' }, flow_outputs: { image: 'image' } },
        inputs: [{ name: 'prompt', variable_type_code: 'text' }],
        outputs: [{ name: 'image', variable_type_code: 'image' }],
      },
    ],
  })
  const workflow = await send('POST', '/v1/comfyui-workflows', {
    name: 'Fuzz workflow',
    workflow_json: { '1': { class_type: 'SaveImage', inputs: {} } },
  })
  // Changes that leave each record as it was: accepted bodies of the update operations.
  await send('PATCH', `/v1/flows/${id(flow)}`, { description: 'A prompt turned into an image.' })
  await send('PATCH', `/v1/comfyui-workflows/${id(workflow)}`, { name: 'Fuzz workflow' })
  await send('PATCH', `/v1/asset-folders/${id(folder)}`, { name: 'Fuzz folder' })
  await send('PATCH', `/v1/assets/${id(asset)}`, { name: 'fuzz.png', folder_id: id(folder) })
  await send('PATCH', `/v1/webhooks/${id(webhook)}`, { is_active: true })
  await send('POST', `/v1/asset-uploads/${id(open)}/parts`, { part_numbers: [1] })

  const small = { prompt: 'a red fox in the snow', width: 64, height: 64 }
  const modelRun = await send('POST', `/v1/models/${MODEL}/runs`, {
    input: small,
    callback_url: receiver.url,
    callback_secret_id: id(secret),
    metadata: { fuzz: 'seed' },
  })
  const flowRun = await send('POST', `/v1/flows/${id(flow)}/runs`, {
    input: { prompt: 'a blue boat' },
  })
  const batch = await send('POST', '/v1/batches', { model: MODEL, items: [{ input: small }] })
  const evaluation = await send('POST', '/v1/evaluations', {
    asset_id: id(asset),
    generation_prompt: 'a red square',
  })

  for (const run of [modelRun, flowRun]) {
    await until(`run ${id(run)}`, async () => {
      const now = await send('GET', `/v1/runs/${id(run)}`)
      return TERMINAL_RUN.includes(String(now.status_code)) ? now : undefined
    })
  }
  await until(`batch ${id(batch)}`, async () => {
    const now = await send('GET', `/v1/batches/${id(batch)}`)
    return ['queued', 'running'].includes(String(now.status_code)) ? undefined : now
  })
  await until(`evaluation ${id(evaluation)}`, async () => {
    const now = await send('GET', `/v1/evaluations/${id(evaluation)}`)
    return ['completed', 'failed'].includes(String(now.status_code)) ? now : undefined
  })
  await send('PATCH', `/v1/evaluations/${id(evaluation)}/feedback`, {
    is_positive: true,
    reason: 'Sharp enough.',
  })
  await send('PATCH', `/v1/runs/${id(modelRun)}`, { metadata: { fuzz: 'seed' } })
  await until('the run callback', async () => {
    const deliveries = (await sandbox.call('GET', `/v1/runs/${id(modelRun)}/callback`))
      .body as Body[]
    const settled = deliveries.length > 0 && deliveries.every(isFinal)
    return settled ? deliveries : undefined
  })
  await until('the webhook deliveries', async () => {
    const page = await send('GET', '/v1/webhooks/any/deliveries?limit=500')
    const items = page.items as Body[]
    // Both runs completed, each makes one delivery of run.completed.
    return items.length >= 2 && items.every(isFinal) ? items : undefined
  })

  const [provider = '', name = ''] = MODEL.split('/')
  return {
    knownValues: { upload_id: id(open), provider, model: name },
    acceptedBodies,
    close: receiver.close,
  }
}

function isFinal(delivery: Body): boolean {
  return FINAL_DELIVERY.includes(String(delivery.status_code))
}

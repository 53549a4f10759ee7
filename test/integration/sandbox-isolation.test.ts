import { createHash } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestSandbox, type SandboxCall, type TestSandbox } from '../helpers/sandbox'

/**
 * Two organizations must never see each other's data: this fills the main organization through
 * the API in every area, then walks EVERY list and get operation of the contract as the other
 * organization, with `any` wherever a parent allows it, looking for any of those records.
 */

let sandbox: TestSandbox
/** Ids of the main organization's records, by the path parameter that would name them. */
const owned: Record<string, string> = {}
const ownedIds = new Set<string>()

const ANY_PARENTS = new Set([
  'model_id',
  'flow_id',
  'solution_id',
  'comfyui_workflow_id',
  'webhook_id',
])

function expectOk(response: SandboxCall, what: string): Record<string, unknown> {
  if (response.status >= 300) throw new Error(`${what}: ${response.status} ${response.text}`)
  return response.body as Record<string, unknown>
}

function remember(param: string, id: unknown): string {
  if (typeof id !== 'string') throw new Error(`no id for ${param}`)
  owned[param] = id
  ownedIds.add(id)
  return id
}

async function waitFor(path: string, done: (body: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 200; i++) {
    const body = expectOk(await sandbox.call('GET', path), path)
    if (done(body)) return body
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`${path} did not settle`)
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 5 })
  const admin = (method: string, path: string, body?: unknown) =>
    sandbox.call(method, path, body === undefined ? {} : { body })

  const run = expectOk(
    await admin('POST', '/v1/models/atelier/text-to-image/runs', {
      input: { prompt: 'a private red fox', width: 64, height: 64 },
      metadata: { secret: 'main org only' },
    }),
    'dispatch',
  )
  remember('run_id', run.id)
  await waitFor(`/v1/runs/${String(run.id)}`, (r) =>
    ['succeeded', 'failed', 'canceled'].includes(String(r.status_code)),
  )

  const folder = expectOk(await admin('POST', '/v1/asset-folders', { name: 'Private' }), 'folder')
  remember('id', folder.id)

  const png = await sharp({
    create: { width: 32, height: 32, channels: 3, background: '#c0392b' },
  })
    .png()
    .toBuffer()
  const upload = expectOk(
    await admin('POST', '/v1/asset-uploads', {
      filename: 'fox.png',
      content_type: 'image/png',
      size_bytes: png.length,
      sha256: createHash('sha256').update(png).digest('hex'),
      folder_id: folder.id,
    }),
    'upload',
  )
  remember('upload_id', upload.id)
  const parts = upload.parts as { part_number: number; url: string }[]
  const etags = []
  for (const part of parts) {
    const put = await fetch(part.url, { method: 'PUT', body: png })
    etags.push({ part_number: part.part_number, etag: put.headers.get('etag') ?? '' })
  }
  const asset = expectOk(
    await admin('POST', `/v1/asset-uploads/${String(upload.id)}/confirmations`, { parts: etags }),
    'confirm',
  )
  remember('asset_id', asset.id)

  const evaluation = expectOk(
    await admin('POST', '/v1/evaluations', {
      asset_id: asset.id,
      generation_prompt: 'a red square',
      task_description: 'private evaluation',
    }),
    'evaluation',
  )
  remember('evaluation_id', evaluation.id)

  const flow = expectOk(
    await admin('POST', '/v1/flows', {
      name: 'Private flow',
      nodes: [{ label: 'Prompt', type_code: 'builtin', builtin_node_code: 'text' }],
    }),
    'flow',
  )
  remember('flow_id', flow.id)
  const nodes = expectOk(await admin('GET', `/v1/flows/${String(flow.id)}/nodes`), 'nodes')
  remember('node_id', (nodes.items as { id: string }[])[0]?.id)

  const workflow = expectOk(
    await admin('POST', '/v1/comfyui-workflows', {
      name: 'Private workflow',
      workflow_json: { nodes: [] },
    }),
    'workflow',
  )
  remember('comfyui_workflow_id', workflow.id)

  const webhook = expectOk(
    await admin('POST', '/v1/webhooks', {
      url: 'http://127.0.0.1:9/never',
      secret_ciphertext: 'private secret',
      secret_fingerprint: 'abcd',
      event_subscriptions: [{ event_type_code: 'run.completed' }],
    }),
    'webhook',
  )
  remember('webhook_id', webhook.id)

  const batch = expectOk(
    await admin('POST', '/v1/batches', {
      model: 'atelier/caption',
      items: [{ input: { image: `data:image/png;base64,${png.toString('base64')}` } }],
    }),
    'batch',
  )
  remember('batch_id', batch.id)
}, 60_000)

afterAll(async () => {
  await sandbox.close()
})

function leaks(body: unknown): string[] {
  const found: string[] = []
  const visit = (value: unknown) => {
    if (typeof value === 'string') {
      if (ownedIds.has(value) || value === sandbox.orgId) found.push(value)
    } else if (Array.isArray(value)) value.forEach(visit)
    else if (value && typeof value === 'object') Object.values(value).forEach(visit)
  }
  visit(body)
  return found
}

describe('organization isolation', () => {
  it('filled the main organization in every area', () => {
    expect(Object.keys(owned).sort()).toEqual(
      [
        'asset_id',
        'batch_id',
        'comfyui_workflow_id',
        'evaluation_id',
        'flow_id',
        'id',
        'node_id',
        'run_id',
        'upload_id',
        'webhook_id',
      ].sort(),
    )
  })

  it('shows the other organization none of it, through any list or get of the contract', async () => {
    const checked: string[] = []
    const problems: string[] = []
    for (const operation of sandbox.services.contract.operations) {
      if (operation.method !== 'GET') continue
      const params = [...operation.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1] ?? '')
      const variants: string[] = []
      const anyPath = operation.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) =>
        ANY_PARENTS.has(name) && name !== params.at(-1) ? 'any' : (owned[name] ?? 'any'),
      )
      variants.push(anyPath)
      const ownedPath = operation.path.replace(
        /\{([a-z_]+)\}/g,
        (_m, name: string) => owned[name] ?? 'any',
      )
      if (ownedPath !== anyPath) variants.push(ownedPath)
      for (const path of variants) {
        const response = await sandbox.call('GET', path, { key: sandbox.keys.otherOrg })
        checked.push(`${operation.operationId} ${path} → ${response.status}`)
        if (response.status >= 500) problems.push(`${path} answered ${response.status}`)
        const found = leaks(response.body)
        if (response.status === 200 && found.length > 0) {
          problems.push(`${operation.operationId} ${path} leaked ${found.join(', ')}`)
        }
      }
    }
    expect(problems).toEqual([])
    expect(checked.length).toBeGreaterThan(60)
  })

  it('answers 404, never the record, for the main organization’s ids', async () => {
    const gets = [
      `/v1/runs/${owned.run_id ?? ''}`,
      `/v1/assets/${owned.asset_id ?? ''}`,
      `/v1/asset-folders/${owned.id ?? ''}`,
      `/v1/asset-uploads/${owned.upload_id ?? ''}`,
      `/v1/evaluations/${owned.evaluation_id ?? ''}`,
      `/v1/flows/${owned.flow_id ?? ''}`,
      `/v1/comfyui-workflows/${owned.comfyui_workflow_id ?? ''}`,
      `/v1/webhooks/${owned.webhook_id ?? ''}`,
      `/v1/batches/${owned.batch_id ?? ''}`,
    ]
    for (const path of gets) {
      const response = await sandbox.call('GET', path, { key: sandbox.keys.otherOrg })
      expect({ path, status: response.status }).toEqual({ path, status: 404 })
    }
  })
})

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, it, expect } from 'vitest'
import { parse } from 'yaml'
import { validate, compileErrors } from '@readme/openapi-parser'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'
import * as prettier from 'prettier'

const root = new URL('../../', import.meta.url)
const yamlUrl = new URL('resources/openapi.yaml', root)
const yamlPath = fileURLToPath(yamlUrl)
const generatedPath = fileURLToPath(new URL('src-shared/api/schema.gen.ts', root))

interface Ref {
  $ref: string
}
interface Parameter {
  name: string
  in: string
}
interface Response {
  content?: Record<string, { schema?: unknown }>
}
interface Operation {
  operationId?: string
  tags?: string[]
  parameters?: (Parameter | Ref)[]
  responses: Record<string, Response | Ref>
}
type PathItem = Partial<Record<(typeof METHODS)[number], Operation>>
interface Document {
  openapi: string
  info: { version: string; description?: string }
  paths: Record<string, PathItem>
  [key: string]: unknown
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const
const TAGS = [
  'Models',
  'Runs',
  'Media',
  'Batches',
  'Evaluations',
  'Webhooks',
  'Flows',
  'Workflows',
  'Solutions',
  'Catalogs',
  'Account',
  'Status',
]
const LIST_PARAMS = ['q', 'limit', 'sort_by', 'fields', 'pq', 'from_prev']

const doc = parse(readFileSync(yamlPath, 'utf8')) as Document

const isRef = (x: unknown): x is Ref =>
  typeof x === 'object' && x !== null && typeof (x as Partial<Ref>).$ref === 'string'

/** Follows local `#/...` references until a non-reference node is reached. */
function deref<T>(node: T | Ref): T {
  let current: unknown = node
  for (let hops = 0; isRef(current); hops++) {
    if (hops > 20) throw new Error('reference loop')
    let target: unknown = doc
    for (const part of current.$ref.replace(/^#\//, '').split('/')) {
      target = (target as Record<string, unknown>)[part]
    }
    if (target === undefined) throw new Error(`dangling reference ${current.$ref}`)
    current = target
  }
  return current as T
}

function operations(): { key: string; op: Operation }[] {
  const out: { key: string; op: Operation }[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (op) out.push({ key: `${method.toUpperCase()} ${path}`, op })
    }
  }
  return out
}

/** True when the operation's 200 answer is the paginated envelope. */
function returnsPage(op: Operation): boolean {
  const ok = op.responses['200']
  if (!ok) return false
  const schema = deref(deref<Response>(ok).content?.['application/json']?.schema)
  if (typeof schema !== 'object' || schema === null) return false
  const props = (schema as { properties?: Record<string, unknown> }).properties ?? {}
  return ['items', 'first', 'next', 'previous'].every((k) => k in props)
}

// The checklist of the service spec (and of the decisions that fill its gaps): every operation
// Atelier relies on, as `METHOD path`.
const EXPECTED = [
  // Account and status
  'GET /v1/billing/balance',
  'GET /v1/account',
  'GET /v1/tombstones',
  'GET /v1/health',
  'GET /v1/readiness',
  // Models
  'GET /v1/models',
  'GET /v1/models/{model_id}',
  'GET /v1/models/{model_id}/inputs',
  'GET /v1/models/{model_id}/outputs',
  'GET /v1/models/{model_id}/examples',
  'GET /v1/models/{model_id}/pricing',
  'GET /v1/models/{model_id}/faq',
  'GET /v1/models/{model_id}/related-links',
  'GET /v1/models/{model_id}/stats',
  'GET /v1/model-creators',
  'GET /v1/model-creators/{id}',
  'GET /v1/model-families',
  'GET /v1/model-families/{id}',
  // Runs
  'POST /v1/models/{provider}/{model}/runs',
  'GET /v1/runs',
  'GET /v1/runs/{run_id}',
  'PATCH /v1/runs/{run_id}',
  'GET /v1/runs/{run_id}/logs',
  'GET /v1/runs/{run_id}/node-runs',
  'POST /v1/runs/{run_id}/cancel',
  'POST /v1/runs/{run_id}/rerun',
  'GET /v1/runs/{run_id}/callback',
  'POST /v1/runs/{run_id}/callback-redeliveries',
  'GET /v1/runs/target-types',
  'GET /v1/runs/target-types/{code}',
  'GET /v1/runs/sources',
  'GET /v1/runs/sources/{code}',
  'GET /v1/runs/log-levels',
  'GET /v1/runs/log-levels/{code}',
  'GET /v1/runs/statuses',
  'GET /v1/runs/statuses/{code}',
  // Media
  'GET /v1/assets',
  'GET /v1/assets/{asset_id}',
  'PATCH /v1/assets/{asset_id}',
  'DELETE /v1/assets/{asset_id}',
  'GET /v1/asset-folders',
  'POST /v1/asset-folders',
  'GET /v1/asset-folders/{id}',
  'PATCH /v1/asset-folders/{id}',
  'DELETE /v1/asset-folders/{id}',
  'POST /v1/asset-uploads',
  'GET /v1/asset-uploads/{upload_id}',
  'POST /v1/asset-uploads/{upload_id}/parts',
  'POST /v1/asset-uploads/{upload_id}/confirmations',
  // Batches
  'POST /v1/batches',
  'GET /v1/batches',
  'GET /v1/batches/{batch_id}',
  'POST /v1/batches/{batch_id}/cancel',
  'GET /v1/batches/{batch_id}/callback',
  // Evaluations
  'POST /v1/evaluations',
  'GET /v1/evaluations',
  'GET /v1/evaluations/{evaluation_id}',
  'PATCH /v1/evaluations/{evaluation_id}/feedback',
  'GET /v1/evaluations/statuses',
  'GET /v1/evaluations/statuses/{code}',
  // Webhooks and callback secrets
  'GET /v1/webhooks',
  'POST /v1/webhooks',
  'GET /v1/webhooks/{id}',
  'PATCH /v1/webhooks/{id}',
  'DELETE /v1/webhooks/{id}',
  'GET /v1/webhooks/event-types',
  'GET /v1/webhooks/event-types/{code}',
  'GET /v1/webhooks/{webhook_id}/deliveries',
  'GET /v1/webhooks/{webhook_id}/deliveries/{id}',
  'GET /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/attempts',
  'GET /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/attempts/{id}',
  'POST /v1/callback-secrets',
  // Flows
  'GET /v1/flows',
  'POST /v1/flows',
  'GET /v1/flows/{flow_id}',
  'PATCH /v1/flows/{flow_id}',
  'DELETE /v1/flows/{flow_id}',
  'GET /v1/flows/lookup',
  'PUT /v1/flows/{flow_id}/graph',
  'GET /v1/flows/{flow_id}/inputs',
  'GET /v1/flows/{flow_id}/outputs',
  'GET /v1/flows/{flow_id}/nodes',
  'GET /v1/flows/{flow_id}/nodes/{node_id}/inputs',
  'GET /v1/flows/{flow_id}/nodes/{node_id}/outputs',
  'GET /v1/flows/summaries',
  'GET /v1/flows/{flow_id}/runs',
  'POST /v1/flows/{flow_id}/runs',
  'GET /v1/flow-templates',
  'GET /v1/flow-templates/{id}',
  // Workflow-engine workflows
  'GET /v1/comfyui-workflows',
  'POST /v1/comfyui-workflows',
  'GET /v1/comfyui-workflows/{comfyui_workflow_id}',
  'PATCH /v1/comfyui-workflows/{comfyui_workflow_id}',
  'DELETE /v1/comfyui-workflows/{comfyui_workflow_id}',
  'GET /v1/comfyui-workflows/lookup',
  'GET /v1/comfyui-workflows/{comfyui_workflow_id}/inputs',
  'GET /v1/comfyui-workflows/{comfyui_workflow_id}/outputs',
  'POST /v1/comfyui-workflows/{comfyui_workflow_id}/runs',
  'GET /v1/builtin-nodes',
  'GET /v1/builtin-nodes/{code}',
  // Solutions
  'GET /v1/solutions',
  'GET /v1/solutions/{id}',
  'GET /v1/solutions/sections',
  'GET /v1/solutions/{solution_id}/models',
  'GET /v1/solutions/{solution_id}/models/{id}',
  'GET /v1/solutions/{solution_id}/flows',
  'GET /v1/solutions/{solution_id}/workflows',
  // Catalogs
  ...[
    'pricing-dimensions',
    'model-types',
    'rule-effects',
    'units',
    'variable-behaviors',
    'variable-types',
    'validators',
  ].flatMap((name) => [`GET /v1/catalogs/${name}`, `GET /v1/catalogs/${name}/{code}`]),
]

const EXPECTED_WEBHOOKS = [
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.partial_succeeded',
  'batch.succeeded',
]

describe('resources/openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document, version 0.1.0', async () => {
    const result = await validate(yamlPath)
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true)
    expect(result.warnings).toEqual([])
    expect(doc.openapi.startsWith('3.1')).toBe(true)
    expect(doc.info.version).toBe('0.1.0')
  })

  it('covers every endpoint and path family the spec names', () => {
    const present = new Set(operations().map((o) => o.key))
    const missing = EXPECTED.filter((key) => !present.has(key))
    expect(missing).toEqual([])
    expect(new Set(EXPECTED).size).toBe(EXPECTED.length)
    const webhooks = doc.webhooks as Record<string, PathItem>
    expect(Object.keys(webhooks).sort()).toEqual([...EXPECTED_WEBHOOKS].sort())
  })

  it('gives every operation a unique operationId, a tag and X-Organization-Id', () => {
    const seen = new Map<string, string>()
    for (const { key, op } of operations()) {
      expect(op.operationId, key).toMatch(/^[a-z][A-Za-z0-9]*$/)
      const id = op.operationId ?? ''
      expect(seen.get(id), `${key} reuses operationId ${id}`).toBeUndefined()
      seen.set(id, key)
      expect(op.tags?.length, key).toBe(1)
      expect(TAGS, key).toContain(op.tags?.[0])
      const params = (op.parameters ?? []).map((p) => deref(p))
      expect(
        params.some((p) => p.in === 'header' && p.name === 'X-Organization-Id'),
        `${key} lacks X-Organization-Id`,
      ).toBe(true)
    }
  })

  it('gives every list operation the six standard list parameters', () => {
    const lists = operations().filter(({ op }) => returnsPage(op))
    expect(lists.length).toBeGreaterThan(50)
    for (const { key, op } of lists) {
      const query = (op.parameters ?? [])
        .map((p) => deref(p))
        .filter((p) => p.in === 'query')
        .map((p) => p.name)
      for (const name of LIST_PARAMS) expect(query, `${key} lacks ${name}`).toContain(name)
    }
  })

  it('keeps the operations other code already uses', () => {
    const byId = new Map(operations().map(({ key, op }) => [op.operationId, key]))
    expect(byId.get('getBalance')).toBe('GET /v1/billing/balance')
    expect(byId.get('listRuns')).toBe('GET /v1/runs')
    expect(byId.get('dispatchModelRun')).toBe('POST /v1/models/{provider}/{model}/runs')
    const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas
    for (const name of ['Error', 'Run', 'Balance']) expect(schemas).toHaveProperty(name)
  })

  it('describes every x-atelier-assumed choice', () => {
    const undescribed: string[] = []
    let markers = 0
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        node.forEach((child, i) => {
          walk(child, `${where}/${String(i)}`)
        })
        return
      }
      if (typeof node !== 'object' || node === null) return
      const record = node as Record<string, unknown>
      if ('x-atelier-assumed' in record) {
        markers++
        const description = record.description
        if (
          record['x-atelier-assumed'] !== true ||
          typeof description !== 'string' ||
          description.trim() === '' ||
          description.includes('\n')
        ) {
          undescribed.push(where)
        }
      }
      for (const [key, child] of Object.entries(record)) walk(child, `${where}/${key}`)
    }
    walk(doc, '#')
    expect(undescribed).toEqual([])
    expect(markers).toBeGreaterThan(0)
  })

  it('matches the generated src-shared/api/schema.gen.ts (run `npm run gen:api` if not)', async () => {
    // The same steps as `npm run gen:api`: the openapi-typescript CLI with default options
    // (COMMENT_HEADER + astToString), then prettier with the repo's configuration.
    const ast = await openapiTS(yamlUrl, { silent: true })
    const raw = `${COMMENT_HEADER}${astToString(ast)}`
    const config = await prettier.resolveConfig(generatedPath, { editorconfig: true })
    const expected = await prettier.format(raw, { ...config, filepath: generatedPath })
    const onDisk = readFileSync(generatedPath, 'utf8')
    expect(
      onDisk === expected,
      'src-shared/api/schema.gen.ts is stale: run `npm run gen:api` and commit the result',
    ).toBe(true)
  })
})

import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceClient, ServiceError, type ServiceClient } from '../../src-main/service'
import { findModel } from '../../src-main/sandbox/models'
import type {
  Flow,
  FlowCreate,
  FlowNode,
  FlowSummary,
  ModelSolutionLink,
  Solution,
  SolutionFlowLink,
  SolutionWorkflowLink,
  Workflow,
} from '../../src-shared/api'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

let sandbox: TestSandbox
let client: ServiceClient

interface Page<T> {
  items: T[]
  next: string | null
}

const TEXT_TO_IMAGE = findModel('atelier/text-to-image')?.id ?? ''
const UPSCALE = findModel('atelier/upscale')?.id ?? ''

beforeAll(async () => {
  sandbox = await startTestSandbox()
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
})

afterAll(async () => {
  await sandbox.close()
})

async function get<T>(path: string, key?: string): Promise<T> {
  const response = await sandbox.call('GET', path, key === undefined ? {} : { key })
  expect(response.status, response.text).toBe(200)
  return response.body as T
}

/** Ids chosen by the client, fresh for each flow so that flows never share one. */
function graphIds() {
  return {
    prompt: randomUUID(),
    image: randomUUID(),
    generate: randomUUID(),
    generatePrompt: randomUUID(),
    generateImage: randomUUID(),
    upscale: randomUUID(),
    upscaleImage: randomUUID(),
    upscaleScale: randomUUID(),
    upscaleOut: randomUUID(),
  }
}

/** Prompt → text-to-image → upscale → image, with the edge between the two models. */
function twoStepFlow(name: string, ids = graphIds()): FlowCreate {
  return {
    name,
    description: 'Generates, then upscales.',
    inputs: [{ id: ids.prompt, name: 'prompt', variable_type_code: 'text', is_required: true }],
    outputs: [{ id: ids.image, name: 'image', variable_type_code: 'image' }],
    nodes: [
      {
        id: ids.generate,
        label: 'Generate',
        type_code: 'model',
        model_id: TEXT_TO_IMAGE,
        config: { flow_inputs: { prompt: 'prompt' } },
        inputs: [{ id: ids.generatePrompt, name: 'prompt', variable_type_code: 'text' }],
        outputs: [{ id: ids.generateImage, name: 'image', variable_type_code: 'image' }],
      },
      {
        id: ids.upscale,
        label: 'Upscale',
        type_code: 'model',
        model_id: UPSCALE,
        x: 320,
        y: 40,
        config: { flow_outputs: { image: 'image' } },
        inputs: [
          {
            id: ids.upscaleImage,
            name: 'image',
            variable_type_code: 'image',
            source_output_id: ids.generateImage,
            connection_label: 'picture',
          },
          { id: ids.upscaleScale, name: 'scale', variable_type_code: 'integer', value: 2 },
        ],
        outputs: [{ id: ids.upscaleOut, name: 'image', variable_type_code: 'image' }],
      },
    ],
  }
}

async function createFlow(body: FlowCreate): Promise<Flow> {
  const response = await sandbox.call('POST', '/v1/flows', { body })
  expect(response.status, response.text).toBe(201)
  return response.body as Flow
}

describe('flows: nested creation and reading back', () => {
  it('creates a flow with its nodes, inputs, outputs and edges in one request, defaults applied', async () => {
    const ids = graphIds()
    const flow = await createFlow(twoStepFlow('Generate and upscale', ids))
    expect(flow).toMatchObject({
      slug: 'generate-and-upscale',
      name: 'Generate and upscale',
      org_id: sandbox.orgId,
      version: 1,
      run_count: 0,
      created_by: null,
      context_variables: {},
    })
    expect(flow.estimated_cost).toMatch(/^\d+\.\d+$/)
    expect(Number(flow.estimated_cost)).toBeGreaterThan(0)
    const [generate, upscale] = flow.nodes ?? []
    // Defaults: x 0, y 0, width 220, collapsed false, sort_order 0, config {}.
    expect(generate).toMatchObject({
      id: ids.generate,
      flow_id: flow.id,
      slug: 'generate',
      subtitle: 'atelier/text-to-image',
      x: 0,
      y: 0,
      width: 220,
      collapsed: false,
      model_id: TEXT_TO_IMAGE,
      builtin_node_code: null,
    })
    expect(generate?.inputs[0]).toMatchObject({
      id: ids.generatePrompt,
      flow_node_id: ids.generate,
      sort_order: 0,
      value: null,
      source_output_id: null,
      // Filled in from the model's own input.
      display_name: 'Prompt',
      behavior_code: 'require',
    })
    expect(upscale).toMatchObject({ x: 320, y: 40, width: 220 })
    expect(upscale?.inputs[0]).toMatchObject({
      source_output_id: ids.generateImage,
      connection_label: 'picture',
    })
    expect(upscale?.inputs[1]).toMatchObject({ name: 'scale', value: 2 })
    expect(flow.inputs).toEqual([
      expect.objectContaining({
        id: ids.prompt,
        flow_id: flow.id,
        is_required: true,
        sort_order: 0,
      }),
    ])
    expect(flow.outputs).toEqual([expect.objectContaining({ id: ids.image, flow_id: flow.id })])
    expect(flow).not.toHaveProperty('created_by_user')
  })

  it('embeds relations only when include names them', async () => {
    const flow = await createFlow(twoStepFlow('Include variants'))
    const bare = await get<Flow>(`/v1/flows/${flow.id}`)
    for (const relation of ['nodes', 'inputs', 'outputs', 'created_by_user', 'recent_stars']) {
      expect(bare).not.toHaveProperty(relation)
    }
    const nodesOnly = await get<Flow>(`/v1/flows/${flow.id}?include=nodes`)
    expect(nodesOnly.nodes).toHaveLength(2)
    expect(nodesOnly).not.toHaveProperty('inputs')
    const everything = await get<Flow>(
      `/v1/flows/${flow.id}?include=created_by_user,inputs,nodes,outputs,recent_stars`,
    )
    expect(everything).toMatchObject({ created_by_user: null, recent_stars: [] })
    expect(everything.inputs).toHaveLength(1)
    expect(everything.outputs).toHaveLength(1)

    const typed = await client.get('/v1/flows/{flow_id}', {
      params: { path: { flow_id: flow.id }, query: { include: 'inputs' } },
    })
    expect(typed.inputs?.[0]?.name).toBe('prompt')
    expect(typed.nodes).toBeUndefined()

    const bad = await sandbox.call('GET', `/v1/flows/${flow.id}?include=owners`)
    expect(bad.status).toBe(422)
  })

  it('lists flows with q, include and a fields projection', async () => {
    const flow = await createFlow(twoStepFlow('Listed flow'))
    const page = await get<Page<Flow>>(
      `/v1/flows?q=${encodeURIComponent('name="Listed flow"')}&include=inputs`,
    )
    expect(page.items).toHaveLength(1)
    expect(page.items[0]?.id).toBe(flow.id)
    expect(page.items[0]?.inputs).toHaveLength(1)
    expect(page.items[0]).not.toHaveProperty('nodes')

    const projected = await get<Page<Record<string, unknown>>>(
      `/v1/flows?q=${encodeURIComponent(`id=${flow.id}`)}&fields=name,version&include=outputs`,
    )
    expect(Object.keys(projected.items[0] ?? {}).sort()).toEqual([
      'id',
      'name',
      'outputs',
      'version',
    ])
    const all: string[] = []
    for await (const item of client.list('/v1/flows', { params: { query: { limit: 2 } } })) {
      all.push(item.id)
    }
    expect(all).toContain(flow.id)
  })

  it('lists nodes with their flow, inputs and outputs, for one flow and across flows with any', async () => {
    const first = await createFlow(twoStepFlow('Nodes one'))
    const second = await createFlow(twoStepFlow('Nodes two'))
    const nodes = await get<Page<FlowNode>>(`/v1/flows/${first.id}/nodes`)
    expect(nodes.items).toHaveLength(2)
    for (const node of nodes.items) {
      expect(node.flow).toMatchObject({ id: first.id, name: 'Nodes one' })
      expect(node.flow).not.toHaveProperty('nodes')
      expect(node.inputs.length).toBeGreaterThan(0)
      expect(node.outputs).toHaveLength(1)
    }
    const across = await get<Page<FlowNode>>(
      `/v1/flows/any/nodes?limit=500&q=${encodeURIComponent('label=Upscale')}`,
    )
    const flowIds = across.items.map((node) => node.flow_id)
    expect(flowIds).toEqual(expect.arrayContaining([first.id, second.id]))

    const upscale = nodes.items.find((node) => node.label === 'Upscale')
    const inputs = await get<Page<{ name: string }>>(
      `/v1/flows/${first.id}/nodes/${upscale?.id ?? ''}/inputs?sort_by=name:asc`,
    )
    expect(inputs.items.map((i) => i.name)).toEqual(['image', 'scale'])
    const viaAny = await get<Page<{ name: string }>>(
      `/v1/flows/any/nodes/${upscale?.id ?? ''}/outputs`,
    )
    expect(viaAny.items.map((o) => o.name)).toEqual(['image'])
    const wrongFlow = await sandbox.call(
      'GET',
      `/v1/flows/${second.id}/nodes/${upscale?.id ?? ''}/inputs`,
    )
    expect(wrongFlow.status).toBe(404)
    expect(wrongFlow.body).toMatchObject({ code: 'FLOW_NODE_NOT_FOUND' })

    const flowInputs = await get<Page<{ flow_id: string }>>(`/v1/flows/any/inputs?limit=500`)
    expect(flowInputs.items.map((i) => i.flow_id)).toEqual(
      expect.arrayContaining([first.id, second.id]),
    )
    const flowOutputs = await get<Page<{ flow_id: string }>>(`/v1/flows/${second.id}/outputs`)
    expect(flowOutputs.items.map((o) => o.flow_id)).toEqual([second.id])
    const missing = await sandbox.call('GET', `/v1/flows/${randomUUID()}/inputs`)
    expect(missing.status).toBe(404)
  })

  it('looks a flow up by owner and slug', async () => {
    const flow = await createFlow({ ...twoStepFlow('Lookup me'), slug: 'lookup-me' })
    const found = await client.get('/v1/flows/lookup', {
      params: { query: { owner: sandbox.orgId, slug: 'lookup-me', include: 'nodes' } },
    })
    expect(found.id).toBe(flow.id)
    expect(found.nodes).toHaveLength(2)
    const otherOwner = await sandbox.call(
      'GET',
      `/v1/flows/lookup?owner=${sandbox.otherOrgId}&slug=lookup-me`,
    )
    expect(otherOwner.status).toBe(404)
    // An organization the key belongs to besides the one it acts in.
    const team = await sandbox.call('POST', '/v1/flows', {
      headers: { 'X-Organization-Id': sandbox.teamOrgId },
      body: { name: 'Team flow' },
    })
    expect(team.status).toBe(201)
    const teamFlow = await get<Flow>(`/v1/flows/lookup?owner=${sandbox.teamOrgId}&slug=team-flow`)
    expect(teamFlow).toMatchObject({ id: (team.body as Flow).id, org_id: sandbox.teamOrgId })
    const noSlug = await sandbox.call(
      'GET',
      `/v1/flows/lookup?owner=${sandbox.orgId}&slug=no-such-flow`,
    )
    expect(noSlug.body).toMatchObject({ code: 'FLOW_NOT_FOUND' })
  })
})

describe('flows: changes', () => {
  it('patches fields, keeps slugs unique per organization', async () => {
    const flow = await createFlow(twoStepFlow('Patch me'))
    const patched = await client.patch('/v1/flows/{flow_id}', {
      params: { path: { flow_id: flow.id } },
      body: { name: 'Patched', status_code: 'archived', context_variables: { tone: 'warm' } },
    })
    expect(patched).toMatchObject({
      name: 'Patched',
      slug: 'patch-me',
      status_code: 'archived',
      context_variables: { tone: 'warm' },
      version: 1,
    })
    expect(patched.updated_at > flow.updated_at).toBe(true)
    expect(patched).not.toHaveProperty('nodes')

    await createFlow({ ...twoStepFlow('Taken'), slug: 'taken-slug' })
    const clash = await sandbox.call('PATCH', `/v1/flows/${flow.id}`, {
      body: { slug: 'taken-slug' },
    })
    expect(clash.status).toBe(409)
    expect(clash.body).toMatchObject({ code: 'SLUG_TAKEN', errors: [{ field: 'slug' }] })
    const malformed = await sandbox.call('PATCH', `/v1/flows/${flow.id}`, {
      body: { slug: 'Not A Slug' },
    })
    expect(malformed.status).toBe(422)
    const empty = await sandbox.call('PATCH', `/v1/flows/${flow.id}`, { body: {} })
    expect(empty.status).toBe(422)
  })

  it('answers 409 on a slug clash at creation, and makes a free slug when none is given', async () => {
    await createFlow({ ...twoStepFlow('Same name'), slug: 'same-name-flow' })
    const clash = await sandbox.call('POST', '/v1/flows', {
      body: { ...twoStepFlow('Same name'), slug: 'same-name-flow' },
    })
    expect(clash.status).toBe(409)
    expect(clash.body).toMatchObject({ code: 'SLUG_TAKEN' })
    const a = await createFlow({ name: 'Twice named' })
    const b = await createFlow({ name: 'Twice named' })
    expect(a.slug).toBe('twice-named')
    expect(b.slug).toBe('twice-named-2')
  })

  it('replaces the graph: ids kept, version bumped, removed nodes gone from the lists', async () => {
    const ids = graphIds()
    const flow = await createFlow(twoStepFlow('Replace me', ids))
    const caption = randomUUID()
    const captionImage = randomUUID()
    const captionText = randomUUID()
    const replaced = await client.put('/v1/flows/{flow_id}/graph', {
      params: { path: { flow_id: flow.id } },
      body: {
        inputs: [{ id: ids.prompt, name: 'prompt', variable_type_code: 'text', is_required: true }],
        outputs: [{ id: randomUUID(), name: 'caption', variable_type_code: 'text' }],
        nodes: [
          {
            id: ids.generate,
            label: 'Generate',
            type_code: 'model',
            model_id: TEXT_TO_IMAGE,
            x: 10,
            config: { flow_inputs: { prompt: 'prompt' } },
            inputs: [{ id: ids.generatePrompt, name: 'prompt', variable_type_code: 'text' }],
            outputs: [{ id: ids.generateImage, name: 'image', variable_type_code: 'image' }],
          },
          {
            id: caption,
            label: 'Caption',
            type_code: 'model',
            model_id: findModel('atelier/caption')?.id ?? '',
            config: { flow_outputs: { caption: 'caption' } },
            inputs: [
              {
                id: captionImage,
                name: 'image',
                variable_type_code: 'image',
                source_output_id: ids.generateImage,
              },
            ],
            outputs: [{ id: captionText, name: 'caption', variable_type_code: 'text' }],
          },
        ],
      },
    })
    expect(replaced.version).toBe(2)
    expect(replaced.current_version_id).not.toBe(flow.current_version_id)
    expect(replaced.nodes?.map((n) => n.id)).toEqual([ids.generate, caption])
    const generate = replaced.nodes?.[0]
    const before = flow.nodes?.[0]
    expect(generate?.x).toBe(10)
    expect(generate?.created_at).toBe(before?.created_at)
    // An untouched record keeps its updated_at; a changed one gets a new one.
    expect(generate?.inputs[0]?.updated_at).toBe(before?.inputs[0]?.updated_at)
    expect(generate?.updated_at).not.toBe(before?.updated_at)
    expect(replaced.inputs?.[0]?.created_at).toBe(flow.inputs?.[0]?.created_at)

    const nodes = await get<Page<FlowNode>>(`/v1/flows/${flow.id}/nodes`)
    expect(nodes.items.map((n) => n.id).sort()).toEqual([ids.generate, caption].sort())
    const gone = await sandbox.call('GET', `/v1/flows/any/nodes/${ids.upscale}/inputs`)
    expect(gone.status).toBe(404)
    const anyInputs = await get<Page<{ id: string }>>(
      `/v1/flows/any/nodes/${caption}/inputs?limit=500`,
    )
    expect(anyInputs.items.map((i) => i.id)).toEqual([captionImage])
    const outputs = await get<Page<{ name: string }>>(`/v1/flows/${flow.id}/outputs`)
    expect(outputs.items.map((o) => o.name)).toEqual(['caption'])
    const stored = await get<Flow>(`/v1/flows/${flow.id}?include=nodes`)
    expect(stored.version).toBe(2)
    expect(stored.nodes).toHaveLength(2)

    // Putting the removed node back (an undo) reuses its id.
    const restored = await sandbox.call('PUT', `/v1/flows/${flow.id}/graph`, {
      body: {
        inputs: twoStepFlow('x', ids).inputs,
        outputs: twoStepFlow('x', ids).outputs,
        nodes: twoStepFlow('x', ids).nodes,
      },
    })
    expect(restored.status, restored.text).toBe(200)
    expect((restored.body as Flow).version).toBe(3)
    const back = await get<Page<{ id: string }>>(`/v1/flows/${flow.id}/nodes/${ids.upscale}/inputs`)
    expect(back.items).toHaveLength(2)
  })

  it('refuses a dangling source_output_id with 422 naming the field path', async () => {
    const body = twoStepFlow('Dangling')
    const upscale = body.nodes?.[1]
    const edge = upscale?.inputs?.[0]
    if (edge) edge.source_output_id = randomUUID()
    const response = await sandbox.call('POST', '/v1/flows', { body })
    expect(response.status).toBe(422)
    expect(response.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'nodes.1.inputs.0.source_output_id', code: 'not_found' }],
    })
    const flows = await get<Page<Flow>>(`/v1/flows?q=${encodeURIComponent('name=Dangling')}`)
    expect(flows.items).toHaveLength(0)
  })

  it('refuses loops, duplicate ids, unknown models, wrong port names and types', async () => {
    const ids = graphIds()
    const body: FlowCreate = {
      name: 'Many problems',
      nodes: [
        {
          id: ids.generate,
          label: 'A',
          type_code: 'builtin',
          builtin_node_code: 'text',
          inputs: [
            {
              name: 'value',
              variable_type_code: 'text',
              source_output_id: ids.upscaleOut,
            },
          ],
          outputs: [{ id: ids.generateImage, name: 'text', variable_type_code: 'text' }],
        },
        {
          id: ids.upscale,
          label: 'B',
          type_code: 'builtin',
          builtin_node_code: 'text',
          inputs: [
            { name: 'value', variable_type_code: 'text', source_output_id: ids.generateImage },
          ],
          outputs: [{ id: ids.upscaleOut, name: 'text', variable_type_code: 'text' }],
        },
        { id: ids.upscale, label: 'C', type_code: 'model', model_id: randomUUID() },
        {
          label: 'D',
          type_code: 'model',
          model_id: TEXT_TO_IMAGE,
          inputs: [
            { name: 'prompt', variable_type_code: 'image' },
            { name: 'colour', variable_type_code: 'text' },
          ],
        },
        { label: 'E', type_code: 'sticky_note' },
      ],
    }
    const response = await sandbox.call('POST', '/v1/flows', { body })
    expect(response.status).toBe(422)
    const errors = (response.body as { errors: { field: string; code: string }[] }).errors
    expect(errors).toEqual(
      expect.arrayContaining([
        { field: 'nodes.2.id', code: 'duplicate', message: expect.any(String) },
        { field: 'nodes.2.model_id', code: 'not_found', message: expect.any(String) },
        {
          field: 'nodes.3.inputs.0.variable_type_code',
          code: 'type_mismatch',
          message: expect.any(String),
        },
        { field: 'nodes.3.inputs.1.name', code: 'unknown_port', message: expect.any(String) },
        { field: 'nodes.4.type_code', code: 'unknown_code', message: expect.any(String) },
        expect.objectContaining({ code: 'cycle' }),
      ]),
    )
  })

  it('answers 409 ID_TAKEN when a client-chosen id belongs to another flow', async () => {
    const ids = graphIds()
    await createFlow(twoStepFlow('Owner of ids', ids))
    const response = await sandbox.call('POST', '/v1/flows', {
      body: twoStepFlow('Copy with the same ids', ids),
    })
    expect(response.status).toBe(409)
    expect(response.body).toMatchObject({ code: 'ID_TAKEN' })
    const fields = (response.body as { errors: { field: string }[] }).errors.map((e) => e.field)
    expect(fields).toEqual(expect.arrayContaining(['nodes.0.id', 'nodes.1.inputs.0.id']))
  })

  it('runs other flows, built-ins and workflows as nodes, and refuses a flow running itself', async () => {
    const inner = await createFlow(twoStepFlow('Inner flow'))
    const outer = await createFlow({
      name: 'Outer flow',
      nodes: [
        {
          label: 'Inner',
          type_code: 'sub_flow',
          sub_flow_id: inner.id,
          inputs: [{ name: 'prompt', variable_type_code: 'text', value: 'a fox' }],
          outputs: [{ name: 'image', variable_type_code: 'image' }],
        },
        {
          label: 'Template',
          type_code: 'builtin',
          builtin_node_code: 'prompt_template',
          inputs: [
            { name: 'template', variable_type_code: 'text', value: 'a {animal}' },
            { name: 'animal', variable_type_code: 'text', value: 'fox' },
          ],
          outputs: [{ name: 'prompt', variable_type_code: 'text' }],
        },
      ],
    })
    expect(outer.nodes?.[0]).toMatchObject({ subtitle: 'Inner flow', sub_flow_id: inner.id })
    expect(outer.estimated_cost).toBe(inner.estimated_cost)

    const loop = await sandbox.call('PUT', `/v1/flows/${inner.id}/graph`, {
      body: {
        inputs: [],
        outputs: [],
        nodes: [{ label: 'Outer', type_code: 'sub_flow', sub_flow_id: outer.id }],
      },
    })
    expect(loop.status).toBe(422)
    expect(loop.body).toMatchObject({ errors: [{ field: 'nodes.0.sub_flow_id', code: 'cycle' }] })

    const foreign = await sandbox.call('POST', '/v1/flows', {
      key: sandbox.keys.otherOrg,
      body: {
        name: 'Foreign',
        nodes: [{ label: 'x', type_code: 'sub_flow', sub_flow_id: inner.id }],
      },
    })
    expect(foreign.status).toBe(422)
    expect(foreign.body).toMatchObject({
      errors: [{ field: 'nodes.0.sub_flow_id', code: 'not_found' }],
    })
  })

  it('gives recent stars newest first, at most 50', async () => {
    const flow = await createFlow({ name: 'Starred' })
    const base = Date.UTC(2026, 1, 1)
    for (let i = 0; i < 55; i++) {
      const at = new Date(base + i * 1000).toISOString().replace('Z', '+00:00')
      sandbox.services.store.insert(
        'flow_stars',
        sandbox.orgId,
        {
          id: randomUUID(),
          user_id: randomUUID(),
          flow_id: flow.id,
          created_at: at,
          updated_at: at,
        },
        flow.id,
      )
    }
    const starred = await get<Flow>(`/v1/flows/${flow.id}?include=recent_stars`)
    const stars = starred.recent_stars ?? []
    expect(stars).toHaveLength(50)
    const times = stars.map((star) => star.created_at)
    expect(times).toEqual([...times].sort().reverse())
    expect(times[0]).toBe(new Date(base + 54_000).toISOString().replace('Z', '+00:00'))
  })

  it('deletes a flow with its parts and leaves a tombstone', async () => {
    const flow = await createFlow(twoStepFlow('Delete me'))
    const nodeId = flow.nodes?.[0]?.id ?? ''
    const deleted = await sandbox.call('DELETE', `/v1/flows/${flow.id}`)
    expect(deleted.status).toBe(204)
    expect((await sandbox.call('GET', `/v1/flows/${flow.id}`)).status).toBe(404)
    expect((await sandbox.call('DELETE', `/v1/flows/${flow.id}`)).status).toBe(404)
    expect((await sandbox.call('GET', `/v1/flows/${flow.id}/nodes`)).status).toBe(404)
    const anyNodes = await get<Page<FlowNode>>(`/v1/flows/any/nodes?limit=500`)
    expect(anyNodes.items.map((n) => n.id)).not.toContain(nodeId)
    const tombstones = await get<Page<{ collection: string; record_id: string }>>(
      `/v1/tombstones?q=${encodeURIComponent(`record_id=${flow.id}`)}`,
    )
    expect(tombstones.items).toEqual([
      expect.objectContaining({ collection: 'flows', record_id: flow.id }),
    ])
    // Its slug is free again.
    const again = await createFlow({ name: 'Delete me' })
    expect(again.slug).toBe('delete-me')
  })

  it('summarises flows', async () => {
    const flow = await createFlow({ name: 'Summarised' })
    const page = await client.get('/v1/flows/summaries', {
      params: { query: { q: `id=${flow.id}` } },
    })
    expect(page.items).toEqual([
      {
        id: flow.id,
        slug: 'summarised',
        name: 'Summarised',
        version: 1,
        status_code: 'active',
        run_count: 0,
        cost_per_run: null,
        updated_at: flow.updated_at,
      } satisfies FlowSummary,
    ])
  })
})

describe('flow templates', () => {
  it('lists and gets the global templates, which are valid flows', async () => {
    const page = await get<Page<Flow>>('/v1/flow-templates?limit=100&include=nodes')
    const slugs = page.items.map((t) => t.slug)
    expect(slugs).toEqual(
      expect.arrayContaining([
        'prompt-to-image',
        'image-to-upscaled-image',
        'generate-caption-and-evaluate',
        'prompt-to-video',
      ]),
    )
    for (const template of page.items) {
      expect(template).toMatchObject({ org_id: null, flow_type_code: 'template' })
      expect(template.nodes?.length).toBeGreaterThan(0)
    }
    const evaluate = page.items.find((t) => t.slug === 'generate-caption-and-evaluate')
    const one = await client.get('/v1/flow-templates/{id}', {
      params: { path: { id: evaluate?.id ?? '' }, query: { include: 'inputs,outputs' } },
    })
    expect(one.inputs?.map((i) => i.name)).toEqual(['prompt', 'min_score'])
    expect(one.outputs?.map((o) => o.name)).toEqual(['image', 'caption', 'passed', 'score'])
    expect(one).not.toHaveProperty('nodes')
    const missing = await sandbox.call('GET', `/v1/flow-templates/${randomUUID()}`)
    expect(missing.body).toMatchObject({ code: 'FLOW_TEMPLATE_NOT_FOUND' })
    // Templates are not the organization's flows.
    expect((await sandbox.call('GET', `/v1/flows/${one.id}`)).status).toBe(404)
  })

  it('can be copied into a new flow under new ids', async () => {
    const template = await get<Flow>(
      `/v1/flow-templates/${(await get<Page<Flow>>('/v1/flow-templates?q=slug=prompt-to-image')).items[0]?.id ?? ''}?include=nodes,inputs,outputs`,
    )
    const outputIds = new Map<string, string>()
    for (const node of template.nodes ?? []) {
      for (const output of node.outputs) outputIds.set(output.id, randomUUID())
    }
    const copy = await createFlow({
      name: 'My prompt to image',
      inputs: template.inputs?.map((i) => ({
        name: i.name,
        variable_type_code: i.variable_type_code,
      })),
      outputs: template.outputs?.map((o) => ({
        name: o.name,
        variable_type_code: o.variable_type_code,
      })),
      nodes: template.nodes?.map((node) => ({
        label: node.label,
        type_code: node.type_code,
        model_id: node.model_id,
        config: node.config,
        inputs: node.inputs.map((i) => ({
          name: i.name,
          variable_type_code: i.variable_type_code,
          value: i.value,
          source_output_id:
            i.source_output_id === null ? null : (outputIds.get(i.source_output_id) ?? null),
        })),
        outputs: node.outputs.map((o) => ({
          id: outputIds.get(o.id) ?? '',
          name: o.name,
          variable_type_code: o.variable_type_code,
        })),
      })),
    })
    expect(copy.estimated_cost).toBe(template.estimated_cost)
  })
})

describe('workflow-engine workflows', () => {
  const workflowJson = {
    '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
    '2': { class_type: 'Invert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } },
  }

  it('creates, reads, looks up, updates and deletes a workflow with its inputs and outputs', async () => {
    const inputId = randomUUID()
    const created = await client.post('/v1/comfyui-workflows', {
      body: {
        name: 'Invert colours',
        workflow_json: workflowJson,
        version: '1.0',
        inputs: [
          {
            id: inputId,
            name: 'image',
            variable_type_code: 'image',
            default_behavior_code: 'require',
            is_required: true,
            wfengine_node_id: '1',
            wfengine_field_name: 'image',
          },
        ],
        outputs: [
          {
            name: 'image',
            variable_type_code: 'image',
            wfengine_node_id: '3',
            wfengine_field_name: 'images',
          },
        ],
      },
    })
    expect(created).toMatchObject({
      slug: 'invert-colours',
      org_id: sandbox.orgId,
      version: '1.0',
      is_public: false,
      deleted_at: null,
      inputs: [{ id: inputId, wfengine_workflow_id: created.id, sort_order: 0 }],
      outputs: [{ name: 'image', wfengine_node_id: '3' }],
    })

    expect(await get<Workflow>(`/v1/comfyui-workflows/${created.id}`)).toEqual(created)
    const found = await client.get('/v1/comfyui-workflows/lookup', {
      params: { query: { slug: 'invert-colours' } },
    })
    expect(found.id).toBe(created.id)

    const inputs = await get<Page<{ wfengine_workflow_id: string }>>(
      `/v1/comfyui-workflows/any/inputs?limit=500`,
    )
    expect(inputs.items.map((i) => i.wfengine_workflow_id)).toContain(created.id)
    const outputs = await get<Page<{ name: string }>>(`/v1/comfyui-workflows/${created.id}/outputs`)
    expect(outputs.items.map((o) => o.name)).toEqual(['image'])

    const updated = await client.patch('/v1/comfyui-workflows/{comfyui_workflow_id}', {
      params: { path: { comfyui_workflow_id: created.id } },
      body: {
        description: 'Negative of a picture.',
        inputs: [
          { id: inputId, name: 'image', variable_type_code: 'image', wfengine_node_id: '1' },
          { name: 'strength', variable_type_code: 'number', default_value: 1 },
        ],
      },
    })
    expect(updated.description).toBe('Negative of a picture.')
    expect(updated.inputs.map((i) => i.name)).toEqual(['image', 'strength'])
    expect(updated.inputs[0]?.created_at).toBe(created.inputs[0]?.created_at)
    // Outputs left out are kept.
    expect(updated.outputs).toEqual(created.outputs)
    const listed = await get<Page<{ name: string }>>(
      `/v1/comfyui-workflows/${created.id}/inputs?sort_by=name:asc`,
    )
    expect(listed.items.map((i) => i.name)).toEqual(['image', 'strength'])

    const badNode = await sandbox.call('PATCH', `/v1/comfyui-workflows/${created.id}`, {
      body: { workflow_json: { '9': { class_type: 'LoadImage', inputs: {} } } },
    })
    expect(badNode.status).toBe(422)
    expect(badNode.body).toMatchObject({
      errors: expect.arrayContaining([
        expect.objectContaining({ field: 'inputs.0.wfengine_node_id', code: 'not_found' }),
      ]),
    })

    const deleted = await sandbox.call('DELETE', `/v1/comfyui-workflows/${created.id}`)
    expect(deleted.status).toBe(204)
    expect((await sandbox.call('GET', `/v1/comfyui-workflows/${created.id}`)).body).toMatchObject({
      code: 'WORKFLOW_NOT_FOUND',
    })
    const tombstones = await get<Page<{ collection: string }>>(
      `/v1/tombstones?q=${encodeURIComponent(`record_id=${created.id}`)}`,
    )
    expect(tombstones.items[0]?.collection).toBe('wfengine_workflows')
    const after = await get<Page<{ wfengine_workflow_id: string }>>(
      `/v1/comfyui-workflows/any/inputs?limit=500`,
    )
    expect(after.items.map((i) => i.wfengine_workflow_id)).not.toContain(created.id)
  })

  it('refuses duplicate names and slugs, and keeps the samples read-only', async () => {
    const duplicate = await sandbox.call('POST', '/v1/comfyui-workflows', {
      body: {
        name: 'Dup',
        workflow_json: workflowJson,
        inputs: [
          { name: 'x', variable_type_code: 'text' },
          { name: 'x', variable_type_code: 'text' },
        ],
      },
    })
    expect(duplicate.status).toBe(422)
    expect(duplicate.body).toMatchObject({
      errors: [{ field: 'inputs.1.name', code: 'duplicate' }],
    })

    await client.post('/v1/comfyui-workflows', {
      body: { name: 'One', slug: 'one-workflow', workflow_json: {} },
    })
    const clash = await client
      .post('/v1/comfyui-workflows', {
        body: { name: 'Two', slug: 'one-workflow', workflow_json: {} },
      })
      .catch((error: unknown) => error)
    expect(clash).toBeInstanceOf(ServiceError)
    expect(clash).toMatchObject({ status: 409, code: 'SLUG_TAKEN' })

    const samples = await get<Page<Workflow>>('/v1/comfyui-workflows?q=org_id=null')
    expect(samples.items.map((w) => w.slug)).toEqual(
      expect.arrayContaining(['basic-text-to-image', 'upscale-with-a-model']),
    )
    const sample = samples.items[0]
    const change = await sandbox.call('PATCH', `/v1/comfyui-workflows/${sample?.id ?? ''}`, {
      body: { name: 'Mine now' },
    })
    expect(change.status).toBe(403)
    expect(change.body).toMatchObject({ code: 'PERMISSION_DENIED' })
    const sampleInputs = await get<Page<unknown>>(
      `/v1/comfyui-workflows/${sample?.id ?? ''}/inputs`,
    )
    expect(sampleInputs.items.length).toBeGreaterThan(0)
  })

  it('lets a flow node run a workflow', async () => {
    const sample = await client.get('/v1/comfyui-workflows/lookup', {
      params: { query: { slug: 'basic-text-to-image' } },
    })
    const flow = await createFlow({
      name: 'Workflow node',
      nodes: [
        {
          label: 'Engine',
          type_code: 'wfengine_workflow',
          wfengine_workflow_id: sample.id,
          inputs: [{ name: 'prompt', variable_type_code: 'text', value: 'a fox' }],
          outputs: [{ name: 'image', variable_type_code: 'image' }],
        },
      ],
    })
    expect(flow.nodes?.[0]).toMatchObject({
      subtitle: 'Basic text to image',
      inputs: [{ is_required: true, display_name: 'Prompt', behavior_code: 'require' }],
    })
  })
})

describe('built-in nodes', () => {
  it('lists and gets the built-in nodes with typed ports', async () => {
    const page = await get<Page<{ code: string; inputs: unknown[]; outputs: unknown[] }>>(
      '/v1/builtin-nodes?limit=100',
    )
    expect(page.items.map((n) => n.code)).toEqual(
      expect.arrayContaining([
        'text',
        'number',
        'prompt_template',
        'image_resize',
        'image_crop',
        'pick_from_list',
        'compare',
        'branch',
        'evaluate',
        'save_to_assets',
      ]),
    )
    const evaluate = await client.get('/v1/builtin-nodes/{code}', {
      params: { path: { code: 'evaluate' } },
    })
    expect(evaluate.inputs.map((i) => i.name)).toEqual([
      'image',
      'prompt',
      'instructions',
      'min_score',
    ])
    expect(evaluate.outputs.map((o) => o.variable_type_code)).toEqual(['boolean', 'number', 'text'])
    const missing = await sandbox.call('GET', '/v1/builtin-nodes/teleport')
    expect(missing.status).toBe(404)
  })
})

describe('solutions', () => {
  it('lists solutions with their links, and the links with the records they join', async () => {
    const solutions = await client.get('/v1/solutions', { params: { query: { limit: 100 } } })
    const sections = new Set(solutions.items.map((s) => s.section_code))
    expect([...sections].sort()).toEqual(['getting-started', 'images', 'video'])
    const sectionCodes = (await get<Page<{ code: string }>>('/v1/solutions/sections')).items.map(
      (s) => s.code,
    )
    for (const code of sections) expect(sectionCodes).toContain(code)

    const first = solutions.items.find((s) => s.slug === 'first-pictures')
    expect(first?.solution_flows.length).toBeGreaterThan(0)
    expect(first?.solution_models.length).toBeGreaterThan(0)
    expect(first?.solution_comfyui_workflows.length).toBeGreaterThan(0)
    const one = await get<Solution>(`/v1/solutions/${first?.id ?? ''}`)
    expect(one).toEqual(first)

    const flows = await get<Page<SolutionFlowLink>>(`/v1/solutions/${first?.id ?? ''}/flows`)
    expect(flows.items[0]).toMatchObject({
      solution_id: first?.id,
      solution: { id: first?.id },
      flow: { slug: 'prompt-to-image', org_id: null },
    })
    const workflows = await get<Page<SolutionWorkflowLink>>(
      `/v1/solutions/${first?.id ?? ''}/workflows`,
    )
    expect(workflows.items[0]?.workflow).toMatchObject({ slug: 'basic-text-to-image' })

    const models = await get<Page<ModelSolutionLink>>(`/v1/solutions/${first?.id ?? ''}/models`)
    expect(models.items[0]).toMatchObject({
      model_id: TEXT_TO_IMAGE,
      model: { slug: 'atelier/text-to-image' },
      solution: { slug: 'first-pictures' },
    })
    const anyModels = await get<Page<ModelSolutionLink>>('/v1/solutions/any/models?limit=500')
    expect(new Set(anyModels.items.map((l) => l.solution_id)).size).toBe(solutions.items.length)

    const linkId = models.items[0]?.id ?? ''
    const viaAny = await client.get('/v1/solutions/{solution_id}/models/{id}', {
      params: { path: { solution_id: 'any', id: linkId } },
    })
    expect(viaAny).toMatchObject({
      id: linkId,
      model: { id: TEXT_TO_IMAGE },
      solution: { id: first?.id },
    })
    const other = solutions.items.find((s) => s.id !== first?.id)
    const mismatch = await sandbox.call('GET', `/v1/solutions/${other?.id ?? ''}/models/${linkId}`)
    expect(mismatch.status).toBe(404)
    const noSolution = await sandbox.call('GET', `/v1/solutions/${randomUUID()}/flows`)
    expect(noSolution.body).toMatchObject({ code: 'SOLUTION_NOT_FOUND' })
    const projected = await get<Page<Record<string, unknown>>>(
      `/v1/solutions/any/flows?fields=flow_id`,
    )
    expect(Object.keys(projected.items[0] ?? {}).sort()).toEqual(['flow_id', 'id'])
  })
})

describe('organizations', () => {
  it('keeps flows and workflows to their organization and shares the global records', async () => {
    const flow = await createFlow({ ...twoStepFlow('Private flow'), slug: 'private-flow' })
    const workflow = await client.post('/v1/comfyui-workflows', {
      body: { name: 'Private workflow', workflow_json: {} },
    })
    const key = sandbox.keys.otherOrg
    expect((await sandbox.call('GET', `/v1/flows/${flow.id}`, { key })).status).toBe(404)
    expect(
      (await sandbox.call('PATCH', `/v1/flows/${flow.id}`, { key, body: { name: 'x' } })).status,
    ).toBe(404)
    expect((await sandbox.call('DELETE', `/v1/flows/${flow.id}`, { key })).status).toBe(404)
    expect((await sandbox.call('GET', `/v1/flows/${flow.id}/nodes`, { key })).status).toBe(404)
    expect(
      (
        await sandbox.call('GET', `/v1/flows/lookup?owner=${sandbox.orgId}&slug=private-flow`, {
          key,
        })
      ).status,
    ).toBe(404)
    expect((await get<Page<Flow>>('/v1/flows', key)).items).toEqual([])
    expect((await get<Page<FlowNode>>('/v1/flows/any/nodes', key)).items).toEqual([])
    expect((await get<Page<unknown>>('/v1/flows/any/inputs', key)).items).toEqual([])
    expect((await get<Page<unknown>>('/v1/flows/summaries', key)).items).toEqual([])
    expect(
      (await sandbox.call('GET', `/v1/comfyui-workflows/${workflow.id}`, { key })).status,
    ).toBe(404)
    const workflows = await get<Page<Workflow>>('/v1/comfyui-workflows', key)
    expect(workflows.items.every((w) => w.org_id === null)).toBe(true)
    expect(workflows.items.length).toBeGreaterThan(0)
    const inputs = await get<Page<{ wfengine_workflow_id: string }>>(
      '/v1/comfyui-workflows/any/inputs?limit=500',
      key,
    )
    expect(inputs.items.map((i) => i.wfengine_workflow_id)).not.toContain(workflow.id)

    expect((await get<Page<Flow>>('/v1/flow-templates', key)).items.length).toBeGreaterThan(0)
    expect((await get<Page<unknown>>('/v1/builtin-nodes', key)).items.length).toBeGreaterThan(0)
    expect((await get<Page<unknown>>('/v1/solutions', key)).items.length).toBeGreaterThan(0)
    // The other organization may use the same slug for its own flow.
    const theirs = await sandbox.call('POST', '/v1/flows', {
      key,
      body: { name: 'Theirs', slug: 'private-flow' },
    })
    expect(theirs.status).toBe(201)
  })
})

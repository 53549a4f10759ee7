import { describe, expect, it } from 'vitest'
import { BUILTIN_NODES, findBuiltinNode } from '../../src-main/sandbox/authoring/builtins'
import {
  buildFlowGraph,
  typesConnect,
  type GraphBody,
  type GraphContext,
  type NodeTarget,
  type StoredRecord,
} from '../../src-main/sandbox/authoring/graph'
import { buildSampleWorkflows, buildSolutions } from '../../src-main/sandbox/authoring/samples'
import { firstFreeSlug, slugify, slugProblem } from '../../src-main/sandbox/authoring/slug'
import { buildFlowTemplates } from '../../src-main/sandbox/authoring/templates'
import {
  buildWorkflowPorts,
  workflowNodeIds,
} from '../../src-main/sandbox/authoring/workflow-ports'
import { isCatalogCode } from '../../src-main/sandbox/models'

const NOW = '2026-03-01T00:00:00.000+00:00'
const FLOW = '00000000-0000-4000-8000-000000000000'

/** Ids 1, 2, 3… as uuids, so that tests can name them. */
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

const textNode: NodeTarget = {
  title: 'Text',
  inputs: [
    {
      name: 'value',
      display_name: 'Text',
      variable_type_code: 'text',
      validator_code: null,
      validator_attrs: null,
      behavior_code: 'use_default',
      default_value: '',
    },
  ],
  outputs: [
    {
      name: 'text',
      display_name: 'Text',
      variable_type_code: 'text',
      validator_code: null,
      validator_attrs: null,
    },
  ],
  estimate: () => 1_000,
}

function context(existing: [string, StoredRecord][] = []): GraphContext {
  let next = 1000
  return {
    flowId: FLOW,
    now: NOW,
    newId: () => id(next++),
    existing: new Map(existing),
    resolver: {
      model: () => undefined,
      builtin: (code) => (code === 'text' ? textNode : undefined),
      workflow: () => undefined,
      flow: () => undefined,
    },
  }
}

/** A chain of text nodes, each fed by the one before. */
function chain(length: number): GraphBody {
  return {
    nodes: Array.from({ length }, (_, i) => ({
      id: id(3 * i + 1),
      label: `Step ${i}`,
      type_code: 'builtin',
      builtin_node_code: 'text',
      inputs: [
        {
          id: id(3 * i + 2),
          name: 'value',
          variable_type_code: 'text',
          ...(i === 0 ? {} : { source_output_id: id(3 * (i - 1) + 3) }),
        },
      ],
      outputs: [{ id: id(3 * i + 3), name: 'text', variable_type_code: 'text' }],
    })),
  }
}

const fields = (body: GraphBody, ctx = context()) =>
  buildFlowGraph(body, ctx).problems.map((p) => `${p.field} ${p.code}`)

describe('slugs', () => {
  it('makes slugs from names and finds free ones', () => {
    expect(slugify('Prompt → Image (v2)', 'flow')).toBe('prompt-image-v2')
    expect(slugify('Café crème', 'flow')).toBe('cafe-creme')
    expect(slugify('🔥🔥', 'flow')).toBe('flow')
    expect(slugify('x'.repeat(300), 'flow')).toHaveLength(100)
    const taken = new Set(['a', 'a-2'])
    expect(firstFreeSlug('a', (s) => taken.has(s))).toBe('a-3')
    expect(firstFreeSlug('b', (s) => taken.has(s))).toBe('b')
    expect(slugProblem('good-slug_2')).toBeNull()
    expect(slugProblem('Bad Slug')).toMatch(/lower-case/)
    expect(slugProblem('-leading')).not.toBeNull()
  })
})

describe('buildFlowGraph', () => {
  it('applies the defaults and fills ports in from what the node runs', () => {
    const graph = buildFlowGraph(
      {
        nodes: [
          {
            label: 'My text',
            type_code: 'builtin',
            builtin_node_code: 'text',
            inputs: [{ name: 'value', variable_type_code: 'string' }],
          },
        ],
      },
      context(),
    )
    expect(graph.problems).toEqual([])
    expect(graph.nodes[0]).toMatchObject({
      id: id(1000),
      flow_id: FLOW,
      slug: 'my-text',
      subtitle: 'Text',
      x: 0,
      y: 0,
      width: 220,
      collapsed: false,
      config: {},
      created_at: NOW,
      updated_at: NOW,
    })
    expect(graph.nodes[0]?.inputs[0]).toMatchObject({
      display_name: 'Text',
      behavior_code: 'use_default',
      default_value: '',
      sort_order: 0,
      is_required: false,
    })
    expect(graph.estimatedMicro).toBe(1_000)
  })

  it('names each problem by its field path', () => {
    const body = chain(3)
    const second = body.nodes?.[1]?.inputs?.[0]
    if (second) {
      second.source_output_id = id(999)
      second.value = 'also a value'
    }
    expect(fields(body)).toEqual([
      'nodes.1.inputs.0.source_output_id not_found',
      'nodes.1.inputs.0.value conflict',
    ])
    const duplicate = chain(2)
    const output = duplicate.nodes?.[1]?.outputs?.[0]
    if (output) output.id = id(1)
    expect(fields(duplicate)).toContain('nodes.1.outputs.0.id duplicate')
  })

  it('checks node types, references and ports', () => {
    expect(
      fields({
        nodes: [
          { label: 'a', type_code: 'note' },
          { label: 'b', type_code: 'builtin' },
          { label: 'c', type_code: 'builtin', builtin_node_code: 'text', model_id: id(5) },
          { label: 'd', type_code: 'builtin', builtin_node_code: 'teleport' },
          {
            label: 'e',
            type_code: 'builtin',
            builtin_node_code: 'text',
            inputs: [
              { name: 'value', variable_type_code: 'image' },
              { name: 'other', variable_type_code: 'text' },
              { name: 'other', variable_type_code: 'colour' },
            ],
          },
        ],
      }),
    ).toEqual([
      'nodes.0.type_code unknown_code',
      'nodes.1.builtin_node_code required',
      'nodes.2.model_id not_allowed',
      'nodes.3.builtin_node_code not_found',
      'nodes.4.inputs.2.name duplicate',
      'nodes.4.inputs.0.variable_type_code type_mismatch',
      'nodes.4.inputs.1.name unknown_port',
      'nodes.4.inputs.2.variable_type_code unknown_code',
      'nodes.4.inputs.2.name unknown_port',
    ])
  })

  it('checks flow input and output bindings', () => {
    const body: GraphBody = {
      inputs: [{ name: 'topic', variable_type_code: 'text' }],
      outputs: [{ name: 'result', variable_type_code: 'image' }],
      nodes: [
        {
          label: 'a',
          type_code: 'builtin',
          builtin_node_code: 'text',
          config: {
            flow_inputs: { value: 'topic', missing: 'topic' },
            flow_outputs: { text: 'result' },
          },
          inputs: [{ name: 'value', variable_type_code: 'text' }],
          outputs: [{ name: 'text', variable_type_code: 'text' }],
        },
        {
          label: 'b',
          type_code: 'builtin',
          builtin_node_code: 'text',
          config: { flow_inputs: { value: 'nope' }, flow_outputs: 'result' },
          inputs: [{ name: 'value', variable_type_code: 'text' }],
        },
      ],
    }
    expect(fields(body)).toEqual([
      'nodes.0.config.flow_inputs.missing not_found',
      'nodes.0.config.flow_outputs.text type_mismatch',
      'nodes.1.config.flow_inputs.value not_found',
      'nodes.1.config.flow_outputs type',
    ])
  })

  it('finds loops, however long, and tells their route along the data', () => {
    const long = chain(20_000)
    expect(buildFlowGraph(long, context()).problems).toEqual([])
    const first = long.nodes?.[0]?.inputs?.[0]
    if (first) first.source_output_id = id(3 * 19_999 + 3)
    const problems = buildFlowGraph(long, context()).problems
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatchObject({ code: 'cycle' })

    const small = chain(2)
    const head = small.nodes?.[0]?.inputs?.[0]
    if (head) head.source_output_id = id(6)
    const [loop] = buildFlowGraph(small, context()).problems
    expect(loop?.message).toContain('"Step 0" (nodes.0) → node "Step 1" (nodes.1) → node "Step 0"')
  })

  it('keeps the timestamps of unchanged records and renews those of changed ones', () => {
    const before = buildFlowGraph(chain(2), { ...context(), now: '2026-01-01T00:00:00.000+00:00' })
    const existing: [string, StoredRecord][] = []
    for (const node of before.nodes) {
      existing.push([`node:${node.id}`, node])
      for (const input of node.inputs) existing.push([`node_input:${input.id}`, input])
      for (const output of node.outputs) existing.push([`node_output:${output.id}`, output])
    }
    const body = chain(2)
    const moved = body.nodes?.[1]
    if (moved) moved.x = 100
    const after = buildFlowGraph(body, context(existing))
    expect(after.nodes[0]).toEqual(before.nodes[0])
    expect(after.nodes[1]?.created_at).toBe('2026-01-01T00:00:00.000+00:00')
    expect(after.nodes[1]?.updated_at).toBe(NOW)
    expect(after.nodes[1]?.inputs).toEqual(before.nodes[1]?.inputs)
  })

  it('connects compatible types only', () => {
    expect(typesConnect('text', 'string')).toBe(true)
    expect(typesConnect('integer', 'seed')).toBe(true)
    expect(typesConnect('image', 'video')).toBe(false)
    expect(typesConnect('boolean', 'text')).toBe(false)
  })
})

describe('global authoring data', () => {
  it('builds every template as a valid flow over the catalog', () => {
    const templates = buildFlowTemplates(buildSampleWorkflows())
    expect(new Set(templates.map((t) => t.slug)).size).toBe(templates.length)
    for (const template of templates) {
      expect(template.nodes.length).toBeGreaterThan(0)
      expect(template.outputs.length).toBeGreaterThan(0)
      const bound = template.nodes.flatMap((node) =>
        Object.values((node.config.flow_outputs as Record<string, string> | undefined) ?? {}),
      )
      // Every flow output of a template is filled by some node.
      expect(bound.sort()).toEqual(template.outputs.map((o) => o.name).sort())
    }
  })

  it('gives built-in nodes ports typed with catalog codes', () => {
    expect(BUILTIN_NODES.map((n) => n.sort_order)).toEqual(BUILTIN_NODES.map((_, i) => i))
    for (const node of BUILTIN_NODES) {
      for (const port of [...node.inputs, ...node.outputs]) {
        expect(isCatalogCode('variable-types', port.variable_type_code)).toBe(true)
        if (port.validator_code) expect(isCatalogCode('validators', port.validator_code)).toBe(true)
      }
      for (const input of node.inputs) {
        if (input.behavior_code) {
          expect(isCatalogCode('variable-behaviors', input.behavior_code)).toBe(true)
        }
      }
    }
    expect(findBuiltinNode('branch')?.outputs.map((o) => o.name)).toEqual(['if_true', 'if_false'])
  })

  it('links solutions to existing templates and samples', () => {
    const templates = new Set(buildFlowTemplates(buildSampleWorkflows()).map((t) => t.id))
    const workflows = new Set(buildSampleWorkflows().map((w) => w.id))
    const { solutions, flowLinks, workflowLinks } = buildSolutions()
    expect(solutions.length).toBeGreaterThan(0)
    for (const link of flowLinks) expect(templates.has(link.flow_id)).toBe(true)
    for (const link of workflowLinks) expect(workflows.has(link.wfengine_workflow_id)).toBe(true)
  })
})

describe('workflow ports', () => {
  it('reads node ids from both forms of a workflow graph', () => {
    expect(
      workflowNodeIds({ '3': { class_type: 'Sampler' }, '9': { class_type: 'Save' } }),
    ).toEqual(new Set(['3', '9']))
    expect(workflowNodeIds({ nodes: [{ id: 4 }, { id: 7 }], links: [] })).toEqual(
      new Set(['4', '7']),
    )
    expect(workflowNodeIds({})).toBeUndefined()
    expect(workflowNodeIds({ version: 1 })).toBeUndefined()
  })

  it('checks names, codes and node ids', () => {
    const built = buildWorkflowPorts(
      {
        inputs: [
          { name: 'a', variable_type_code: 'text', wfengine_node_id: '1' },
          { name: 'a', variable_type_code: 'pixels', default_behavior_code: 'sometimes' },
        ],
        outputs: [{ name: 'b', variable_type_code: 'image', wfengine_node_id: '2' }],
      },
      {
        workflowId: FLOW,
        now: NOW,
        newId: () => id(1),
        existing: new Map(),
        workflowJson: { '1': { class_type: 'Load' } },
      },
    )
    expect(built.problems.map((p) => `${p.field} ${p.code}`)).toEqual([
      'inputs.1.name duplicate',
      'inputs.1.variable_type_code unknown_code',
      'inputs.1.default_behavior_code unknown_code',
      'outputs.0.wfengine_node_id not_found',
    ])
  })
})

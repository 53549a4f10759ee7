import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { FlowNode, Model } from '../../src-shared/api'
import {
  canonicalJson,
  LAYOUT_FIELDS,
  memoryCatalog,
  nodeCacheKey,
  parseFlowDocument,
  planFlow,
  validateFlow,
} from '../../src-main/executor/validate'
import type { FlowDocument, MediaRef } from '../../src-main/executor/types'

/**
 * Properties of validation and planning on random graphs. Every node runs one model, RELAY,
 * with six optional text inputs and one text output, so any wiring of them type-checks and the
 * only problems are the ones a property adds on purpose.
 */

const RUNS = 100
const STAMP = '2026-03-01T00:00:00.000+00:00'
const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const RELAY = u(900)
const INPUTS = ['in0', 'in1', 'in2', 'in3', 'in4', 'in5']
/** Edges of the random DAG use in0…in3; in4 takes an added back edge, in5 a retry edge. */
const BACK_INPUT = 'in4'
const RETRY_INPUT = 'in5'

const relay: Model = {
  id: RELAY,
  org_id: null,
  model_creator_id: null,
  slug: 'test/relay',
  name: 'Relay',
  description: null,
  version: '1',
  is_public: true,
  is_open_source: false,
  icon_url: null,
  cover_url: null,
  category_code: null,
  status_code: null,
  family_id: null,
  family_variant_code: null,
  param_count: null,
  architecture: null,
  license_code: null,
  max_resolution: null,
  lora_support: false,
  fine_tuning: false,
  supports_streaming: false,
  paper_url: null,
  github_url: null,
  is_official: false,
  availability_status: null,
  seo: null,
  notable_features: [],
  content: null,
  pricing_note: null,
  created_by: null,
  created_at: STAMP,
  updated_at: STAMP,
  deleted_at: null,
  deleted_by: null,
  inputs: INPUTS.map((name, index) => ({
    id: u(910 + index),
    model_id: RELAY,
    name,
    display_name: null,
    description: null,
    variable_type_code: 'text',
    default_behavior_code: 'omit',
    validator_code: null,
    validator_attrs: null,
    is_required: false,
    default_value: null,
    sort_order: index,
    is_featured: false,
    created_at: STAMP,
    updated_at: STAMP,
  })),
  outputs: [
    {
      id: u(920),
      model_id: RELAY,
      name: 'out',
      display_name: null,
      description: null,
      variable_type_code: 'text',
      validator_code: null,
      validator_attrs: null,
      sort_order: 0,
      created_at: STAMP,
      updated_at: STAMP,
    },
  ],
  pricing: [],
}

const catalog = memoryCatalog({ models: [relay] })

/**
 * A random DAG: node r (its rank) is fed by up to four nodes of lower rank. The document lists
 * the nodes in a shuffled order, so that the flow's order tells nothing about the data's.
 */
interface Dag {
  size: number
  /** By rank: the ranks feeding it. */
  feeders: number[][]
  /** Document position → rank. */
  placement: number[]
}

const dagArbitrary: fc.Arbitrary<Dag> = fc.integer({ min: 1, max: 24 }).chain((size) =>
  fc.record({
    size: fc.constant(size),
    feeders: fc.tuple(
      ...Array.from({ length: size }, (_, rank) =>
        rank === 0
          ? fc.constant<number[]>([])
          : fc.uniqueArray(fc.integer({ min: 0, max: rank - 1 }), { maxLength: 4 }),
      ),
    ),
    placement: fc.shuffledSubarray(
      Array.from({ length: size }, (_, rank) => rank),
      { minLength: size, maxLength: size },
    ),
  }),
)

const nodeId = (rank: number) => u(1000 + rank)
const outputId = (rank: number) => u(5000 + rank)

interface Extra {
  /** [from rank, to rank]: an edge into the `in4` input of `to`. */
  back?: [number, number]
  /** [gate rank, node rank]: a retry edge into the `in5` input of the node. */
  retries?: [number, number][]
}

function flowOf(dag: Dag, extra: Extra = {}): FlowDocument {
  const nodes = dag.placement.map((rank) => {
    const inputs: Record<string, unknown>[] = (dag.feeders[rank] ?? []).map((from, j) => ({
      id: u(10_000 + rank * 10 + j),
      name: INPUTS[j],
      variable_type_code: 'text',
      source_output_id: outputId(from),
    }))
    if (extra.back?.[1] === rank) {
      inputs.push({
        id: u(10_000 + rank * 10 + 4),
        name: BACK_INPUT,
        variable_type_code: 'text',
        source_output_id: outputId(extra.back[0]),
      })
    }
    const retry = extra.retries?.find(([, to]) => to === rank)
    if (retry) {
      inputs.push({
        id: u(10_000 + rank * 10 + 5),
        name: RETRY_INPUT,
        variable_type_code: 'text',
        value: 'first try',
        retry_source_output_id: outputId(retry[0]),
      })
    }
    return {
      id: nodeId(rank),
      label: `n${rank}`,
      type_code: 'model',
      model_id: RELAY,
      inputs,
      outputs: [{ id: outputId(rank), name: 'out', variable_type_code: 'text' }],
    }
  })
  const parsed = parseFlowDocument({ id: u(1), name: 'Random', nodes })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.flow
}

/** [from, to] ranks of every edge, back edge included. */
function edgesOf(dag: Dag, extra: Extra = {}): [number, number][] {
  const edges = dag.feeders.flatMap((froms, to) =>
    froms.map((from): [number, number] => [from, to]),
  )
  if (extra.back) edges.push(extra.back)
  return edges
}

/** What `ranks` reach along `edges`, by repeating one step until nothing is added. */
function naiveClosure(ranks: Iterable<number>, edges: readonly [number, number][]): Set<number> {
  const reached = new Set(ranks)
  for (let grew = true; grew;) {
    grew = false
    for (const [from, to] of edges) {
      if (reached.has(from) && !reached.has(to)) {
        reached.add(to)
        grew = true
      }
    }
  }
  return reached
}

const rankOf = (id: string) => Number(id.slice(-12)) - 1000

/** A random DAG with a duration for each node, by rank. */
const withDurations = dagArbitrary.chain((dag) =>
  fc.record({
    dag: fc.constant(dag),
    durations: fc.array(fc.integer({ min: 0, max: 1000 }), {
      minLength: dag.size,
      maxLength: dag.size,
    }),
  }),
)

describe('validation and planning of random graphs', () => {
  it('accepts every random DAG, and orders it along every edge', () => {
    fc.assert(
      fc.property(dagArbitrary, (dag) => {
        const flow = flowOf(dag)
        expect(validateFlow(flow, catalog)).toEqual([])
        const result = planFlow(flow, catalog)
        if (!result.ok) throw new Error('not planned')
        const position = new Map(result.plan.order.map((id, index) => [rankOf(id), index]))
        expect(position.size).toBe(dag.size)
        for (const [from, to] of edgesOf(dag)) {
          expect(position.get(from) as number).toBeLessThan(position.get(to) as number)
        }
      }),
      { numRuns: RUNS },
    )
  })

  it('reports exactly one loop for an added back edge, naming nodes along it', () => {
    const withBack = dagArbitrary.chain((dag) =>
      fc.integer({ min: 0, max: dag.size - 1 }).chain((to) => {
        // The back edge goes from a node that `to` reaches (itself included) back to `to`.
        const reached = [...naiveClosure([to], edgesOf(dag))]
        return fc
          .constantFrom(...reached)
          .map((from) => ({ dag, back: [from, to] as [number, number] }))
      }),
    )
    fc.assert(
      fc.property(withBack, ({ dag, back }) => {
        const extra = { back }
        const problems = validateFlow(flowOf(dag, extra), catalog)
        expect(problems.map((p) => p.code)).toEqual(['CYCLE'])
        const loop = (problems[0]?.nodeIds ?? []).map(rankOf)
        const [from, to] = back
        expect(loop).toContain(from)
        expect(loop).toContain(to)
        expect(new Set(loop).size).toBe(loop.length)
        // Each node on the loop feeds the next one, and the last feeds the first.
        const edges = new Set(edgesOf(dag, extra).map(([a, b]) => `${a}>${b}`))
        loop.forEach((rank, index) => {
          const following = loop[(index + 1) % loop.length] as number
          expect(edges.has(`${rank}>${following}`)).toBe(true)
        })
        expect(planFlow(flowOf(dag, extra), catalog).ok).toBe(false)
      }),
      { numRuns: RUNS },
    )
  })

  it('never counts retry edges as a loop, and accepts them when they point back', () => {
    const withRetries = dagArbitrary.chain((dag) =>
      fc.record({
        dag: fc.constant(dag),
        pairs: fc.uniqueArray(
          fc.tuple(
            fc.integer({ min: 0, max: dag.size - 1 }),
            fc.integer({ min: 0, max: dag.size - 1 }),
          ),
          { maxLength: dag.size, selector: ([, to]) => to },
        ),
      }),
    )
    fc.assert(
      fc.property(withRetries, ({ dag, pairs }) => {
        const edges = edgesOf(dag)
        const problems = validateFlow(flowOf(dag, { retries: pairs }), catalog)
        expect(problems.filter((p) => p.code === 'CYCLE')).toEqual([])
        // Backward ones (the gate depends on the node it sends back to) are simply valid.
        const backward = pairs.filter(([gate, to]) => naiveClosure([to], edges).has(gate))
        const flow = flowOf(dag, { retries: backward })
        expect(validateFlow(flow, catalog)).toEqual([])
        const result = planFlow(flow, catalog)
        if (!result.ok) throw new Error('not planned')
        expect(result.plan.retries).toHaveLength(backward.length)
        for (const retry of result.plan.retries) {
          const gate = rankOf(retry.gateNodeId)
          const to = rankOf(retry.nodeId)
          const between = [...naiveClosure([to], edges)].filter((rank) =>
            naiveClosure([rank], edges).has(gate),
          )
          expect(retry.loop.map(rankOf).sort((a, b) => a - b)).toEqual(
            between.sort((a, b) => a - b),
          )
        }
      }),
      { numRuns: RUNS },
    )
  })

  it('says a node and everything it feeds re-runs after an edit, as a naive closure does', () => {
    const withEdits = dagArbitrary.chain((dag) =>
      fc.record({
        dag: fc.constant(dag),
        edited: fc.uniqueArray(fc.integer({ min: 0, max: dag.size - 1 }), { maxLength: 4 }),
      }),
    )
    fc.assert(
      fc.property(withEdits, ({ dag, edited }) => {
        const result = planFlow(flowOf(dag), catalog)
        if (!result.ok) throw new Error('not planned')
        const rerun = [...result.plan.downstreamOf(edited.map(nodeId))].map(rankOf)
        const expected = naiveClosure(edited, edgesOf(dag))
        expect(new Set(rerun)).toEqual(expected)
        expect(rerun).toHaveLength(expected.size)
        const reversedEdges = edgesOf(dag).map(([a, b]): [number, number] => [b, a])
        expect(new Set([...result.plan.upstreamOf(edited.map(nodeId))].map(rankOf))).toEqual(
          naiveClosure(edited, reversedEdges),
        )
      }),
      { numRuns: RUNS },
    )
  })

  it('finds a critical path no shorter than any chain of the DAG', () => {
    fc.assert(
      fc.property(withDurations, ({ dag, durations }) => {
        const result = planFlow(flowOf(dag), catalog)
        if (!result.ok) throw new Error('not planned')
        const duration = (node: FlowNode) => durations[rankOf(node.id)] ?? 0
        const path = result.plan.criticalPath(duration)
        // Longest finish by rank, the simple way: ranks already follow the edges.
        const finish = durations.map(() => 0)
        for (let rank = 0; rank < dag.size; rank++) {
          const start = Math.max(0, ...(dag.feeders[rank] ?? []).map((from) => finish[from] ?? 0))
          finish[rank] = start + (durations[rank] ?? 0)
        }
        expect(path.length).toBe(Math.max(...finish))
        const ranks = path.nodeIds.map(rankOf)
        expect(ranks.reduce((sum, rank) => sum + (durations[rank] ?? 0), 0)).toBe(path.length)
        const edges = new Set(edgesOf(dag).map(([a, b]) => `${a}>${b}`))
        for (let index = 1; index < ranks.length; index++) {
          expect(edges.has(`${ranks[index - 1]}>${ranks[index]}`)).toBe(true)
        }
      }),
      { numRuns: RUNS },
    )
  })
  it('gives each node the longest chain from it to the end, the longest one being the critical path', () => {
    fc.assert(
      fc.property(withDurations, ({ dag, durations }) => {
        const result = planFlow(flowOf(dag), catalog)
        if (!result.ok) throw new Error('not planned')
        const duration = (node: FlowNode) => durations[rankOf(node.id)] ?? 0
        const tails = result.plan.tailLengths(duration)
        // Backwards by rank, the simple way: a node's consumers all have higher ranks.
        const expected = durations.map(() => 0)
        for (let rank = dag.size - 1; rank >= 0; rank--) {
          const consumers = dag.feeders.flatMap((froms, to) => (froms.includes(rank) ? [to] : []))
          expected[rank] =
            (durations[rank] ?? 0) + Math.max(0, ...consumers.map((to) => expected[to] ?? 0))
        }
        expect(tails.size).toBe(dag.size)
        for (const [id, tail] of tails) expect(tail).toBe(expected[rankOf(id)])
        expect(Math.max(...tails.values())).toBe(result.plan.criticalPath(duration).length)
      }),
      { numRuns: RUNS },
    )
  })
})

// ---- Cache keys.

const sha = fc.stringMatching(/^[0-9a-f]{64}$/)
const media = (hash: string, url: string): MediaRef => ({
  kind: 'media',
  sha256: hash,
  content_type: 'image/png',
  url,
})

/** Input values: any JSON, with media files among them. */
const inputsArbitrary = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.tuple(sha, fc.webUrl()).map(([hash, url]) => media(hash, url)),
  ),
  { maxKeys: 6 },
)

const configArbitrary = fc.dictionary(
  fc.string({ maxLength: 8 }).filter((key) => !isIgnoredConfig(key)),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 4 },
)

function isIgnoredConfig(key: string): boolean {
  return (
    (LAYOUT_FIELDS as readonly string[]).includes(key) ||
    ['flow_inputs', 'flow_outputs'].includes(key)
  )
}

/** The same value with every object's keys in reverse order and every media file at a new URL. */
function rewritten(value: unknown, salt: string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewritten(item, salt))
  if (typeof value !== 'object' || value === null) return value
  const record = value as Record<string, unknown>
  if (record.kind === 'media' && typeof record.sha256 === 'string') {
    return { ...record, url: `https://elsewhere.example/${salt}?expires=1` }
  }
  return Object.fromEntries(
    Object.keys(record)
      .reverse()
      .map((key) => [key, rewritten(record[key], salt)]),
  )
}

function nodeWith(config: Record<string, unknown>): FlowNode {
  const flow = parseFlowDocument({
    id: u(1),
    name: 'Key',
    nodes: [{ id: u(2), label: 'A', type_code: 'model', model_id: RELAY, config }],
  })
  if (!flow.ok) throw new Error(JSON.stringify(flow.problems))
  return flow.flow.nodes[0] as FlowNode
}

describe('node cache keys', () => {
  it('do not change with key order, layout, or the URL of the same media', () => {
    fc.assert(
      fc.property(
        inputsArbitrary,
        configArbitrary,
        fc.string(),
        fc.record({
          x: fc.double({ noNaN: true }),
          y: fc.double({ noNaN: true }),
          width: fc.double({ min: 1, max: 2000, noNaN: true }),
          collapsed: fc.boolean(),
          label: fc.string(),
          subtitle: fc.option(fc.string(), { nil: null }),
        }),
        (inputs, config, salt, layout) => {
          const node = nodeWith(config)
          const key = nodeCacheKey(node, inputs, 'v1')
          const moved: FlowNode = {
            ...node,
            ...layout,
            config: { ...(rewritten(config, salt) as Record<string, unknown>), ...layout },
          }
          expect(
            nodeCacheKey(moved, rewritten(inputs, salt) as Record<string, unknown>, 'v1'),
          ).toBe(key)
        },
      ),
      { numRuns: RUNS },
    )
  })

  it('change when an input value, the target or the config changes', () => {
    fc.assert(
      fc.property(
        inputsArbitrary,
        configArbitrary,
        fc.string({ maxLength: 8 }),
        fc.jsonValue({ maxDepth: 2 }),
        fc.string({ maxLength: 8 }).filter((key) => !isIgnoredConfig(key)),
        fc.jsonValue({ maxDepth: 2 }),
        (inputs, config, inputName, inputValue, configKey, configValue) => {
          const node = nodeWith(config)
          const key = nodeCacheKey(node, inputs, 'v1')
          const changedInputs = { ...inputs, [inputName]: inputValue }
          if (canonicalJson(changedInputs) !== canonicalJson(inputs)) {
            expect(nodeCacheKey(node, changedInputs, 'v1')).not.toBe(key)
          }
          expect(nodeCacheKey(node, inputs, 'v2')).not.toBe(key)
          expect(nodeCacheKey({ ...node, model_id: u(901) }, inputs, 'v1')).not.toBe(key)
          expect(
            nodeCacheKey(
              { ...node, type_code: 'builtin', builtin_node_code: 'text', model_id: null },
              inputs,
              'v1',
            ),
          ).not.toBe(key)
          const changedConfig = { ...config, [configKey]: configValue }
          if (canonicalJson(changedConfig) !== canonicalJson(config)) {
            expect(nodeCacheKey({ ...node, config: changedConfig }, inputs, 'v1')).not.toBe(key)
          }
        },
      ),
      { numRuns: RUNS },
    )
  })
})

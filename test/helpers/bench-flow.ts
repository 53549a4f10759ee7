import { randomUUID } from 'node:crypto'
import { parseFlowDocument, type FlowDocument } from '../../src-main/executor'

/**
 * A random flow for benchmarks, of `nodes` nodes: half model nodes (`modelId`, 64×64, a seed
 * each, so none repeats another's work), half `prompt_template` joins. Model node i takes its
 * prompt from join i, and join i takes the images of 1–3 earlier model nodes (picked by a
 * seeded PRNG) as inputs, which makes them its dependencies, and the text of the first one's
 * join. The same graph as the executor benchmark's, made by the same rules.
 */
export function randomFlow(nodes: number, modelId: string, seed = 20_261_121): FlowDocument {
  const size = Math.max(1, Math.floor(nodes / 2))
  const random = prng(seed)
  const parents: number[][] = []
  for (let i = 0; i < size; i++) {
    const want = Math.min(i, 1 + Math.floor(random() * 3))
    const picked = new Set<number>()
    while (picked.size < want) picked.add(Math.floor(random() * i))
    parents.push([...picked])
  }
  const port = (name: string, type: string, fields: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    name,
    variable_type_code: type,
    source_output_id: null,
    value: null,
    ...fields,
  })
  const joinOut = parents.map(() => randomUUID())
  const modelOut = parents.map(() => randomUUID())
  const body: unknown[] = []
  parents.forEach((ups, i) => {
    const [first] = ups
    const text = `n${i}.`
    body.push({
      id: randomUUID(),
      label: `join ${i}`,
      slug: `join-${i}`,
      type_code: 'builtin',
      builtin_node_code: 'prompt_template',
      config: {},
      inputs: [
        port('template', 'text', { value: first === undefined ? text : `${text}{a}` }),
        ...(first === undefined ? [] : [port('a', 'text', { source_output_id: joinOut[first] })]),
        ...ups.map((up, k) => port(`d${k}`, 'image', { source_output_id: modelOut[up] })),
      ],
      outputs: [{ id: joinOut[i], name: 'prompt', variable_type_code: 'text' }],
    })
    body.push({
      id: randomUUID(),
      label: `model ${i}`,
      slug: `model-${i}`,
      type_code: 'model',
      model_id: modelId,
      config: {},
      inputs: [
        port('prompt', 'text', { source_output_id: joinOut[i] }),
        port('width', 'integer', { value: 64 }),
        port('height', 'integer', { value: 64 }),
        port('seed', 'seed', { value: i }),
      ],
      outputs: [{ id: modelOut[i], name: 'image', variable_type_code: 'image' }],
    })
  })
  const id = randomUUID()
  const parsed = parseFlowDocument({
    id,
    name: `Bench flow ${id.slice(0, 8)}`,
    inputs: [],
    outputs: [],
    nodes: body,
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems.slice(0, 5)))
  return parsed.flow
}

/** mulberry32: small, seeded, good enough to pick edges. */
function prng(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

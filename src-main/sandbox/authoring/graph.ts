import type {
  FlowGraph,
  FlowInput,
  FlowNode,
  FlowNodeCreate,
  FlowNodeInput,
  FlowNodeOutput,
  FlowOutput,
} from '../../../src-shared/api'
import type { FieldProblem } from '../errors'
import { isCatalogCode } from '../models'
import { firstFreeSlug, slugify } from './slug'

/**
 * Turns the nested graph of a flow creation or graph replacement into the records the service
 * stores, and finds everything wrong with it at once (each problem names its field path, e.g.
 * `nodes.2.inputs.0.source_output_id`). Pure: what it needs to know about models, built-ins,
 * workflows and other flows comes from a resolver.
 *
 * How a flow is wired, which the executor follows:
 * - A node input is fed by at most one of: an edge (`source_output_id`, a node output of the same
 *   flow), a flow input (the node's `config.flow_inputs`, `{ "<node input name>": "<flow input
 *   name>" }`), or its literal `value`. `retry_source_output_id` names a node output that feeds
 *   the input when the node is run again (e.g. after an evaluation failed); it may point
 *   backwards, edges may not: the edges form no loop.
 * - A flow output is filled by the node output that `config.flow_outputs` of its node maps to it,
 *   `{ "<node output name>": "<flow output name>" }`; at most one node output per flow output.
 * - Nodes say what they run by `type_code`: `model` (`model_id`), `builtin`
 *   (`builtin_node_code`), `wfengine_workflow` (`wfengine_workflow_id`) or `sub_flow`
 *   (`sub_flow_id`). Their ports are named like the ports of what they run (the model's inputs
 *   and outputs, the sub-flow's flow inputs and outputs, …), with a compatible type.
 */

/** A port of what a node runs: a model input, a built-in's output, a sub-flow's flow input, … */
export interface Port {
  name: string
  display_name: string | null
  variable_type_code: string
  validator_code: string | null
  validator_attrs: { [key: string]: unknown } | null
  is_required?: boolean
  default_value?: unknown
  behavior_code?: string | null
}

/** What a node runs, as far as wiring it is concerned. */
export interface NodeTarget {
  /** Becomes the node's subtitle, e.g. the model's slug. */
  title: string
  inputs: readonly Port[]
  outputs: readonly Port[]
  /** Inputs besides the listed ones are allowed (a prompt template's placeholders). */
  otherInputs?: boolean
  /** Micro-credits one run is expected to cost with these literal input values. */
  estimate?: (values: Record<string, unknown>) => number
  /** Sub-flows only: the flows that this one runs as its own sub-flows. */
  subFlowIds?: readonly string[]
}

export interface GraphResolver {
  model: (id: string) => NodeTarget | undefined
  builtin: (code: string) => NodeTarget | undefined
  workflow: (id: string) => NodeTarget | undefined
  flow: (id: string) => NodeTarget | undefined
}

export type RecordKind = 'node' | 'node_input' | 'node_output' | 'input' | 'output'

/** A record as stored before, by `${kind}:${id}`: kept records keep their timestamps. */
export interface StoredRecord {
  id: string
  created_at: string
  updated_at: string
}

export interface GraphContext {
  flowId: string
  now: string
  newId: () => string
  existing: ReadonlyMap<string, StoredRecord>
  resolver: GraphResolver
}

/** A flow node as stored: inside the flow and in `flow_nodes`, without the embedded flow. */
export type StoredNode = Omit<FlowNode, 'flow'>

export interface BuiltGraph {
  nodes: StoredNode[]
  inputs: FlowInput[]
  outputs: FlowOutput[]
  /** Micro-credits a run of the flow is expected to cost, from its models and sub-flows. */
  estimatedMicro: number
  problems: FieldProblem[]
}

export type GraphBody = Partial<FlowGraph>

export const NODE_TYPE_CODES = ['model', 'builtin', 'wfengine_workflow', 'sub_flow'] as const
type NodeTypeCode = (typeof NODE_TYPE_CODES)[number]

const REFERENCE_FIELD = {
  model: 'model_id',
  builtin: 'builtin_node_code',
  wfengine_workflow: 'wfengine_workflow_id',
  sub_flow: 'sub_flow_id',
} as const satisfies Record<NodeTypeCode, string>

/** Types that can feed one another: text-like, number-like, then each media type on its own. */
const TYPE_FAMILY: Record<string, string> = {
  text: 'text',
  string: 'text',
  enum: 'text',
  integer: 'number',
  number: 'number',
  seed: 'number',
  boolean: 'boolean',
  image: 'image',
  video: 'video',
}

export function typesConnect(from: string, to: string): boolean {
  return from === to || (TYPE_FAMILY[from] !== undefined && TYPE_FAMILY[from] === TYPE_FAMILY[to])
}

const isNodeType = (code: string): code is NodeTypeCode =>
  (NODE_TYPE_CODES as readonly string[]).includes(code)

interface NodeOutputRef {
  nodeIndex: number
  output: FlowNodeOutput
}

export function buildFlowGraph(body: GraphBody, context: GraphContext): BuiltGraph {
  const problems: FieldProblem[] = []
  const problem = (field: string, code: string, message: string) => {
    problems.push({ field, code, message })
  }

  // Ids first: edges may point at objects anywhere in the request.
  const seenIds = new Map<string, string>()
  const idOf = (given: string | undefined, path: string): string => {
    if (given === undefined) return context.newId()
    const earlier = seenIds.get(given)
    if (earlier) {
      problem(
        `${path}.id`,
        'duplicate',
        `${path}.id repeats the id of ${earlier}; every node, input and output of a flow needs its own id.`,
      )
    } else {
      seenIds.set(given, path)
    }
    return given
  }

  const stamp = <T extends object>(
    kind: RecordKind,
    id: string,
    build: (createdAt: string, updatedAt: string) => T,
  ): T => {
    const before = context.existing.get(`${kind}:${id}`)
    if (!before) return build(context.now, context.now)
    const kept = build(before.created_at, before.updated_at)
    // An untouched record keeps its updated_at, so incremental sync does not fetch it again.
    return JSON.stringify(kept) === JSON.stringify(before)
      ? kept
      : build(before.created_at, context.now)
  }

  const checkCode = (
    catalog: 'variable-types' | 'validators' | 'variable-behaviors',
    code: string | null | undefined,
    field: string,
  ) => {
    if (code === undefined || code === null || isCatalogCode(catalog, code)) return
    problem(
      field,
      'unknown_code',
      `${field} ${JSON.stringify(code)} is not a code of /v1/catalogs/${catalog}; use one listed there.`,
    )
  }

  const uniqueNames = (items: readonly { name: string }[], path: string, what: string) => {
    const seen = new Map<string, number>()
    items.forEach((item, index) => {
      const first = seen.get(item.name)
      if (first === undefined) seen.set(item.name, index)
      else {
        problem(
          `${path}.${index}.name`,
          'duplicate',
          `${path}.${index}.name ${JSON.stringify(item.name)} is already the name of ${path}.${first}; ${what} names must be unique.`,
        )
      }
    })
  }

  // Flow inputs and outputs.
  const inputBodies = body.inputs ?? []
  const outputBodies = body.outputs ?? []
  uniqueNames(inputBodies, 'inputs', 'flow input')
  uniqueNames(outputBodies, 'outputs', 'flow output')
  const inputs: FlowInput[] = inputBodies.map((item, index) => {
    const path = `inputs.${index}`
    checkCode('variable-types', item.variable_type_code, `${path}.variable_type_code`)
    checkCode('validators', item.validator_code, `${path}.validator_code`)
    const id = idOf(item.id, path)
    return stamp('input', id, (created_at, updated_at) => ({
      id,
      flow_id: context.flowId,
      name: item.name,
      display_name: item.display_name ?? null,
      description: item.description ?? null,
      variable_type_code: item.variable_type_code,
      validator_code: item.validator_code ?? null,
      validator_attrs: item.validator_attrs ?? null,
      is_required: item.is_required ?? false,
      default_value: item.default_value ?? null,
      sort_order: item.sort_order ?? 0,
      created_at,
      updated_at,
    }))
  })
  const outputs: FlowOutput[] = outputBodies.map((item, index) => {
    const path = `outputs.${index}`
    checkCode('variable-types', item.variable_type_code, `${path}.variable_type_code`)
    checkCode('validators', item.validator_code, `${path}.validator_code`)
    const id = idOf(item.id, path)
    return stamp('output', id, (created_at, updated_at) => ({
      id,
      flow_id: context.flowId,
      name: item.name,
      display_name: item.display_name ?? null,
      description: item.description ?? null,
      variable_type_code: item.variable_type_code,
      validator_code: item.validator_code ?? null,
      validator_attrs: item.validator_attrs ?? null,
      sort_order: item.sort_order ?? 0,
      created_at,
      updated_at,
    }))
  })

  // Nodes: what each runs, then its ports.
  const nodeBodies = body.nodes ?? []
  const slugs = new Set<string>()
  nodeBodies.forEach((node, index) => {
    if (node.slug === undefined) return
    if (slugs.has(node.slug)) {
      problem(
        `nodes.${index}.slug`,
        'duplicate',
        `nodes.${index}.slug ${JSON.stringify(node.slug)} is used by another node of this flow; node slugs must be unique within a flow.`,
      )
    }
    slugs.add(node.slug)
  })
  const targets = nodeBodies.map((node, index) => resolveTarget(node, `nodes.${index}`))

  function resolveTarget(node: FlowNodeCreate, path: string): NodeTarget | undefined {
    if (!isNodeType(node.type_code)) {
      problem(
        `${path}.type_code`,
        'unknown_code',
        `${path}.type_code ${JSON.stringify(node.type_code)} is not a node type; use one of ${NODE_TYPE_CODES.join(', ')}.`,
      )
      return undefined
    }
    const wanted = REFERENCE_FIELD[node.type_code]
    for (const field of Object.values(REFERENCE_FIELD)) {
      if (field !== wanted && node[field] !== undefined && node[field] !== null) {
        problem(
          `${path}.${field}`,
          'not_allowed',
          `${path}.${field} must be left out on a ${node.type_code} node, which runs ${wanted}.`,
        )
      }
    }
    const reference = node[wanted]
    if (reference === undefined || reference === null) {
      problem(
        `${path}.${wanted}`,
        'required',
        `${path}.${wanted} is required on a ${node.type_code} node.`,
      )
      return undefined
    }
    const field = `${path}.${wanted}`
    switch (node.type_code) {
      case 'model': {
        const target = context.resolver.model(reference)
        if (!target) {
          problem(
            field,
            'not_found',
            `${field} names no model of the catalog; pick one from GET /v1/models.`,
          )
        }
        return target
      }
      case 'builtin': {
        const target = context.resolver.builtin(reference)
        if (!target) {
          problem(
            field,
            'not_found',
            `${field} ${JSON.stringify(reference)} is not a built-in node; pick one from GET /v1/builtin-nodes.`,
          )
        }
        return target
      }
      case 'wfengine_workflow': {
        const target = context.resolver.workflow(reference)
        if (!target) {
          problem(
            field,
            'not_found',
            `${field} names no workflow of this organization; pick one from GET /v1/comfyui-workflows.`,
          )
        }
        return target
      }
      case 'sub_flow': {
        if (reference === context.flowId) {
          problem(
            field,
            'cycle',
            `${field} is this flow itself; a flow cannot run itself as a sub-flow.`,
          )
          return undefined
        }
        const target = context.resolver.flow(reference)
        if (!target) {
          problem(
            field,
            'not_found',
            `${field} names no flow of this organization; pick one from GET /v1/flows.`,
          )
        } else if (runsFlow(target, context.flowId)) {
          problem(
            field,
            'cycle',
            `${field} runs this flow again through its own sub-flows; a flow cannot contain itself.`,
          )
        }
        return target
      }
    }
  }

  function runsFlow(target: NodeTarget, flowId: string): boolean {
    const seen = new Set<string>()
    const pending = [...(target.subFlowIds ?? [])]
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      if (next === flowId) return true
      if (seen.has(next)) continue
      seen.add(next)
      pending.push(...(context.resolver.flow(next)?.subFlowIds ?? []))
    }
    return false
  }

  const checkPort = (
    ports: readonly Port[] | undefined,
    name: string,
    type: string,
    field: string,
    what: string,
    title: string,
    open: boolean,
  ): Port | undefined => {
    if (!ports) return undefined
    const port = ports.find((p) => p.name === name)
    if (!port) {
      if (!open) {
        problem(
          `${field}.name`,
          'unknown_port',
          `${field}.name ${JSON.stringify(name)} is not ${what} of ${title}; use one of: ${ports.map((p) => p.name).join(', ') || '(none)'}.`,
        )
      }
      return undefined
    }
    if (!typesConnect(type, port.variable_type_code)) {
      problem(
        `${field}.variable_type_code`,
        'type_mismatch',
        `${field}.variable_type_code is ${type}, but ${JSON.stringify(name)} of ${title} is ${port.variable_type_code}.`,
      )
    }
    return port
  }

  const usedSlugs = new Set(slugs)
  const nodes: StoredNode[] = nodeBodies.map((node, index) => {
    const path = `nodes.${index}`
    const target = targets[index]
    const id = idOf(node.id, path)
    const nodeInputs = node.inputs ?? []
    const nodeOutputs = node.outputs ?? []
    uniqueNames(nodeInputs, `${path}.inputs`, 'node input')
    uniqueNames(nodeOutputs, `${path}.outputs`, 'node output')
    const slug =
      node.slug ??
      firstFreeSlug(slugify(node.label, 'node'), (candidate) => usedSlugs.has(candidate))
    usedSlugs.add(slug)

    const inputRecords: FlowNodeInput[] = nodeInputs.map((item, j) => {
      const field = `${path}.inputs.${j}`
      checkCode('variable-types', item.variable_type_code, `${field}.variable_type_code`)
      checkCode('validators', item.validator_code, `${field}.validator_code`)
      checkCode('variable-behaviors', item.behavior_code, `${field}.behavior_code`)
      const port = checkPort(
        target?.inputs,
        item.name,
        item.variable_type_code,
        field,
        'an input',
        target?.title ?? '',
        target?.otherInputs ?? false,
      )
      const inputId = idOf(item.id, field)
      return stamp('node_input', inputId, (created_at, updated_at) => ({
        id: inputId,
        flow_node_id: id,
        name: item.name,
        display_name: item.display_name ?? port?.display_name ?? null,
        variable_type_code: item.variable_type_code,
        validator_code: item.validator_code ?? port?.validator_code ?? null,
        validator_attrs: item.validator_attrs ?? port?.validator_attrs ?? null,
        is_required: item.is_required ?? port?.is_required ?? false,
        default_value: item.default_value ?? port?.default_value ?? null,
        sort_order: item.sort_order ?? 0,
        behavior_code: item.behavior_code ?? port?.behavior_code ?? null,
        value: item.value ?? null,
        source_output_id: item.source_output_id ?? null,
        connection_label: item.connection_label ?? null,
        connection_style_code: item.connection_style_code ?? null,
        retry_source_output_id: item.retry_source_output_id ?? null,
        created_at,
        updated_at,
      }))
    })
    const outputRecords: FlowNodeOutput[] = nodeOutputs.map((item, j) => {
      const field = `${path}.outputs.${j}`
      checkCode('variable-types', item.variable_type_code, `${field}.variable_type_code`)
      checkCode('validators', item.validator_code, `${field}.validator_code`)
      const port = checkPort(
        target?.outputs,
        item.name,
        item.variable_type_code,
        field,
        'an output',
        target?.title ?? '',
        false,
      )
      const outputId = idOf(item.id, field)
      return stamp('node_output', outputId, (created_at, updated_at) => ({
        id: outputId,
        flow_node_id: id,
        name: item.name,
        display_name: item.display_name ?? port?.display_name ?? null,
        variable_type_code: item.variable_type_code,
        validator_code: item.validator_code ?? port?.validator_code ?? null,
        validator_attrs: item.validator_attrs ?? port?.validator_attrs ?? null,
        sort_order: item.sort_order ?? 0,
        created_at,
        updated_at,
      }))
    })

    return stamp('node', id, (created_at, updated_at) => ({
      id,
      flow_id: context.flowId,
      slug,
      label: node.label,
      subtitle: target?.title ?? null,
      type_code: node.type_code,
      x: node.x ?? 0,
      y: node.y ?? 0,
      width: node.width ?? 220,
      config: node.config ?? {},
      collapsed: node.collapsed ?? false,
      model_id: node.model_id ?? null,
      builtin_node_code: node.builtin_node_code ?? null,
      wfengine_workflow_id: node.wfengine_workflow_id ?? null,
      sub_flow_id: node.sub_flow_id ?? null,
      created_at,
      updated_at,
      inputs: inputRecords,
      outputs: outputRecords,
    }))
  })

  // Wiring.
  const nodeOutputs = new Map<string, NodeOutputRef>()
  nodes.forEach((node, nodeIndex) => {
    for (const output of node.outputs) nodeOutputs.set(output.id, { nodeIndex, output })
  })
  const describeNode = (index: number) => {
    const node = nodes[index]
    return node ? `node ${JSON.stringify(node.label)} (nodes.${index})` : `nodes.${index}`
  }
  const feeders: { from: number; field: string }[][] = nodes.map(() => [])

  nodes.forEach((node, index) => {
    node.inputs.forEach((input, j) => {
      const field = `nodes.${index}.inputs.${j}`
      for (const key of ['source_output_id', 'retry_source_output_id'] as const) {
        const sourceId = input[key]
        if (sourceId === null) continue
        const source = nodeOutputs.get(sourceId)
        if (!source) {
          problem(
            `${field}.${key}`,
            'not_found',
            `${field}.${key} names no node output of this flow; point it at the id of an output in nodes[].outputs[].`,
          )
          continue
        }
        if (!typesConnect(source.output.variable_type_code, input.variable_type_code)) {
          problem(
            `${field}.${key}`,
            'type_mismatch',
            `${field}.${key} connects the ${source.output.variable_type_code} output ${JSON.stringify(source.output.name)} of ${describeNode(source.nodeIndex)} to a ${input.variable_type_code} input.`,
          )
        }
        if (key === 'source_output_id')
          feeders[index]?.push({ from: source.nodeIndex, field: `${field}.${key}` })
      }
      if (input.source_output_id !== null && input.value !== null) {
        problem(
          `${field}.value`,
          'conflict',
          `${field} is connected (source_output_id) and has a value; leave value null on a connected input.`,
        )
      }
    })
  })

  const flowOutputFedBy = new Map<string, string>()
  nodes.forEach((node, index) => {
    const path = `nodes.${index}.config`
    const bindings = (name: 'flow_inputs' | 'flow_outputs'): [string, unknown][] => {
      const value = node.config[name]
      if (value === undefined) return []
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        problem(
          `${path}.${name}`,
          'type',
          `${path}.${name} must be an object mapping the node's ${name === 'flow_inputs' ? 'input' : 'output'} names to flow ${name === 'flow_inputs' ? 'input' : 'output'} names.`,
        )
        return []
      }
      return Object.entries(value)
    }
    for (const [portName, flowName] of bindings('flow_inputs')) {
      const field = `${path}.flow_inputs.${portName}`
      const port = node.inputs.find((input) => input.name === portName)
      const flowInput =
        typeof flowName === 'string' ? inputs.find((i) => i.name === flowName) : undefined
      if (!port) {
        problem(
          field,
          'not_found',
          `${field}: this node has no input named ${JSON.stringify(portName)}; add it to the node's inputs first.`,
        )
      } else if (!flowInput) {
        problem(
          field,
          'not_found',
          `${field} must name one of the flow's inputs (${inputs.map((i) => i.name).join(', ') || 'none yet'}).`,
        )
      } else {
        if (port.source_output_id !== null) {
          problem(
            field,
            'conflict',
            `${field}: input ${JSON.stringify(portName)} is already connected (source_output_id); feed it from one place only.`,
          )
        }
        if (!typesConnect(flowInput.variable_type_code, port.variable_type_code)) {
          problem(
            field,
            'type_mismatch',
            `${field} feeds the ${flowInput.variable_type_code} flow input ${JSON.stringify(flowInput.name)} to a ${port.variable_type_code} input.`,
          )
        }
      }
    }
    for (const [portName, flowName] of bindings('flow_outputs')) {
      const field = `${path}.flow_outputs.${portName}`
      const port = node.outputs.find((output) => output.name === portName)
      const flowOutput =
        typeof flowName === 'string' ? outputs.find((o) => o.name === flowName) : undefined
      if (!port) {
        problem(
          field,
          'not_found',
          `${field}: this node has no output named ${JSON.stringify(portName)}; add it to the node's outputs first.`,
        )
      } else if (!flowOutput) {
        problem(
          field,
          'not_found',
          `${field} must name one of the flow's outputs (${outputs.map((o) => o.name).join(', ') || 'none yet'}).`,
        )
      } else {
        const earlier = flowOutputFedBy.get(flowOutput.name)
        if (earlier) {
          problem(
            field,
            'duplicate',
            `${field}: flow output ${JSON.stringify(flowOutput.name)} is already filled by ${earlier}; a flow output takes one node output.`,
          )
        }
        flowOutputFedBy.set(flowOutput.name, field)
        if (!typesConnect(port.variable_type_code, flowOutput.variable_type_code)) {
          problem(
            field,
            'type_mismatch',
            `${field} fills the ${flowOutput.variable_type_code} flow output ${JSON.stringify(flowOutput.name)} with a ${port.variable_type_code} output.`,
          )
        }
      }
    }
  })

  const loop = findLoop(feeders)
  if (loop) {
    const route = loop.nodes.map(describeNode).join(' → ')
    problem(
      loop.field,
      'cycle',
      `${loop.field} closes a loop (${route}); edges must not lead back to a node they start from. Use retry_source_output_id for a retry.`,
    )
  }

  let estimatedMicro = 0
  nodes.forEach((node, index) => {
    const estimate = targets[index]?.estimate
    if (!estimate) return
    const values: Record<string, unknown> = {}
    for (const input of node.inputs) {
      if (input.source_output_id === null && input.value !== null) values[input.name] = input.value
    }
    estimatedMicro += estimate(values)
  })

  return { nodes, inputs, outputs, estimatedMicro, problems }
}

/**
 * A loop among the edges, if any: `feeders[i]` lists the nodes feeding node i. Depth-first, with
 * an explicit stack so a long chain of nodes cannot overflow the call stack.
 */
function findLoop(
  feeders: readonly (readonly { from: number; field: string }[])[],
): { field: string; nodes: number[] } | undefined {
  const state = feeders.map(() => 0) // 0 unseen, 1 on the current path, 2 done
  for (let start = 0; start < feeders.length; start++) {
    if (state[start] !== 0) continue
    const path: { node: number; next: number }[] = [{ node: start, next: 0 }]
    state[start] = 1
    while (path.length > 0) {
      const top = path[path.length - 1]
      if (!top) break
      const edges = feeders[top.node] ?? []
      const edge = edges[top.next]
      if (!edge) {
        state[top.node] = 2
        path.pop()
        continue
      }
      top.next++
      if (state[edge.from] === 1) {
        const from = path.findIndex((step) => step.node === edge.from)
        // The walk goes against the data; the route is told along it.
        const route = [...path.slice(from).map((step) => step.node), edge.from].reverse()
        return { field: edge.field, nodes: route }
      }
      if (state[edge.from] === 0) {
        state[edge.from] = 1
        path.push({ node: edge.from, next: 0 })
      }
    }
  }
  return undefined
}

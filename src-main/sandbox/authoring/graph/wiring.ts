import type {
  FlowInput,
  FlowNodeInput,
  FlowNodeOutput,
  FlowOutput,
} from '../../../../src-shared/api'
import type { GraphBuild } from './build'
import { typesConnect } from './type-family'
import type { StoredNode } from './types'

/** The nodes feeding node i, each with the field of the edge: what the loop check walks. */
export type Feeders = { from: number; field: string }[][]

interface NodeOutputRef {
  nodeIndex: number
  output: FlowNodeOutput
}

/** How a message names a node: by its label and place, or by its place alone. */
const describeNode = (nodes: readonly StoredNode[], index: number) => {
  const node = nodes[index]
  return node ? `node ${JSON.stringify(node.label)} (nodes.${index})` : `nodes.${index}`
}

/**
 * Phase 5: the edges. Every `source_output_id` and `retry_source_output_id` must name an output
 * of this flow with a type that connects, and a connected input takes no literal value. Returns
 * who feeds whom (retries aside: they may point backwards) for the loop check.
 */
export function checkEdges(build: GraphBuild, nodes: readonly StoredNode[]): Feeders {
  const nodeOutputs = new Map<string, NodeOutputRef>()
  nodes.forEach((node, nodeIndex) => {
    for (const output of node.outputs) nodeOutputs.set(output.id, { nodeIndex, output })
  })
  const feeders: Feeders = nodes.map(() => [])
  nodes.forEach((node, index) => {
    node.inputs.forEach((input, j) => {
      const field = `nodes.${index}.inputs.${j}`
      for (const key of ['source_output_id', 'retry_source_output_id'] as const) {
        const sourceId = input[key]
        if (sourceId === null) continue
        const source = nodeOutputs.get(sourceId)
        if (!source) {
          build.problem(
            `${field}.${key}`,
            'not_found',
            `${field}.${key} names no node output of this flow; point it at the id of an output in nodes[].outputs[].`,
          )
          continue
        }
        if (!typesConnect(source.output.variable_type_code, input.variable_type_code)) {
          build.problem(
            `${field}.${key}`,
            'type_mismatch',
            `${field}.${key} connects the ${source.output.variable_type_code} output ${JSON.stringify(source.output.name)} of ${describeNode(nodes, source.nodeIndex)} to a ${input.variable_type_code} input.`,
          )
        }
        if (key === 'source_output_id')
          feeders[index]?.push({ from: source.nodeIndex, field: `${field}.${key}` })
      }
      if (input.source_output_id !== null && input.value !== null) {
        build.problem(
          `${field}.value`,
          'conflict',
          `${field} is connected (source_output_id) and has a value; leave value null on a connected input.`,
        )
      }
    })
  })
  return feeders
}

/**
 * Phase 6: the bindings to the flow's own ports. `config.flow_inputs` feeds node inputs from flow
 * inputs (not on top of an edge); `config.flow_outputs` fills each flow output from one node output
 * at most. Names and types must match.
 */
export function checkBindings(
  build: GraphBuild,
  nodes: readonly StoredNode[],
  inputs: readonly FlowInput[],
  outputs: readonly FlowOutput[],
) {
  // Flow output name → the binding that fills it, across all nodes.
  const flowOutputFedBy = new Map<string, string>()
  nodes.forEach((node, index) => {
    const at = { build, node, path: `nodes.${index}.config` }
    eachBinding(at, 'input', node.inputs, inputs, (field, port, flowInput) => {
      checkInputBinding(build, field, port, flowInput)
    })
    eachBinding(at, 'output', node.outputs, outputs, (field, port, flowOutput) => {
      checkOutputBinding(build, field, port, flowOutput, flowOutputFedBy)
    })
  })
}

/** The entries of `config.flow_inputs` or `config.flow_outputs`; a non-object is refused. */
function bindings(
  build: GraphBuild,
  node: StoredNode,
  path: string,
  name: 'flow_inputs' | 'flow_outputs',
): [string, unknown][] {
  const value = node.config[name]
  if (value === undefined) return []
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const side = name === 'flow_inputs' ? 'input' : 'output'
    build.problem(
      `${path}.${name}`,
      'type',
      `${path}.${name} must be an object mapping the node's ${side} names to flow ${side} names.`,
    )
    return []
  }
  return Object.entries(value)
}

/**
 * Calls `check` for each binding of `config.flow_inputs` or `config.flow_outputs` whose node port
 * and flow port both exist, in the order given; a name that finds neither is refused here.
 */
function eachBinding<N extends { name: string }, F extends { name: string }>(
  { build, node, path }: { build: GraphBuild; node: StoredNode; path: string },
  side: 'input' | 'output',
  nodePorts: readonly N[],
  flowPorts: readonly F[],
  check: (field: string, port: N, flowPort: F) => void,
) {
  const name = side === 'input' ? 'flow_inputs' : 'flow_outputs'
  for (const [portName, flowName] of bindings(build, node, path, name)) {
    const field = `${path}.${name}.${portName}`
    const port = nodePorts.find((candidate) => candidate.name === portName)
    const flowPort =
      typeof flowName === 'string'
        ? flowPorts.find((candidate) => candidate.name === flowName)
        : undefined
    if (!port) {
      build.problem(
        field,
        'not_found',
        `${field}: this node has no ${side} named ${JSON.stringify(portName)}; add it to the node's ${side}s first.`,
      )
    } else if (!flowPort) {
      build.problem(
        field,
        'not_found',
        `${field} must name one of the flow's ${side}s (${flowPorts.map((p) => p.name).join(', ') || 'none yet'}).`,
      )
    } else {
      check(field, port, flowPort)
    }
  }
}

/** A node input fed by a flow input: not also by an edge, and with a type that connects. */
function checkInputBinding(
  build: GraphBuild,
  field: string,
  port: FlowNodeInput,
  flowInput: FlowInput,
) {
  if (port.source_output_id !== null) {
    build.problem(
      field,
      'conflict',
      `${field}: input ${JSON.stringify(port.name)} is already connected (source_output_id); feed it from one place only.`,
    )
  }
  if (!typesConnect(flowInput.variable_type_code, port.variable_type_code)) {
    build.problem(
      field,
      'type_mismatch',
      `${field} feeds the ${flowInput.variable_type_code} flow input ${JSON.stringify(flowInput.name)} to a ${port.variable_type_code} input.`,
    )
  }
}

/** A flow output filled by a node output: by that one only, and with a type that connects. */
function checkOutputBinding(
  build: GraphBuild,
  field: string,
  port: FlowNodeOutput,
  flowOutput: FlowOutput,
  flowOutputFedBy: Map<string, string>,
) {
  const earlier = flowOutputFedBy.get(flowOutput.name)
  if (earlier) {
    build.problem(
      field,
      'duplicate',
      `${field}: flow output ${JSON.stringify(flowOutput.name)} is already filled by ${earlier}; a flow output takes one node output.`,
    )
  }
  flowOutputFedBy.set(flowOutput.name, field)
  if (!typesConnect(port.variable_type_code, flowOutput.variable_type_code)) {
    build.problem(
      field,
      'type_mismatch',
      `${field} fills the ${flowOutput.variable_type_code} flow output ${JSON.stringify(flowOutput.name)} with a ${port.variable_type_code} output.`,
    )
  }
}

/**
 * Phase 7: the edges form no loop (the executor runs nodes in the order edges give). Reported
 * last, once, at the edge that closes the first loop found, with its route.
 */
export function checkLoop(build: GraphBuild, nodes: readonly StoredNode[], feeders: Feeders) {
  const loop = findLoop(feeders)
  if (!loop) return
  const route = loop.nodes.map((index) => describeNode(nodes, index)).join(' → ')
  build.problem(
    loop.field,
    'cycle',
    `${loop.field} closes a loop (${route}); edges must not lead back to a node they start from. Use retry_source_output_id for a retry.`,
  )
}

/**
 * A loop among the edges, if any: `feeders[i]` lists the nodes feeding node i. Depth-first, with
 * an explicit stack so a long chain of nodes cannot overflow the call stack.
 */
function findLoop(feeders: Feeders): { field: string; nodes: number[] } | undefined {
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

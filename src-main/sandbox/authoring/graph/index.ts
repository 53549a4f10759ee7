import { startBuild } from './build'
import { estimateRun } from './estimate'
import { buildFlowPorts } from './flow-ports'
import { buildNodes, checkGivenSlugs } from './nodes'
import { resolveTargets } from './targets'
import type { BuiltGraph, GraphBody, GraphContext } from './types'
import { checkBindings, checkEdges, checkLoop } from './wiring'

export type {
  BuiltGraph,
  GraphBody,
  GraphContext,
  GraphResolver,
  NodeTarget,
  Port,
  RecordKind,
  StoredNode,
  StoredRecord,
} from './types'
export { stampRecord } from './stamp'
export { NODE_TYPE_CODES } from './targets'
export { typesConnect } from './type-family'

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
 *
 * The phases (the other files of this folder) run in this order, which is the order problems are reported in and
 * new ids are drawn in: a client reads the list top to bottom, and templates need stable ids.
 */
export function buildFlowGraph(body: GraphBody, context: GraphContext): BuiltGraph {
  const build = startBuild(context)
  const { inputs, outputs } = buildFlowPorts(build, body)
  const nodeBodies = body.nodes ?? []
  const givenSlugs = checkGivenSlugs(build, nodeBodies)
  const targets = resolveTargets(build, nodeBodies)
  const nodes = buildNodes(build, nodeBodies, targets, givenSlugs)
  const feeders = checkEdges(build, nodes)
  checkBindings(build, nodes, inputs, outputs)
  checkLoop(build, nodes, feeders)
  const estimatedMicro = estimateRun(nodes, targets)
  return { nodes, inputs, outputs, estimatedMicro, problems: build.problems }
}

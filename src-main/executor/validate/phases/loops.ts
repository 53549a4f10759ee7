import type { FlowNode } from '../../../../src-shared/api'
import { loopThrough, stronglyConnected } from '../graph'
import { nodeName, type AnalysisContext } from './context'

/**
 * Loops among the edges: one CYCLE per strongly connected group, naming the nodes along a
 * shortest loop through it. Sets `looped`: a flow with a loop has no data order to plan, and
 * whether a retry edge points backwards cannot be told on it.
 */
export function findLoops(context: AnalysisContext): void {
  const { nodes, next, edgeInput } = context
  for (const component of stronglyConnected(next)) {
    const start = Math.min(...component)
    const selfLoop = component.length === 1 && (next[start] ?? []).includes(start)
    if (component.length === 1 && !selfLoop) continue
    context.looped = true
    const loop = loopThrough(start, new Set(component), next)
    const last = loop[loop.length - 1] as number
    const j = edgeInput.get(`${last}>${start}`) ?? 0
    const startNode = nodes[start] as FlowNode
    const route = [...loop, start].map((n) => nodeName(nodes[n] as FlowNode)).join(' → ')
    context.report(
      'CYCLE',
      `nodes.${start}.inputs.${j}.source_output_id`,
      `The edges make a loop (${route}); an edge must not lead back to a node it comes from. To send the flow back after a failed quality gate, use retry_source_output_id instead.`,
      {
        nodeId: startNode.id,
        inputName: startNode.inputs[j]?.name ?? '',
        nodeIds: loop.map((n) => (nodes[n] as FlowNode).id),
      },
    )
  }
}

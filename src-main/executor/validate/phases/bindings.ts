import type { FlowNode, FlowNodeInput } from '../../../../src-shared/api'
import {
  defaultOf,
  given,
  portOf,
  sourceOf,
  type AnalysisContext,
  type InputBinding,
} from './context'

/**
 * How each input gets its value, for the runners: the edge, flow input, value or default the
 * checks above settled, with its fan-out and retry source. Ports the node leaves off but whose
 * target gives a default are bound too, so a runner needs no catalog. Reports nothing.
 */
export function bindInputs(context: AnalysisContext): void {
  context.bindings = context.nodes.map((node, i) => {
    const byName = new Map<string, InputBinding>()
    node.inputs.forEach((input) => {
      byName.set(input.name, bindingOf(context, i, input))
    })
    for (const port of context.targets[i]?.inputs ?? []) {
      if (byName.has(port.name)) continue
      const fallback = defaultOf(undefined, port)
      if (fallback !== undefined) {
        byName.set(port.name, { from: 'default', value: fallback, fanOut: false, retry: null })
      }
    }
    return byName
  })
}

function bindingOf(context: AnalysisContext, i: number, input: FlowNodeInput): InputBinding {
  const { nodes } = context
  const retrySource = sourceOf(context, input.retry_source_output_id)
  const common = {
    fanOut: context.fanOut[i]?.includes(input.name) ?? false,
    retry: retrySource
      ? {
          nodeId: (nodes[retrySource.node] as FlowNode).id,
          outputId: retrySource.output.id,
          outputName: retrySource.output.name,
        }
      : null,
  }
  const edge = sourceOf(context, input.source_output_id)
  const flowInput = context.mappedInputs[i]?.get(input.name)
  const fallback = defaultOf(input, portOf(context, i, input.name))
  if (edge) {
    return {
      from: 'edge',
      nodeId: (nodes[edge.node] as FlowNode).id,
      outputId: edge.output.id,
      outputName: edge.output.name,
      ...common,
    }
  }
  if (flowInput !== undefined) return { from: 'flow_input', name: flowInput, ...common }
  if (given(input.value)) return { from: 'value', value: input.value, ...common }
  if (fallback !== undefined) return { from: 'default', value: fallback, ...common }
  return { from: 'none', ...common }
}

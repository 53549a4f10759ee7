import type { FlowNode, FlowNodeInput } from '../../../../src-shared/api'
import {
  fillsItself,
  given,
  isRecord,
  nodeName,
  portOf,
  type AnalysisContext,
  type Place,
} from './context'

/**
 * What feeds each input: at most one of an edge, a flow input or a value, every connection to an
 * output that exists, and something for each required input. Sets the graph the rest walks:
 * `outputsById` (where an edge comes from), `next` (who feeds whom, retry edges left out) and
 * `edgeInput` (which input an edge enters, to point at the edge that closes a loop).
 */
export function checkWiring(context: AnalysisContext): void {
  const { nodes } = context
  context.outputsById = new Map()
  nodes.forEach((node, i) => {
    for (const output of node.outputs) {
      if (!context.outputsById.has(output.id))
        context.outputsById.set(output.id, { node: i, output })
    }
  })
  context.next = nodes.map(() => [])
  context.edgeInput = new Map()
  nodes.forEach((node, i) => {
    node.inputs.forEach((input, j) => {
      const path = `nodes.${i}.inputs.${j}`
      const place = { nodeId: node.id, inputName: input.name }
      const fed = feeders(node, input)
      if (fed.length > 1) {
        context.report(
          'AMBIGUOUS_INPUT',
          path,
          `Input ${JSON.stringify(input.name)} of ${nodeName(node)} is fed by ${fed.join(' and ')}; feed it from one place only.`,
          place,
        )
      }
      connect(context, node, i, j, place)
      const port = portOf(context, i, input.name)
      const required = input.is_required || (port?.is_required ?? false)
      const fallback = {
        default_value: input.default_value ?? port?.default_value ?? null,
        behavior_code: input.behavior_code ?? port?.behavior_code ?? null,
      }
      if (required && fed.length === 0 && !fillsItself(fallback)) {
        context.report(
          'MISSING_REQUIRED_INPUT',
          path,
          `Input ${JSON.stringify(input.name)} of ${nodeName(node)} is required; connect it, map a flow input to it, or give it a value.`,
          place,
        )
      }
    })
  })
}

/** What the document says feeds an input, in words; more than one is ambiguous. */
function feeders(node: FlowNode, input: FlowNodeInput): string[] {
  const mapped = node.config.flow_inputs
  return [
    input.source_output_id !== null ? 'an edge' : null,
    isRecord(mapped) && Object.hasOwn(mapped, input.name) ? 'a flow input' : null,
    given(input.value) ? 'a value' : null,
  ].filter((source) => source !== null)
}

/** Follows input j's edge and retry edge to their outputs; an edge joins the graph. */
function connect(context: AnalysisContext, node: FlowNode, i: number, j: number, place: Place) {
  const input = node.inputs[j] as FlowNodeInput
  for (const key of ['source_output_id', 'retry_source_output_id'] as const) {
    const sourceId = input[key]
    if (sourceId === null) continue
    const source = context.outputsById.get(sourceId)
    if (!source) {
      context.report(
        'DANGLING_CONNECTION',
        `nodes.${i}.inputs.${j}.${key}`,
        `Input ${JSON.stringify(input.name)} of ${nodeName(node)} is connected (${key}) to ${sourceId}, which is no node output of this flow; reconnect it or clear ${key}.`,
        place,
      )
    } else if (key === 'source_output_id') {
      const successors = context.next[source.node] as number[]
      if (!successors.includes(i)) successors.push(i)
      const edge = `${source.node}>${i}`
      if (!context.edgeInput.has(edge)) context.edgeInput.set(edge, j)
    }
  }
}

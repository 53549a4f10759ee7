import type { FlowNode } from '../../../../src-shared/api'
import { show } from '../values'
import { isAttempts, MAX_ATTEMPTS_LIMIT } from './attempts'
import { isRecord, nodeName, type AnalysisContext } from './context'

/**
 * The node configs that reach outside the node: `config.flow_inputs` (which flow input feeds
 * which node input), `config.flow_outputs` (which node output fills which flow output) and the
 * quality gate's `config.max_attempts`. Sets the flow's inputs and outputs by name and the links
 * both ways, which wiring (what feeds an input), types and bindings build on.
 */
export function readMappings(context: AnalysisContext): void {
  const { flow, nodes, report } = context
  context.flowInputs = new Map(flow.inputs.map((input) => [input.name, input]))
  context.flowOutputs = new Map(flow.outputs.map((output) => [output.name, output]))
  context.mappedInputs = nodes.map(() => new Map<string, string>())
  /** Flow output name → the node output filling it, in words. */
  const filledBy = new Map<string, string>()
  nodes.forEach((node, i) => {
    mapFlowInputs(context, node, i)
    mapFlowOutputs(context, node, i, filledBy)
    const attempts = node.config.max_attempts
    if (attempts !== undefined && !isAttempts(attempts)) {
      report(
        'INVALID_CONFIG',
        `nodes.${i}.config.max_attempts`,
        `config.max_attempts of ${nodeName(node)} must be a whole number from 1 to ${MAX_ATTEMPTS_LIMIT} (how many times its quality gate may run the flow), but it is ${show(attempts)}.`,
        { nodeId: node.id },
      )
    }
  })
  flow.outputs.forEach((output, k) => {
    if (!filledBy.has(output.name)) {
      report(
        'UNMAPPED_FLOW_OUTPUT',
        `outputs.${k}`,
        `No node fills the flow output ${JSON.stringify(output.name)}; map a node output to it (config.flow_outputs) or remove it.`,
      )
    }
  })
}

function mapFlowInputs(context: AnalysisContext, node: FlowNode, i: number) {
  const { flowInputs, report } = context
  for (const [portName, flowName] of mapping(context, node, i, 'flow_inputs')) {
    const path = `nodes.${i}.config.flow_inputs.${portName}`
    if (!node.inputs.some((input) => input.name === portName)) {
      report(
        'UNKNOWN_PORT',
        path,
        `config.flow_inputs of ${nodeName(node)} names an input ${JSON.stringify(portName)} the node does not have; add it to the node's inputs first.`,
        { nodeId: node.id, inputName: portName },
      )
    } else if (!flowInputs.has(flowName)) {
      report(
        'UNKNOWN_FLOW_INPUT',
        path,
        `config.flow_inputs of ${nodeName(node)} feeds ${JSON.stringify(portName)} from a flow input ${JSON.stringify(flowName)} the flow does not have; use one of: ${[...flowInputs.keys()].join(', ') || '(none yet)'}.`,
        { nodeId: node.id, inputName: portName },
      )
    } else context.mappedInputs[i]?.set(portName, flowName)
  }
}

function mapFlowOutputs(
  context: AnalysisContext,
  node: FlowNode,
  i: number,
  filledBy: Map<string, string>,
) {
  const { flowOutputs, report } = context
  for (const [portName, flowName] of mapping(context, node, i, 'flow_outputs')) {
    const path = `nodes.${i}.config.flow_outputs.${portName}`
    const output = node.outputs.find((o) => o.name === portName)
    const target = flowOutputs.get(flowName)
    if (!output) {
      report(
        'UNKNOWN_PORT',
        path,
        `config.flow_outputs of ${nodeName(node)} names an output ${JSON.stringify(portName)} the node does not have; add it to the node's outputs first.`,
        { nodeId: node.id },
      )
    } else if (!target) {
      report(
        'UNKNOWN_FLOW_OUTPUT',
        path,
        `config.flow_outputs of ${nodeName(node)} fills a flow output ${JSON.stringify(flowName)} the flow does not have; use one of: ${[...flowOutputs.keys()].join(', ') || '(none yet)'}.`,
        { nodeId: node.id, outputId: output.id },
      )
    } else {
      const earlier = filledBy.get(flowName)
      if (earlier !== undefined) {
        report(
          'FLOW_OUTPUT_CONFLICT',
          path,
          `The flow output ${JSON.stringify(flowName)} is already filled by ${earlier}; a flow output takes one node output, so remove one mapping.`,
          { nodeId: node.id, outputId: output.id },
        )
      } else {
        filledBy.set(flowName, `output ${JSON.stringify(portName)} of ${nodeName(node)}`)
        context.outputLinks.push({ name: flowName, node: i, output })
      }
    }
  }
}

/** The `[node port, flow port]` pairs of a mapping, each malformed part reported and left out. */
function mapping(
  context: AnalysisContext,
  node: FlowNode,
  i: number,
  key: 'flow_inputs' | 'flow_outputs',
): [string, string][] {
  const value = node.config[key]
  if (value === undefined) return []
  const side = key === 'flow_inputs' ? 'input' : 'output'
  if (!isRecord(value)) {
    context.report(
      'INVALID_CONFIG',
      `nodes.${i}.config.${key}`,
      `config.${key} of ${nodeName(node)} must be an object mapping the node's ${side} names to flow ${side} names.`,
      { nodeId: node.id },
    )
    return []
  }
  return Object.entries(value).flatMap(([portName, flowName]): [string, string][] => {
    if (typeof flowName === 'string') return [[portName, flowName]]
    context.report(
      'INVALID_CONFIG',
      `nodes.${i}.config.${key}.${portName}`,
      `config.${key}.${portName} of ${nodeName(node)} must be the name of a flow ${side}.`,
      { nodeId: node.id },
    )
    return []
  })
}

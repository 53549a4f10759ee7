import type { FlowNode, FlowNodeInput } from '../../../../src-shared/api'
import { listElement, listType, typeConnection } from '../../../../src-shared/domain/flow'
import { topologicalOrder } from '../graph'
import {
  given,
  mayFanOut,
  nodeName,
  portOf,
  sourceOf,
  typeOfOutput,
  type AnalysisContext,
} from './context'
import { checkValue, rulesOf } from './literals'

/**
 * Types along the edges, in data order, and the fan-outs they make. A node's outputs carry lists
 * when it runs per item, which changes what arrives downstream, so nodes are visited after every
 * node that feeds them (those a loop holds up last, in flow order). Sets `order`, `fanOut` and
 * `outputTypes`, which retries and bindings read; literal values and defaults are checked here
 * too, a list value being one more thing that may fan out.
 */
export function checkTypes(context: AnalysisContext): void {
  const { flow, nodes } = context
  const { order, stuck } = topologicalOrder(context.next)
  context.order = order
  context.outputTypes = new Map()
  context.fanOut = nodes.map(() => [])
  for (const i of [...order, ...stuck]) checkNode(context, i)
  flow.inputs.forEach((input, k) => {
    if (given(input.default_value)) {
      checkValue(
        context,
        input.default_value,
        input.variable_type_code,
        rulesOf(input, undefined),
        `inputs.${k}.default_value`,
        `The default of flow input ${JSON.stringify(input.name)}`,
        {},
      )
    }
  })
  checkFlowOutputs(context)
}

/** One node being typed: what it takes whole, and the inputs found to fan out so far. */
interface Visit {
  context: AnalysisContext
  node: FlowNode
  i: number
  takesLists: ReadonlySet<string>
  fans: Set<string>
}

function checkNode(context: AnalysisContext, i: number) {
  const node = context.nodes[i] as FlowNode
  const explicit = context.explicitFanOut[i] ?? null
  const visit: Visit = {
    context,
    node,
    i,
    takesLists: context.targets[i]?.listInputs ?? new Set<string>(),
    fans: new Set(context.declaredFanOut[i]),
  }
  node.inputs.forEach((input, j) => {
    checkInput(visit, input, j)
  })
  for (const name of explicit ?? []) {
    if (visit.fans.has(name) || !node.inputs.some((input) => input.name === name)) continue
    context.report(
      'INVALID_CONFIG',
      `nodes.${i}.config.fan_out`,
      `config.fan_out of ${nodeName(node)} names ${JSON.stringify(name)}, which receives no list of single values; connect a list to it or remove it from fan_out.`,
      { nodeId: node.id, inputName: name },
    )
  }
  context.fanOut[i] = node.inputs.map((input) => input.name).filter((name) => visit.fans.has(name))
  for (const output of node.outputs) {
    context.outputTypes.set(
      output.id,
      visit.fans.size > 0 ? listType(output.variable_type_code) : output.variable_type_code,
    )
  }
}

/** What reaches one input (an edge, a flow input, a value) and its literal value and default. */
function checkInput(visit: Visit, input: FlowNodeInput, j: number) {
  const { context, node, i } = visit
  const path = `nodes.${i}.inputs.${j}`
  const place = { nodeId: node.id, inputName: input.name }
  const edge = sourceOf(context, input.source_output_id)
  if (edge) {
    const from = context.nodes[edge.node] as FlowNode
    arrive(
      visit,
      typeOfOutput(context, edge.output),
      input,
      `${path}.source_output_id`,
      `The edge from output ${JSON.stringify(edge.output.name)} of ${nodeName(from)}`,
    )
  }
  const flowInputName = context.mappedInputs[i]?.get(input.name)
  const flowInput = flowInputName === undefined ? undefined : context.flowInputs.get(flowInputName)
  if (flowInput) {
    arrive(
      visit,
      flowInput.variable_type_code,
      input,
      `nodes.${i}.config.flow_inputs.${input.name}`,
      `The flow input ${JSON.stringify(flowInput.name)}`,
    )
  }
  const rules = rulesOf(input, portOf(context, i, input.name))
  const what = `Input ${JSON.stringify(input.name)} of ${nodeName(node)}`
  const type = input.variable_type_code
  if (given(input.value)) {
    if (Array.isArray(input.value) && listElement(type) === null) {
      // A list typed into a single-value input: the items are checked one by one.
      if (
        arrive(
          visit,
          listType(type),
          input,
          `${path}.value`,
          `The list value of ${what.toLowerCase()}`,
        )
      ) {
        checkValue(context, input.value, listType(type), rules, `${path}.value`, what, place)
      }
    } else checkValue(context, input.value, type, rules, `${path}.value`, what, place)
  }
  if (given(input.default_value)) {
    checkValue(
      context,
      input.default_value,
      type,
      rules,
      `${path}.default_value`,
      `The default of ${what.toLowerCase()}`,
      place,
    )
  }
}

/** Settles what a value of type `from` does at an input: arrive as it is, or fan out. */
function arrive(visit: Visit, from: string, input: FlowNodeInput, path: string, source: string) {
  const { context, node, i } = visit
  const connection = typeConnection(from, input.variable_type_code)
  if (connection === 'direct') return true
  if (connection === 'fan_out') {
    if (visit.takesLists.has(input.name)) return true
    if (mayFanOut(context, i, input.name)) {
      visit.fans.add(input.name)
      return true
    }
  }
  const name = JSON.stringify(input.name)
  context.report(
    'TYPE_MISMATCH',
    path,
    connection === 'none'
      ? `${source} brings ${from} to the ${input.variable_type_code} input ${name} of ${nodeName(node)}; connect an output of a matching type.`
      : node.type_code === 'model'
        ? `${source} brings a list (${from}) to the single ${input.variable_type_code} input ${name} of ${nodeName(node)}, which config.fan_out leaves out; add ${name} to config.fan_out to run the model once per item.`
        : `${source} brings a list (${from}) to the single ${input.variable_type_code} input ${name} of ${nodeName(node)}; only model nodes run once per item of a list (one batch). Make the input a ${listType(input.variable_type_code)}, or feed a model node.`,
    { nodeId: node.id, inputName: input.name },
  )
  return false
}

/** Each node output mapped to a flow output brings the flow output's type, fan-outs counted. */
function checkFlowOutputs(context: AnalysisContext) {
  for (const link of context.outputLinks) {
    const node = context.nodes[link.node] as FlowNode
    const target = context.flowOutputs.get(link.name)
    const from = typeOfOutput(context, link.output)
    if (target && typeConnection(from, target.variable_type_code) !== 'direct') {
      context.report(
        'TYPE_MISMATCH',
        `nodes.${link.node}.config.flow_outputs.${link.output.name}`,
        `Output ${JSON.stringify(link.output.name)} of ${nodeName(node)} brings ${from} to the ${target.variable_type_code} flow output ${JSON.stringify(link.name)}; make them match${listElement(from) !== null ? ` (the node runs once per item, so the flow output must be a ${from})` : ''}.`,
        { nodeId: node.id, outputId: link.output.id },
      )
    }
  }
}

import type { FlowNode, FlowNodeInput, FlowNodeOutput } from '../../../../src-shared/api'
import { typeConnection } from '../../../../src-shared/domain/flow'
import {
  fillsItself,
  mayFanOut,
  nodeName,
  type AnalysisContext,
  type Place,
  type Port,
  type Target,
} from './context'

/**
 * Each node's ports against what it runs: names the target has, types that match, required
 * inputs present. An input declared `T[]` where the target takes one `T` is a fan-out the node
 * asks for (`declaredFanOut`), which the types phase starts each node's fan-outs from.
 */
export function checkPorts(context: AnalysisContext): void {
  const { nodes } = context
  context.declaredFanOut = nodes.map(() => [])
  nodes.forEach((node, i) => {
    const target = context.targets[i]
    if (!target) return
    for (const at of portsAt(node, i, 'input')) {
      const port = portFor(context, target, at)
      if (!port) continue
      const connection = typeConnection(at.type, port.variable_type_code)
      if (connection === 'fan_out' && mayFanOut(context, i, at.name)) {
        context.declaredFanOut[i]?.push(at.name)
      } else if (connection !== 'direct' && !target.listInputs.has(at.name)) {
        mismatch(context, target, at, port)
      }
    }
    for (const at of portsAt(node, i, 'output')) {
      const port = portFor(context, target, at)
      if (port && typeConnection(port.variable_type_code, at.type) !== 'direct') {
        mismatch(context, target, at, port)
      }
    }
    for (const port of target.inputs ?? []) {
      if (node.inputs.some((input) => input.name === port.name)) continue
      if (port.is_required && !fillsItself(port)) {
        context.report(
          'MISSING_REQUIRED_INPUT',
          `nodes.${i}.inputs`,
          `${nodeName(node)} needs the input ${JSON.stringify(port.name)} of ${target.title}; add it and connect it, map a flow input to it, or give it a value.`,
          { nodeId: node.id, inputName: port.name },
        )
      }
    }
  })
}

/** One of a node's inputs or outputs, as its problems name it. */
interface PortAt {
  node: FlowNode
  side: 'input' | 'output'
  name: string
  type: string
  path: string
  place: Place
}

/** A node's inputs or outputs, each with where its problems point. */
function portsAt(node: FlowNode, i: number, side: PortAt['side']): PortAt[] {
  const own: readonly (FlowNodeInput | FlowNodeOutput)[] =
    side === 'input' ? node.inputs : node.outputs
  return own.map((port, j) => ({
    node,
    side,
    name: port.name,
    type: port.variable_type_code,
    path: `nodes.${i}.${side}s.${j}`,
    place:
      side === 'input'
        ? { nodeId: node.id, inputName: port.name }
        : { nodeId: node.id, outputId: port.id },
  }))
}

/** What a target does with a port of each side, in messages. */
const VERB = { input: 'take', output: 'make' } as const

/**
 * The target's port that a node's port is for; undefined when the target's ports are not known,
 * or it has none of that name (said, unless the target takes inputs of any name).
 */
function portFor(context: AnalysisContext, target: Target, at: PortAt): Port | undefined {
  const ports = at.side === 'input' ? target.inputs : target.outputs
  if (!ports) return undefined
  const port = ports.find((p) => p.name === at.name)
  if (!port && !(at.side === 'input' && target.otherInputs)) {
    context.report(
      'UNKNOWN_PORT',
      `${at.path}.name`,
      `${nodeName(at.node)} has an ${at.side} ${JSON.stringify(at.name)}, which ${target.title} does not ${VERB[at.side]}; use one of: ${ports.map((p) => p.name).join(', ') || '(none)'}.`,
      at.place,
    )
  }
  return port
}

function mismatch(context: AnalysisContext, target: Target, at: PortAt, port: Port) {
  const side = at.side === 'input' ? 'Input' : 'Output'
  context.report(
    'TYPE_MISMATCH',
    `${at.path}.variable_type_code`,
    `${side} ${JSON.stringify(at.name)} of ${nodeName(at.node)} is ${at.type}, but ${target.title} ${VERB[at.side]}s ${port.variable_type_code} there; make them match.`,
    at.place,
  )
}

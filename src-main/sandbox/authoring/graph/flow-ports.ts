import type { FlowInput, FlowOutput } from '../../../../src-shared/api'
import { portRecord, type PortItem } from '../port-record'
import type { GraphBuild } from './build'
import type { GraphBody } from './types'

/**
 * Phase 1: the flow's own inputs and outputs, as records. They come first because node bindings
 * (`config.flow_inputs`, `config.flow_outputs`) are checked against them later, and their ids
 * claim their place before any node's.
 */
export function buildFlowPorts(
  build: GraphBuild,
  body: GraphBody,
): { inputs: FlowInput[]; outputs: FlowOutput[] } {
  const { context, checkCode, idOf, stamp } = build
  const inputBodies = body.inputs ?? []
  const outputBodies = body.outputs ?? []
  build.uniqueNames(inputBodies, 'inputs', 'flow input')
  build.uniqueNames(outputBodies, 'outputs', 'flow output')
  const port = <K extends 'flow input' | 'flow output'>(
    kind: K,
    item: PortItem<K>,
    index: number,
  ) => {
    const side = kind === 'flow input' ? 'input' : 'output'
    const path = `${side}s.${index}`
    checkCode('variable-types', item.variable_type_code, `${path}.variable_type_code`)
    checkCode('validators', item.validator_code, `${path}.validator_code`)
    const id = idOf(item.id, path)
    return stamp(side, id, (created_at, updated_at) =>
      portRecord(kind, { id, ownerId: context.flowId }, item, { created_at, updated_at }),
    )
  }
  return {
    inputs: inputBodies.map((item, index) => port('flow input', item, index)),
    outputs: outputBodies.map((item, index) => port('flow output', item, index)),
  }
}

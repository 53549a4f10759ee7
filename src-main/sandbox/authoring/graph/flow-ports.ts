import type { FlowInput, FlowOutput } from '../../../../src-shared/api'
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
  return { inputs, outputs }
}

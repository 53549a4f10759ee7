import type {
  FlowInput,
  FlowInputCreate,
  FlowOutput,
  FlowOutputCreate,
  WorkflowInput,
  WorkflowInputCreate,
  WorkflowOutput,
  WorkflowOutputCreate,
} from '../../../src-shared/api'

/** Each kind of port record with the request item it is built from. */
interface PortKinds {
  'flow input': { item: FlowInputCreate; record: FlowInput }
  'flow output': { item: FlowOutputCreate; record: FlowOutput }
  'workflow input': { item: WorkflowInputCreate; record: WorkflowInput }
  'workflow output': { item: WorkflowOutputCreate; record: WorkflowOutput }
}

export type PortKind = keyof PortKinds
export type PortItem<K extends PortKind> = PortKinds[K]['item']

/**
 * The stored record of a flow's or a workflow's input or output: what the request gives, with the
 * contract's defaults for what it leaves out. Fields come in one fixed order, since a record is
 * compared with its stored self as JSON to tell whether it changed.
 */
export function portRecord<K extends PortKind>(
  kind: K,
  ids: { id: string; ownerId: string },
  item: PortItem<K>,
  times: { created_at: string; updated_at: string },
): PortKinds[K]['record'] {
  // Every item kind is a part of the workflow input's fields: read them all through that one.
  const given: Partial<WorkflowInputCreate> = item
  const isInput = kind === 'flow input' || kind === 'workflow input'
  const ofWorkflow = kind === 'workflow input' || kind === 'workflow output'
  const record = {
    id: ids.id,
    ...(ofWorkflow ? { wfengine_workflow_id: ids.ownerId } : { flow_id: ids.ownerId }),
    name: item.name,
    display_name: item.display_name ?? null,
    description: item.description ?? null,
    variable_type_code: item.variable_type_code,
    ...(ofWorkflow && isInput
      ? { default_behavior_code: given.default_behavior_code ?? null }
      : {}),
    validator_code: item.validator_code ?? null,
    validator_attrs: item.validator_attrs ?? null,
    ...(isInput
      ? { is_required: given.is_required ?? false, default_value: given.default_value ?? null }
      : {}),
    sort_order: item.sort_order ?? 0,
    ...(ofWorkflow
      ? {
          wfengine_node_id: given.wfengine_node_id ?? null,
          wfengine_field_name: given.wfengine_field_name ?? null,
        }
      : {}),
    ...times,
  }
  // The kind decides which fields are there, which the type checker cannot follow.
  return record as PortKinds[K]['record']
}

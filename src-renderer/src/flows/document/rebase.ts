import type { FileFlow } from './types'

/**
 * The flow file moved into another flow record (the copy "save as copy" made): its own id and
 * name become the copy's, and every `flow_id` inside follows, since a record naming another flow
 * than the one it sits in is refused.
 */
export function rebaseFlowFile(
  file: Record<string, unknown>,
  target: { id: string; name: string },
): Record<string, unknown> {
  const flow = file as FileFlow
  const owned = <T extends { flow_id?: string }>(record: T): T =>
    'flow_id' in record ? { ...record, flow_id: target.id } : record
  const rebased: FileFlow = { ...flow, id: target.id, name: target.name }
  if (flow.nodes) rebased.nodes = flow.nodes.map(owned)
  if (flow.inputs) rebased.inputs = flow.inputs.map(owned)
  if (flow.outputs) rebased.outputs = flow.outputs.map(owned)
  return rebased
}

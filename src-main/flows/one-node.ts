import { createHash } from 'node:crypto'
import { parseFlowDocument, type FlowDocument } from '../executor'

/** A port as the service's models and workflows describe theirs. */
export interface OneNodePort {
  name: string
  display_name?: string | null
  description?: string | null
  variable_type_code: string
  validator_code?: string | null
  validator_attrs?: Record<string, unknown> | null
  is_required?: boolean
  default_value?: unknown
  sort_order?: number
}

export interface OneNodeSpec {
  /** Names the flow: the same key makes the same ids, so the same target is the same flow. */
  key: string
  name: string
  slug?: string | null
  description?: string | null
  node: {
    label: string
    slug?: string | null
    type_code: 'model' | 'wfengine_workflow'
    model_id?: string | null
    wfengine_workflow_id?: string | null
  }
  inputs: readonly OneNodePort[]
  outputs: readonly OneNodePort[]
  /** The values a run gave the inputs; they become the flow inputs' defaults. */
  values?: Readonly<Record<string, unknown>>
}

/** A uuid that is always the same for the same text. */
function stableId(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/**
 * One model or workflow as a flow of one node whose flow inputs and outputs are its own, so that
 * running a workflow from the CLI, or opening a run made outside any flow in the editor, goes
 * through the one path every flow takes: checked, cached, recorded.
 */
export function oneNodeFlow(spec: OneNodeSpec): FlowDocument {
  const { key, node, values = {} } = spec
  const id = (kind: string, name = '') => stableId(`atelier:one-node:${key}:${kind}:${name}`)
  const value = (port: OneNodePort) =>
    Object.hasOwn(values, port.name) ? values[port.name] : (port.default_value ?? null)
  const checks = (port: OneNodePort) => ({
    variable_type_code: port.variable_type_code,
    validator_code: port.validator_code ?? null,
    validator_attrs: port.validator_attrs ?? null,
  })
  const document = {
    id: id('flow'),
    ...(spec.slug ? { slug: spec.slug } : {}),
    name: spec.name,
    description: spec.description ?? null,
    nodes: [
      {
        id: id('node'),
        slug: node.slug ?? null,
        label: node.label,
        type_code: node.type_code,
        model_id: node.model_id ?? null,
        wfengine_workflow_id: node.wfengine_workflow_id ?? null,
        config: {
          flow_inputs: Object.fromEntries(spec.inputs.map((p) => [p.name, p.name])),
          flow_outputs: Object.fromEntries(spec.outputs.map((p) => [p.name, p.name])),
        },
        inputs: spec.inputs.map((p) => ({
          id: id('node-input', p.name),
          name: p.name,
          display_name: p.display_name ?? null,
          ...checks(p),
          is_required: p.is_required ?? false,
          default_value: p.default_value ?? null,
          sort_order: p.sort_order ?? 0,
        })),
        outputs: spec.outputs.map((p) => ({
          id: id('node-output', p.name),
          name: p.name,
          display_name: p.display_name ?? null,
          ...checks(p),
          sort_order: p.sort_order ?? 0,
        })),
      },
    ],
    inputs: spec.inputs.map((p) => ({
      id: id('flow-input', p.name),
      name: p.name,
      display_name: p.display_name ?? null,
      description: p.description ?? null,
      ...checks(p),
      is_required: p.is_required ?? false,
      default_value: value(p),
      sort_order: p.sort_order ?? 0,
    })),
    outputs: spec.outputs.map((p) => ({
      id: id('flow-output', p.name),
      name: p.name,
      display_name: p.display_name ?? null,
      description: p.description ?? null,
      ...checks(p),
      sort_order: p.sort_order ?? 0,
    })),
  }
  const parsed = parseFlowDocument(document)
  if (!parsed.ok) {
    // Built from the service's own records: a problem here is ours, not the person's.
    throw new Error(
      `${spec.name} could not be made a flow: ${parsed.problems.map((p) => p.message).join(' ')}`,
    )
  }
  return parsed.flow
}

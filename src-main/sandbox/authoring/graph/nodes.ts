import type {
  FlowNodeCreate,
  FlowNodeInput,
  FlowNodeInputCreate,
  FlowNodeOutput,
  FlowNodeOutputCreate,
} from '../../../../src-shared/api'
import { firstFreeSlug, slugify } from '../slug'
import type { GraphBuild } from './build'
import { typesConnect } from './type-family'
import type { NodeTarget, Port, StoredNode } from './types'

/**
 * Phase 2: the slugs the request gives, refused when two nodes share one. Returned so that the
 * slugs made up later for the other nodes avoid them all, even those of nodes further down.
 */
export function checkGivenSlugs(build: GraphBuild, nodeBodies: readonly FlowNodeCreate[]) {
  const slugs = new Set<string>()
  nodeBodies.forEach((node, index) => {
    if (node.slug === undefined) return
    if (slugs.has(node.slug)) {
      build.problem(
        `nodes.${index}.slug`,
        'duplicate',
        `nodes.${index}.slug ${JSON.stringify(node.slug)} is used by another node of this flow; node slugs must be unique within a flow.`,
      )
    }
    slugs.add(node.slug)
  })
  return slugs
}

/**
 * Phase 4: the node records with their ports. Each port is checked against the port of the same
 * name on what the node runs (which must exist, with a type that connects), and takes what the
 * request leaves out (display name, validator, default, …) from it.
 */
export function buildNodes(
  build: GraphBuild,
  nodeBodies: readonly FlowNodeCreate[],
  targets: readonly (NodeTarget | undefined)[],
  givenSlugs: ReadonlySet<string>,
): StoredNode[] {
  const usedSlugs = new Set(givenSlugs)
  return nodeBodies.map((node, index) => {
    const path = `nodes.${index}`
    const target = targets[index]
    const id = build.idOf(node.id, path)
    build.uniqueNames(node.inputs ?? [], `${path}.inputs`, 'node input')
    build.uniqueNames(node.outputs ?? [], `${path}.outputs`, 'node output')
    const slug =
      node.slug ??
      firstFreeSlug(slugify(node.label, 'node'), (candidate) => usedSlugs.has(candidate))
    usedSlugs.add(slug)
    const { inputs, outputs } = buildNodePorts(build, node, path, id, target)
    return build.stamp('node', id, (created_at, updated_at) => ({
      id,
      flow_id: build.context.flowId,
      slug,
      label: node.label,
      subtitle: target?.title ?? null,
      type_code: node.type_code,
      x: node.x ?? 0,
      y: node.y ?? 0,
      width: node.width ?? 220,
      config: node.config ?? {},
      collapsed: node.collapsed ?? false,
      model_id: node.model_id ?? null,
      builtin_node_code: node.builtin_node_code ?? null,
      wfengine_workflow_id: node.wfengine_workflow_id ?? null,
      sub_flow_id: node.sub_flow_id ?? null,
      created_at,
      updated_at,
      inputs,
      outputs,
    }))
  })
}

/**
 * A node's inputs and outputs. Each is checked against the port of the same name on what the node
 * runs, and takes from it what the request leaves out.
 */
function buildNodePorts(
  build: GraphBuild,
  node: FlowNodeCreate,
  path: string,
  nodeId: string,
  target: NodeTarget | undefined,
): { inputs: FlowNodeInput[]; outputs: FlowNodeOutput[] } {
  const { checkCode } = build
  /** Checks one port and gives the fields node inputs and outputs share, in their stored order. */
  const portOf = (
    side: 'input' | 'output',
    item: FlowNodeInputCreate | FlowNodeOutputCreate,
    field: string,
  ) => {
    checkCode('variable-types', item.variable_type_code, `${field}.variable_type_code`)
    checkCode('validators', item.validator_code, `${field}.validator_code`)
    if (side === 'input') {
      const behavior = (item as FlowNodeInputCreate).behavior_code
      checkCode('variable-behaviors', behavior, `${field}.behavior_code`)
    }
    const port = checkPort(
      build,
      side === 'input' ? target?.inputs : target?.outputs,
      item,
      field,
      {
        what: `an ${side}`,
        title: target?.title ?? '',
        open: side === 'input' && (target?.otherInputs ?? false),
      },
    )
    const id = build.idOf(item.id, field)
    const shared = {
      id,
      flow_node_id: nodeId,
      name: item.name,
      display_name: item.display_name ?? port?.display_name ?? null,
      variable_type_code: item.variable_type_code,
      validator_code: item.validator_code ?? port?.validator_code ?? null,
      validator_attrs: item.validator_attrs ?? port?.validator_attrs ?? null,
    }
    return { id, port, shared }
  }
  const inputs = (node.inputs ?? []).map((item, j) => {
    const { id, port, shared } = portOf('input', item, `${path}.inputs.${j}`)
    return build.stamp('node_input', id, (created_at, updated_at) => ({
      ...shared,
      is_required: item.is_required ?? port?.is_required ?? false,
      default_value: item.default_value ?? port?.default_value ?? null,
      sort_order: item.sort_order ?? 0,
      behavior_code: item.behavior_code ?? port?.behavior_code ?? null,
      value: item.value ?? null,
      source_output_id: item.source_output_id ?? null,
      connection_label: item.connection_label ?? null,
      connection_style_code: item.connection_style_code ?? null,
      retry_source_output_id: item.retry_source_output_id ?? null,
      created_at,
      updated_at,
    }))
  })
  const outputs = (node.outputs ?? []).map((item, j) => {
    const { id, shared } = portOf('output', item, `${path}.outputs.${j}`)
    return build.stamp('node_output', id, (created_at, updated_at) => ({
      ...shared,
      sort_order: item.sort_order ?? 0,
      created_at,
      updated_at,
    }))
  })
  return { inputs, outputs }
}

/**
 * The port of what the node runs that a node port stands for, if any. Without a known target
 * (`ports` undefined) nothing can be checked; an `open` target takes names it does not list.
 */
function checkPort(
  build: GraphBuild,
  ports: readonly Port[] | undefined,
  item: { name: string; variable_type_code: string },
  field: string,
  of: { what: string; title: string; open: boolean },
): Port | undefined {
  if (!ports) return undefined
  const { name } = item
  const port = ports.find((p) => p.name === name)
  if (!port) {
    if (!of.open) {
      build.problem(
        `${field}.name`,
        'unknown_port',
        `${field}.name ${JSON.stringify(name)} is not ${of.what} of ${of.title}; use one of: ${ports.map((p) => p.name).join(', ') || '(none)'}.`,
      )
    }
    return undefined
  }
  if (!typesConnect(item.variable_type_code, port.variable_type_code)) {
    build.problem(
      `${field}.variable_type_code`,
      'type_mismatch',
      `${field}.variable_type_code is ${item.variable_type_code}, but ${JSON.stringify(name)} of ${of.title} is ${port.variable_type_code}.`,
    )
  }
  return port
}

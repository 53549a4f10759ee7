import type { Flow, FlowNode, FlowNodeInput, ModelInput } from '../../../../src-shared/api'
import {
  isNodeKind,
  NODE_KINDS,
  NODE_TARGET_FIELD,
  type FlowProblemCode,
  type NodeKind,
} from '../../../../src-shared/domain/flow'
import { nodeName, type AnalysisContext, type Place, type Port, type Target } from './context'
import { subFlowWalker, type SubFlowTrouble } from './sub-flows'

/**
 * What each node runs, looked up in the catalog: its title for messages and its ports. The
 * phases after check the node's ports, types and defaults against `context.targets`; a node whose
 * target is null (unknown kind, nothing named, not in the catalog) has had its problem said here
 * and is checked no further against a target.
 */
export function resolveTargets(context: AnalysisContext): void {
  const { flow, nodes, catalog } = context
  const subFlowTrouble = subFlowWalker(flow, catalog)
  context.targets = nodes.map((node, i) => {
    const lookup = targetLookup(context, node, i)
    if (lookup === null) return null
    const { reference } = lookup
    switch (lookup.kind) {
      case 'model':
        return ifFound(lookup, catalog.model(reference), (model) => {
          const title = `the model ${model.slug}`
          if (model.inputs === undefined || model.outputs === undefined) {
            unknownDetails(lookup, title)
          }
          return detailedTarget(title, model.inputs, model.outputs)
        })
      case 'builtin':
        return ifFound(lookup, catalog.builtin(reference), (builtin) => {
          const { code, inputs, outputs, otherInputs, listInputs } = builtin
          return target(
            `the built-in ${code}`,
            ports(inputs),
            ports(outputs),
            otherInputs,
            listInputs,
          )
        })
      case 'wfengine_workflow':
        return ifFound(lookup, catalog.workflow(reference), (workflow) => {
          const title = `the workflow ${JSON.stringify(workflow.name)}`
          return target(title, ports(workflow.inputs), ports(workflow.outputs))
        })
      case 'sub_flow':
        if (reference === flow.id) return selfRecursion(lookup)
        return ifFound(lookup, catalog.flow(reference), (sub) =>
          subFlowTarget(lookup, sub, subFlowTrouble),
        )
    }
  })
}

/** What to say when the catalog does not have what a node of each kind names. */
const NOT_FOUND: Record<NodeKind, [FlowProblemCode, (node: string, reference: string) => string]> =
  {
    model: [
      'UNKNOWN_MODEL',
      (node, reference) =>
        `${node} runs a model (${reference}) the catalog does not have; pick one from the model catalog.`,
    ],
    builtin: [
      'UNKNOWN_BUILTIN',
      (node, reference) =>
        `${node} runs the built-in ${JSON.stringify(reference)}, which does not exist; pick one of the built-in nodes.`,
    ],
    wfengine_workflow: [
      'UNKNOWN_WORKFLOW',
      (node, reference) =>
        `${node} runs a workflow (${reference}) that is not one of this organization's; pick another workflow.`,
    ],
    sub_flow: [
      'UNKNOWN_SUB_FLOW',
      (node, reference) =>
        `${node} runs a sub-flow (${reference}) that is not one of this organization's flows; point it at another flow.`,
    ],
  }

/** The target built from the catalog's record; null, with the problem said, when it has none. */
function ifFound<T>(lookup: Lookup, record: T | undefined, build: (record: T) => Target) {
  if (record) return build(record)
  const [code, message] = NOT_FOUND[lookup.kind]
  lookup.context.report(
    code,
    lookup.field,
    message(nodeName(lookup.node), lookup.reference),
    lookup.place,
  )
  return null
}

interface Lookup {
  context: AnalysisContext
  node: FlowNode
  kind: NodeKind
  /** The id or code the node's target field names. */
  reference: string
  /** The path of that field: where a problem with the target points. */
  field: string
  place: Place
}

/** The node's kind and the one target field it sets; null, with the problem said, otherwise. */
function targetLookup(context: AnalysisContext, node: FlowNode, i: number): Lookup | null {
  const { report } = context
  const path = `nodes.${i}`
  const place = { nodeId: node.id }
  const kind = node.type_code
  if (!isNodeKind(kind)) {
    report(
      'UNKNOWN_NODE_TYPE',
      `${path}.type_code`,
      `${nodeName(node)} has the type ${JSON.stringify(kind)}; a node is one of ${NODE_KINDS.join(', ')}.`,
      place,
    )
    return null
  }
  const wanted = NODE_TARGET_FIELD[kind]
  for (const field of Object.values(NODE_TARGET_FIELD)) {
    if (field !== wanted && node[field] !== null) {
      report(
        'TARGET_CONFLICT',
        `${path}.${field}`,
        `${nodeName(node)} is a ${kind} node, which runs ${wanted}; clear ${field}.`,
        place,
      )
    }
  }
  const reference = node[wanted]
  if (reference === null) {
    report(
      'TARGET_MISSING',
      `${path}.${wanted}`,
      `${nodeName(node)} is a ${kind} node but names nothing to run; set ${wanted}.`,
      place,
    )
    return null
  }
  return { context, node, kind, reference, field: `${path}.${wanted}`, place }
}

/** The catalog has the target but not its ports: sync rather than a wall of UNKNOWN_PORTs. */
function unknownDetails({ context, node, field, place }: Lookup, what: string) {
  context.report(
    'TARGET_DETAILS_UNKNOWN',
    field,
    `${nodeName(node)} runs ${what}, whose inputs and outputs are not known here yet; sync it (atelier sync) and validate again.`,
    place,
  )
}

/** A sub-flow that runs this very flow: it would never end. */
function selfRecursion({ context, node, field, place }: Lookup) {
  context.report(
    'SUB_FLOW_RECURSION',
    field,
    `${nodeName(node)} runs this flow itself as a sub-flow, which would never end; point it at another flow.`,
    { ...place, flowIds: [context.flow.id] },
  )
  return null
}

/** A sub-flow's target, once no loop through it back to this flow or among its own is found. */
function subFlowTarget(
  lookup: Lookup,
  sub: Flow,
  subFlowTrouble: (id: string) => SubFlowTrouble | null,
): Target {
  const { context, node, reference, field, place } = lookup
  const { flow, catalog } = context
  const trouble = subFlowTrouble(reference)
  if (trouble?.kind === 'loop') {
    const names = trouble.flowIds.map((id) =>
      id === flow.id ? 'this flow' : JSON.stringify(catalog.flow(id)?.name ?? id),
    )
    context.report(
      'SUB_FLOW_RECURSION',
      field,
      `${nodeName(node)} runs the sub-flow ${JSON.stringify(sub.name)}, which contains itself (${names.join(' → ')}), and would never end; point it at another flow.`,
      { ...place, flowIds: trouble.flowIds },
    )
  } else if (trouble?.kind === 'unknown') {
    unknownDetails(
      lookup,
      trouble.flowId === reference
        ? `the sub-flow ${JSON.stringify(sub.name)}`
        : `the sub-flow ${JSON.stringify(sub.name)}, which runs a flow (${trouble.flowId})`,
    )
  }
  return detailedTarget(`the sub-flow ${JSON.stringify(sub.name)}`, sub.inputs, sub.outputs)
}

/** A target whose ports count as known only when the catalog holds both lists. */
function detailedTarget(
  title: string,
  inputs: readonly PortLike[] | undefined,
  outputs: readonly PortLike[] | undefined,
): Target {
  const known = inputs !== undefined && outputs !== undefined
  return target(title, known ? ports(inputs) : null, known ? ports(outputs) : null)
}

const target = (
  title: string,
  inputs: readonly Port[] | null,
  outputs: readonly Port[] | null,
  otherInputs = false,
  listInputs: readonly string[] = [],
): Target => ({ title, inputs, outputs, otherInputs, listInputs: new Set(listInputs) })

/**
 * A port as the catalog's records of each kind spell it (a model input, a flow output…): the
 * fields of the contract's node input they all have, and those only some have.
 */
type PortLike = Pick<
  FlowNodeInput,
  'name' | 'variable_type_code' | 'validator_code' | 'validator_attrs'
> &
  Partial<Pick<FlowNodeInput, 'is_required' | 'default_value' | 'behavior_code'>> &
  Partial<Pick<ModelInput, 'default_behavior_code'>>

const toPort = (port: PortLike): Port => ({
  name: port.name,
  variable_type_code: port.variable_type_code,
  validator_code: port.validator_code,
  validator_attrs: port.validator_attrs,
  is_required: port.is_required ?? false,
  default_value: port.default_value ?? null,
  behavior_code: port.behavior_code ?? port.default_behavior_code ?? null,
})

const ports = (list: readonly PortLike[] | undefined) => (list ? list.map(toPort) : null)

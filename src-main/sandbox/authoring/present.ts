import type { Flow, FlowInput, FlowOutput, FlowStar } from '../../../src-shared/api'
import type { SandboxServices } from '../services'
import type { StoredNode } from './graph'
import { COLLECTIONS } from './records'

/** A flow as stored in `flows` (and `flow_templates`): always with its whole graph. */
export type StoredFlow = Omit<
  Flow,
  'nodes' | 'inputs' | 'outputs' | 'created_by_user' | 'recent_stars'
> & {
  nodes: StoredNode[]
  inputs: FlowInput[]
  outputs: FlowOutput[]
}

export const RELATIONS = ['created_by_user', 'inputs', 'nodes', 'outputs', 'recent_stars'] as const
export type Relation = (typeof RELATIONS)[number]

/** What creation and graph replacement answer with. */
export const GRAPH: ReadonlySet<Relation> = new Set(['nodes', 'inputs', 'outputs'])

export const MAX_RECENT_STARS = 50

/** `include=nodes,inputs` as a set; the contract has already checked the names. */
export function parseInclude(include: string | null | undefined): ReadonlySet<Relation> {
  if (!include) return new Set()
  return new Set(
    include.split(',').filter((name): name is Relation => RELATIONS.includes(name as Relation)),
  )
}

/** The newest stars of a flow first, at most 50, as the spec caps them. */
export function recentStars(services: SandboxServices, orgId: string, flowId: string): FlowStar[] {
  return services.store.list<FlowStar>(
    { collection: COLLECTIONS.flowStars, orgId, parentId: flowId },
    { limit: MAX_RECENT_STARS, sort_by: 'created_at:desc' },
    { fields: services.contract.scalarFields('FlowStar') },
  ).items
}

/**
 * A flow as answered: its own fields, plus the relations `include` names. The sandbox has no
 * users (only API keys), so `created_by` is null and so is `created_by_user`.
 */
export function presentFlow(
  services: SandboxServices,
  orgId: string,
  flow: StoredFlow,
  include: ReadonlySet<Relation>,
): Flow {
  const { nodes, inputs, outputs, ...fields } = flow
  const answer: Flow = fields
  if (include.has('nodes')) answer.nodes = nodes
  if (include.has('inputs')) answer.inputs = inputs
  if (include.has('outputs')) answer.outputs = outputs
  if (include.has('created_by_user')) answer.created_by_user = null
  if (include.has('recent_stars')) answer.recent_stars = recentStars(services, orgId, flow.id)
  return answer
}

/** A flow without relations, as embedded in a node or a solution link. */
export function bareFlow(flow: StoredFlow): Flow {
  const { nodes: _nodes, inputs: _inputs, outputs: _outputs, ...fields } = flow
  return fields
}

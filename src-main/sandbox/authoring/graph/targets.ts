import type { FlowNodeCreate } from '../../../../src-shared/api'
import type { GraphBuild } from './build'
import type { GraphContext, NodeTarget } from './types'

export const NODE_TYPE_CODES = ['model', 'builtin', 'wfengine_workflow', 'sub_flow'] as const
type NodeTypeCode = (typeof NODE_TYPE_CODES)[number]

const REFERENCE_FIELD = {
  model: 'model_id',
  builtin: 'builtin_node_code',
  wfengine_workflow: 'wfengine_workflow_id',
  sub_flow: 'sub_flow_id',
} as const satisfies Record<NodeTypeCode, string>

const isNodeType = (code: string): code is NodeTypeCode =>
  (NODE_TYPE_CODES as readonly string[]).includes(code)

/**
 * Phase 3: what each node runs (a model, a built-in, a workflow or another flow), found through
 * the resolver. A node whose target is unknown still becomes a record, without port checks: every
 * problem of the request is reported at once, not the first only. Sub-flows may not lead back to
 * this flow, however deep.
 */
export function resolveTargets(
  build: GraphBuild,
  nodeBodies: readonly FlowNodeCreate[],
): (NodeTarget | undefined)[] {
  return nodeBodies.map((node, index) => resolveTarget(build, node, `nodes.${index}`))
}

function resolveTarget(
  build: GraphBuild,
  node: FlowNodeCreate,
  path: string,
): NodeTarget | undefined {
  const { context, problem } = build
  if (!isNodeType(node.type_code)) {
    problem(
      `${path}.type_code`,
      'unknown_code',
      `${path}.type_code ${JSON.stringify(node.type_code)} is not a node type; use one of ${NODE_TYPE_CODES.join(', ')}.`,
    )
    return undefined
  }
  const wanted = REFERENCE_FIELD[node.type_code]
  for (const field of Object.values(REFERENCE_FIELD)) {
    if (field !== wanted && node[field] !== undefined && node[field] !== null) {
      problem(
        `${path}.${field}`,
        'not_allowed',
        `${path}.${field} must be left out on a ${node.type_code} node, which runs ${wanted}.`,
      )
    }
  }
  const reference = node[wanted]
  if (reference === undefined || reference === null) {
    problem(
      `${path}.${wanted}`,
      'required',
      `${path}.${wanted} is required on a ${node.type_code} node.`,
    )
    return undefined
  }
  const field = `${path}.${wanted}`
  switch (node.type_code) {
    case 'model': {
      const target = context.resolver.model(reference)
      if (!target) {
        problem(
          field,
          'not_found',
          `${field} names no model of the catalog; pick one from GET /v1/models.`,
        )
      }
      return target
    }
    case 'builtin': {
      const target = context.resolver.builtin(reference)
      if (!target) {
        problem(
          field,
          'not_found',
          `${field} ${JSON.stringify(reference)} is not a built-in node; pick one from GET /v1/builtin-nodes.`,
        )
      }
      return target
    }
    case 'wfengine_workflow': {
      const target = context.resolver.workflow(reference)
      if (!target) {
        problem(
          field,
          'not_found',
          `${field} names no workflow of this organization; pick one from GET /v1/comfyui-workflows.`,
        )
      }
      return target
    }
    case 'sub_flow': {
      if (reference === context.flowId) {
        problem(
          field,
          'cycle',
          `${field} is this flow itself; a flow cannot run itself as a sub-flow.`,
        )
        return undefined
      }
      const target = context.resolver.flow(reference)
      if (!target) {
        problem(
          field,
          'not_found',
          `${field} names no flow of this organization; pick one from GET /v1/flows.`,
        )
      } else if (runsFlow(context, target)) {
        problem(
          field,
          'cycle',
          `${field} runs this flow again through its own sub-flows; a flow cannot contain itself.`,
        )
      }
      return target
    }
  }
}

/** Whether `target` runs the flow being built, through its sub-flows at any depth. */
function runsFlow(context: GraphContext, target: NodeTarget): boolean {
  const seen = new Set<string>()
  const pending = [...(target.subFlowIds ?? [])]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next === context.flowId) return true
    if (seen.has(next)) continue
    seen.add(next)
    pending.push(...(context.resolver.flow(next)?.subFlowIds ?? []))
  }
  return false
}

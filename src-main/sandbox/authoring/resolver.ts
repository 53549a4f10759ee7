import type { Workflow } from '../../../src-shared/api'
import { decimalToMicro, estimateCost, findModel } from '../models'
import type { RecordStore } from '../store'
import { findBuiltinNode, takesOtherInputs } from './builtins'
import type { GraphResolver, NodeTarget } from './graph'
import { COLLECTIONS } from './records'
import type { StoredFlow } from './present'

function modelTarget(id: string): NodeTarget | undefined {
  const model = findModel(id)
  // findModel also takes slugs; a node names its model by id only.
  if (!model || model.id !== id) return undefined
  return {
    title: model.slug,
    inputs: model.inputs.map((input) => ({ ...input, behavior_code: input.default_behavior_code })),
    outputs: model.outputs,
    estimate: (values) => estimateCost(model, values).micro,
  }
}

function builtinTarget(code: string): NodeTarget | undefined {
  const node = findBuiltinNode(code)
  if (!node) return undefined
  return {
    title: node.display_name,
    inputs: node.inputs,
    outputs: node.outputs,
    otherInputs: takesOtherInputs(code),
  }
}

export function workflowTarget(workflow: Workflow): NodeTarget {
  return {
    title: workflow.name,
    inputs: workflow.inputs.map((input) => ({
      ...input,
      behavior_code: input.default_behavior_code,
    })),
    outputs: workflow.outputs,
  }
}

export function flowTarget(flow: StoredFlow): NodeTarget {
  const estimated = flow.estimated_cost
  return {
    title: flow.name,
    inputs: flow.inputs,
    outputs: flow.outputs,
    estimate: () => (estimated === null ? 0 : decimalToMicro(estimated)),
    subFlowIds: flow.nodes.flatMap((node) => (node.sub_flow_id === null ? [] : [node.sub_flow_id])),
  }
}

/**
 * What the nodes of a flow of `orgId` may run: catalog models, built-ins, the organization's
 * workflows and the global samples, and the organization's other flows.
 */
export function resolverFor(store: RecordStore, orgId: string): GraphResolver {
  return {
    model: modelTarget,
    builtin: builtinTarget,
    workflow: (id) => {
      const workflow = store.get<Workflow>(COLLECTIONS.workflows, id, orgId, {
        includeGlobal: true,
      })
      return workflow ? workflowTarget(workflow) : undefined
    },
    flow: (id) => {
      const flow = store.get<StoredFlow>(COLLECTIONS.flows, id, orgId)
      return flow ? flowTarget(flow) : undefined
    },
  }
}

/** For the global templates: catalog models, built-ins and the sample workflows. */
export function catalogResolver(workflows: readonly Workflow[]): GraphResolver {
  return {
    model: modelTarget,
    builtin: builtinTarget,
    workflow: (id) => {
      const workflow = workflows.find((w) => w.id === id)
      return workflow ? workflowTarget(workflow) : undefined
    },
    flow: () => undefined,
  }
}

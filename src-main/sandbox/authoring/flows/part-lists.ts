import type { Flow, FlowNode } from '../../../../src-shared/api'
import type { HandlerContext, Handlers, OperationId } from '../../handlers/types'
import type { StoredNode } from '../graph'
import { bareFlow, type StoredFlow } from '../present'
import { COLLECTIONS } from '../records'
import type { FlowAccess } from './access'

/**
 * The lists of a flow's parts (its inputs, outputs and nodes, and a node's inputs and outputs),
 * read from the part collections that the writes keep in step; `any` as the parent lists them all.
 */
export function flowPartLists(access: FlowAccess): Handlers {
  const { services, checkParent, requireNode } = access
  const { store, contract } = services

  const partsList = <O extends OperationId>(
    context: HandlerContext<O>,
    collection: string,
    schema: string,
    parentId: string,
  ) =>
    store.list({ collection, orgId: context.auth.orgId, parentId }, context.query, {
      fields: contract.scalarFields(schema),
    }) as never

  return {
    listFlowInputs: (context) => {
      checkParent(context.params.flow_id, context.auth.orgId)
      return partsList(context, COLLECTIONS.flowInputs, 'FlowInput', context.params.flow_id)
    },

    listFlowOutputs: (context) => {
      checkParent(context.params.flow_id, context.auth.orgId)
      return partsList(context, COLLECTIONS.flowOutputs, 'FlowOutput', context.params.flow_id)
    },

    listFlowNodes: (context) => {
      const orgId = context.auth.orgId
      checkParent(context.params.flow_id, orgId)
      const page = store.list<StoredNode>(
        { collection: COLLECTIONS.flowNodes, orgId, parentId: context.params.flow_id },
        context.query,
        { fields: contract.scalarFields('FlowNode') },
      )
      // A projection asked for scalar fields only; otherwise each node comes with its flow.
      if (context.query.fields) return page
      const flows = new Map<string, Flow | null>()
      const flowOf = (id: string) => {
        if (!flows.has(id)) {
          const flow = store.get<StoredFlow>(COLLECTIONS.flows, id, orgId)
          flows.set(id, flow ? bareFlow(flow) : null)
        }
        return flows.get(id) ?? null
      }
      return {
        ...page,
        items: page.items.map((node): FlowNode => ({ ...node, flow: flowOf(node.flow_id) })),
      }
    },

    listFlowNodeInputs: (context) => {
      requireNode(context.params.flow_id, context.params.node_id, context.auth.orgId)
      return partsList(context, COLLECTIONS.flowNodeInputs, 'FlowNodeInput', context.params.node_id)
    },

    listFlowNodeOutputs: (context) => {
      requireNode(context.params.flow_id, context.params.node_id, context.auth.orgId)
      return partsList(
        context,
        COLLECTIONS.flowNodeOutputs,
        'FlowNodeOutput',
        context.params.node_id,
      )
    },
  }
}

import { notFound } from '../../errors'
import type { SandboxServices } from '../../services'
import type { StoredNode } from '../graph'
import type { StoredFlow } from '../present'
import { AuthoringRecords, COLLECTIONS } from '../records'

export const FLOW_NOT_FOUND = 'FLOW_NOT_FOUND'

/**
 * What every group of flow handlers looks records up with, built once per sandbox: the reads, the
 * writes and the part lists answer the same 404s for a missing flow or node.
 */
export interface FlowAccess {
  services: SandboxServices
  records: AuthoringRecords
  requireFlow: (id: string, orgId: string) => StoredFlow
  /** A flow of the organization, or 404; `any` passes, as it names every flow. */
  checkParent: (flowId: string, orgId: string) => void
  requireNode: (flowId: string, nodeId: string, orgId: string) => StoredNode
}

export function flowAccess(services: SandboxServices): FlowAccess {
  const { store } = services
  const records = new AuthoringRecords(store)

  const requireFlow = (id: string, orgId: string): StoredFlow =>
    store.require<StoredFlow>(COLLECTIONS.flows, id, orgId, 'The flow', {
      notFoundCode: FLOW_NOT_FOUND,
    })

  const checkParent = (flowId: string, orgId: string) => {
    if (flowId !== 'any') requireFlow(flowId, orgId)
  }

  const requireNode = (flowId: string, nodeId: string, orgId: string): StoredNode => {
    const node = store.get<StoredNode>(COLLECTIONS.flowNodes, nodeId, orgId)
    if (!node || (flowId !== 'any' && node.flow_id !== flowId)) {
      if (flowId !== 'any') checkParent(flowId, orgId)
      throw notFound('The flow node', 'FLOW_NODE_NOT_FOUND')
    }
    return node
  }

  return { services, records, requireFlow, checkParent, requireNode }
}

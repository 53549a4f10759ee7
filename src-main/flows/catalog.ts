import type { Flow } from '../../src-shared/api'
import type { Ledger, LocalFlowScope, Mirror } from '../db'
import {
  onlineCatalog,
  parseFlowDocument,
  type CompletionReport,
  type FlowCatalog,
  type FlowDocument,
  type OnlineCatalog,
} from '../executor'
import type { ServiceClient } from '../service'

export interface EditorCatalogOptions {
  mirror: Mirror
  ledger: Ledger
  client: ServiceClient
  scope: LocalFlowScope
}

/** Sub-flows nest at most this deep; deeper is a loop validation reports on its own. */
const MAX_DEPTH = 16

/**
 * The executor's online catalog with this machine's flows added as sub-flows: a local flow (out
 * of the trash) is found by id before the mirror's. Completing a flow fetches only what the
 * mirror lacks of the service's models and flows, following local sub-flows here rather than
 * asking the service for flows it never had.
 */
export function editorCatalog(options: EditorCatalogOptions): OnlineCatalog {
  const { mirror, ledger, client, scope } = options
  const online = onlineCatalog({ mirror, client, orgId: scope.orgId })

  const local = (id: string): FlowDocument | undefined => {
    const found = ledger.localFlows.get(scope, id)
    if (!found || found.deletedMs !== null) return undefined
    const parsed = parseFlowDocument(found.flow)
    return parsed.ok ? parsed.flow : undefined
  }

  const catalog: FlowCatalog = {
    ...online.catalog,
    flow: (id): Flow | undefined => local(id) ?? online.catalog.flow(id),
  }

  const complete = async (flow: FlowDocument, signal?: AbortSignal) => {
    const report: CompletionReport = { fetchedModels: 0, fetchedFlows: 0, offline: false }
    const seen = new Set<string>([flow.id])
    const pending: { flow: FlowDocument; depth: number }[] = [{ flow, depth: 0 }]
    for (let next = pending.pop(); next; next = pending.pop()) {
      const localSubFlows: FlowDocument[] = []
      const nodes = next.flow.nodes.filter((node) => {
        if (node.type_code !== 'sub_flow' || !node.sub_flow_id) return true
        const sub = local(node.sub_flow_id)
        if (!sub) return true
        if (!seen.has(sub.id)) {
          seen.add(sub.id)
          localSubFlows.push(sub)
        }
        return false
      })
      const done = await online.complete({ ...next.flow, nodes }, signal)
      report.fetchedModels += done.fetchedModels
      report.fetchedFlows += done.fetchedFlows
      report.offline ||= done.offline
      if (next.depth < MAX_DEPTH) {
        for (const sub of localSubFlows) pending.push({ flow: sub, depth: next.depth + 1 })
      }
    }
    return report
  }

  return { catalog, complete, findFlow: online.findFlow }
}

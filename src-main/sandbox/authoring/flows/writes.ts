import type { Handlers } from '../../handlers/types'
import { microToDecimal } from '../../models'
import { GRAPH, presentFlow, type StoredFlow } from '../present'
import { COLLECTIONS } from '../records'
import { chooseSlug } from '../slug'
import type { FlowAccess } from './access'
import { buildGraph, removeParts, writeParts } from './stored-graph'

/**
 * The operations that change a flow: create, update, delete and replace its graph. Each runs in
 * one transaction, so the flow and its part collections never disagree.
 */
export function flowWrites(access: FlowAccess): Handlers {
  const { services, records, requireFlow } = access
  const { store } = services

  const slugTaken = (orgId: string, slug: string, except?: string) => {
    const holder = records.bySlug<StoredFlow>(COLLECTIONS.flows, orgId, slug)
    return holder !== undefined && holder.id !== except
  }

  const flowSlug = (orgId: string, asked: string | undefined, name: string, except?: string) =>
    chooseSlug({ asked, name, what: 'flow', taken: (slug) => slugTaken(orgId, slug, except) })

  return {
    createFlow: ({ body, auth }) =>
      store.transaction(() => {
        const orgId = auth.orgId
        const id = store.newId()
        const slug = flowSlug(orgId, body.slug, body.name)
        const graph = buildGraph(access, body, orgId, id)
        const now = store.now()
        const flow: StoredFlow = {
          id,
          slug,
          name: body.name,
          description: body.description ?? null,
          cover_url: body.cover_url ?? null,
          org_id: orgId,
          flow_type_code: body.flow_type_code ?? 'standard',
          category_code: body.category_code ?? null,
          visibility_code: body.visibility_code ?? 'private',
          source_visibility_code: body.source_visibility_code ?? 'private',
          status_code: 'active',
          version: 1,
          current_version_id: store.newId(),
          estimated_cost: microToDecimal(graph.estimatedMicro),
          context_variables: body.context_variables ?? {},
          run_count: 0,
          avg_duration: null,
          cost_per_run: null,
          featured_at: null,
          created_by: null,
          created_at: now,
          updated_at: now,
          nodes: graph.nodes,
          inputs: graph.inputs,
          outputs: graph.outputs,
        }
        store.insert(COLLECTIONS.flows, orgId, flow)
        writeParts(access, orgId, id, graph)
        return presentFlow(services, orgId, flow, GRAPH)
      }),

    updateFlow: ({ params, body, auth }) =>
      store.transaction(() => {
        const current = requireFlow(params.flow_id, auth.orgId)
        const slug =
          body.slug === undefined || body.slug === current.slug
            ? current.slug
            : flowSlug(auth.orgId, body.slug, current.name, current.id)
        const updated = store.update<StoredFlow>(
          COLLECTIONS.flows,
          current.id,
          auth.orgId,
          (flow) => ({ ...flow, ...body, slug }),
        )
        return presentFlow(services, auth.orgId, updated, new Set())
      }),

    deleteFlow: ({ params, auth, status }) => {
      store.transaction(() => {
        const flow = requireFlow(params.flow_id, auth.orgId)
        store.remove(COLLECTIONS.flows, flow.id, auth.orgId)
        removeParts(access, auth.orgId, flow)
      })
      status(204)
      return undefined
    },

    replaceFlowGraph: ({ params, body, auth }) =>
      store.transaction(() => {
        const before = requireFlow(params.flow_id, auth.orgId)
        const graph = buildGraph(access, body, auth.orgId, before.id, before)
        writeParts(access, auth.orgId, before.id, graph, before)
        const updated = store.update<StoredFlow>(
          COLLECTIONS.flows,
          before.id,
          auth.orgId,
          (flow) => ({
            ...flow,
            version: flow.version + 1,
            current_version_id: store.newId(),
            estimated_cost: microToDecimal(graph.estimatedMicro),
            nodes: graph.nodes,
            inputs: graph.inputs,
            outputs: graph.outputs,
          }),
        )
        return presentFlow(services, auth.orgId, updated, GRAPH)
      }),
  }
}

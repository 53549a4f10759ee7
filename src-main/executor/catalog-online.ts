import type { Flow } from '../../src-shared/api'
import type { Mirror } from '../db'
import { isServiceError, type ServiceClient } from '../service'
import type { FlowDocument } from './types'
import { mirrorCatalog, type FlowCatalog, type MirrorCatalogOptions } from './validate'

/**
 * The mirror's catalog, completed from the service where a sync left it short: `atelier sync`
 * stores models without their inputs, outputs and pricing and flows without their graph (list
 * items leave them out), which validation would call TARGET_DETAILS_UNKNOWN. `complete(flow)`
 * fetches what the flow's nodes need (GET /v1/models/{id}, which embeds the lists; GET
 * /v1/flows/{id} with `include=nodes,inputs,outputs`, following sub-flows) and writes it into
 * the mirror through its repositories, so the next run — and the app, offline — find it there.
 * Offline, it keeps what is cached and says so; lookups then stay synchronous, as validation
 * wants them.
 */
export interface OnlineCatalog {
  catalog: FlowCatalog
  /** Fetches the details the flow's targets lack in the mirror; never throws for being offline. */
  complete: (flow: FlowDocument, signal?: AbortSignal) => Promise<CompletionReport>
  /** A flow with its graph by id or slug: from the mirror when it has the graph, else fetched. */
  findFlow: (ref: string, signal?: AbortSignal) => Promise<FlowDocument | null>
}

export interface CompletionReport {
  fetchedModels: number
  fetchedFlows: number
  /** The service could not be reached: what the mirror had is all there is. */
  offline: boolean
}

export interface OnlineCatalogOptions extends MirrorCatalogOptions {
  mirror: Mirror
  client: ServiceClient
  orgId: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const hasGraph = (flow: Flow | null | undefined): flow is FlowDocument =>
  !!flow && Array.isArray(flow.nodes) && Array.isArray(flow.inputs) && Array.isArray(flow.outputs)

/** Offline or the service down: the caller goes on with the mirror. */
const unreachable = (error: unknown) =>
  isServiceError(error) && (error.status === 0 || error.status >= 500)

export function onlineCatalog(options: OnlineCatalogOptions): OnlineCatalog {
  const { mirror, client, orgId } = options
  const scope = { orgId }
  const catalog = mirrorCatalog(mirror, orgId, options)
  const headers = { 'X-Organization-Id': orgId }

  const modelKnown = (id: string) => {
    const model = mirror.models.get(scope, id)
    if (!model) return false
    return mirror.models.inputs(scope, id).length > 0 || mirror.models.outputs(scope, id).length > 0
  }

  const fetchModel = async (id: string, signal?: AbortSignal) => {
    try {
      const model = await client.get('/v1/models/{model_id}', {
        params: { path: { model_id: id } },
        headers,
        ...(signal ? { signal } : {}),
      })
      mirror.models.upsertPage([model], scope)
      return true
    } catch (error) {
      // Not there: validation says UNKNOWN_MODEL with the node named.
      if (isServiceError(error) && (error.status === 404 || error.status === 422)) return false
      throw error
    }
  }

  const fetchFlow = async (id: string, signal?: AbortSignal): Promise<FlowDocument | null> => {
    try {
      const flow = await client.get('/v1/flows/{flow_id}', {
        params: { path: { flow_id: id }, query: { include: 'nodes,inputs,outputs' } },
        headers,
        ...(signal ? { signal } : {}),
      })
      mirror.flows.upsertPage([flow], scope)
      return hasGraph(flow) ? flow : null
    } catch (error) {
      if (isServiceError(error) && (error.status === 404 || error.status === 422)) return null
      throw error
    }
  }

  const complete = async (flow: FlowDocument, signal?: AbortSignal): Promise<CompletionReport> => {
    const report: CompletionReport = { fetchedModels: 0, fetchedFlows: 0, offline: false }
    const seenFlows = new Set<string>([flow.id])
    const pending: FlowDocument[] = [flow]
    try {
      while (pending.length > 0) {
        const current = pending.pop() as FlowDocument
        const models = new Set<string>()
        for (const node of current.nodes) {
          if (node.type_code === 'model' && node.model_id && !modelKnown(node.model_id)) {
            models.add(node.model_id)
          }
          if (node.type_code === 'sub_flow' && node.sub_flow_id) {
            const id = node.sub_flow_id
            if (seenFlows.has(id)) continue
            seenFlows.add(id)
            let sub: Flow | null = mirror.flows.get(scope, id)
            if (!hasGraph(sub)) {
              sub = await fetchFlow(id, signal)
              if (sub) report.fetchedFlows++
            }
            if (hasGraph(sub)) pending.push(sub)
          }
        }
        const fetched = await Promise.all([...models].map((id) => fetchModel(id, signal)))
        report.fetchedModels += fetched.filter(Boolean).length
      }
    } catch (error) {
      if (!unreachable(error)) throw error
      report.offline = true
    }
    return report
  }

  const findFlow = async (ref: string, signal?: AbortSignal): Promise<FlowDocument | null> => {
    let id: string | null = UUID.test(ref) ? ref : null
    if (id === null) {
      for (let after: string | null | undefined; ;) {
        const page = mirror.flows.list(scope, { limit: 500, ...(after ? { after } : {}) })
        const found = page.items.find((flow) => flow.slug === ref)
        if (found) {
          id = found.id
          break
        }
        if (!page.next) break
        after = page.next
      }
    }
    const stored = id === null ? null : mirror.flows.get(scope, id)
    if (hasGraph(stored)) return stored
    try {
      if (id === null) {
        const page = await client.get('/v1/flows', {
          params: { query: { q: `slug=${JSON.stringify(ref)}`, limit: 1 } },
          headers,
          ...(signal ? { signal } : {}),
        })
        id = page.items[0]?.id ?? null
        if (id === null) return null
      }
      return await fetchFlow(id, signal)
    } catch (error) {
      if (unreachable(error)) return null
      throw error
    }
  }

  return { catalog, complete, findFlow }
}

import type { Flow, FlowSummary } from '../../../../src-shared/api'
import { notFound } from '../../errors'
import type { HandlerContext, Handlers, OperationId } from '../../handlers/types'
import type { ListParams, Page } from '../../list'
import { parseInclude, presentFlow, type Relation, type StoredFlow } from '../present'
import { COLLECTIONS } from '../records'
import { FLOW_NOT_FOUND, type FlowAccess } from './access'

const SUMMARY_FIELDS: ReadonlySet<string> = new Set<keyof FlowSummary>([
  'id',
  'slug',
  'name',
  'version',
  'status_code',
  'run_count',
  'cost_per_run',
  'updated_at',
])

function pick<T extends object>(
  record: T,
  keys: ReadonlySet<string> | ReadonlySet<Relation>,
): Partial<T> {
  const out: Partial<T> = {}
  for (const [key, value] of Object.entries(record)) {
    if ((keys as ReadonlySet<string>).has(key)) (out as Record<string, unknown>)[key] = value
  }
  return out
}

/**
 * The operations that read whole flows: the organization's flows (list, by id, by owner and
 * slug, summaries) and the flow templates, which answer in the same shape with global records.
 */
export function flowReads(access: FlowAccess): Handlers {
  const { services, records, requireFlow } = access
  const { store, contract } = services

  const listFlows = <O extends OperationId>(
    context: HandlerContext<O>,
    collection: string,
    includeGlobal: boolean,
  ) => {
    const query = context.query as ListParams & { include?: string | null }
    const include = parseInclude(query.include)
    const orgId = context.auth.orgId
    const page = store.list<Partial<StoredFlow> & { id: string }>(
      { collection, orgId, includeGlobal },
      query,
      { fields: contract.scalarFields('Flow') },
    )
    return {
      ...page,
      items: page.items.map((item) => {
        if (query.fields) {
          if (include.size === 0) return item as Flow
          const whole = store.get<StoredFlow>(collection, item.id, orgId, { includeGlobal })
          if (!whole) return item as Flow
          const { id: _id, ...related } = presentFlow(services, orgId, whole, include)
          return { ...item, ...pick(related, include) } as Flow
        }
        return presentFlow(services, orgId, item as StoredFlow, include)
      }),
    } satisfies Page<Flow>
  }

  return {
    listFlows: (context) => listFlows(context, COLLECTIONS.flows, false),

    getFlow: ({ params, query, auth }) =>
      presentFlow(
        services,
        auth.orgId,
        requireFlow(params.flow_id, auth.orgId),
        parseInclude(query.include),
      ),

    lookupFlow: ({ query, auth }) => {
      // Owners are organizations; a key finds flows of the organizations it belongs to only.
      const owner = auth.orgIds.includes(query.owner) ? query.owner : undefined
      const flow = owner && records.bySlug<StoredFlow>(COLLECTIONS.flows, owner, query.slug)
      if (!owner || !flow) {
        throw notFound(
          `The flow with slug ${JSON.stringify(query.slug)} of owner ${JSON.stringify(query.owner)}`,
          FLOW_NOT_FOUND,
        )
      }
      return presentFlow(services, owner, flow, parseInclude(query.include))
    },

    listFlowSummaries: ({ query, auth }) => {
      const page = store.list<Partial<FlowSummary> & { id: string }>(
        { collection: COLLECTIONS.flows, orgId: auth.orgId },
        query,
        { fields: contract.scalarFields('FlowSummary') },
      )
      return {
        ...page,
        items: page.items.map((flow) => pick(flow, SUMMARY_FIELDS) as FlowSummary),
      }
    },

    listFlowTemplates: (context) => listFlows(context, COLLECTIONS.flowTemplates, true),

    getFlowTemplate: ({ params, query, auth }) =>
      presentFlow(
        services,
        auth.orgId,
        store.require<StoredFlow>(
          COLLECTIONS.flowTemplates,
          params.id,
          auth.orgId,
          'The flow template',
          {
            includeGlobal: true,
            notFoundCode: 'FLOW_TEMPLATE_NOT_FOUND',
          },
        ),
        parseInclude(query.include),
      ),
  }
}

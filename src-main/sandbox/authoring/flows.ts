import type { Flow, FlowNode, FlowSummary } from '../../../src-shared/api'
import { SandboxError, invalid, notFound, type FieldProblem } from '../errors'
import type { HandlerContext, Handlers, OperationId } from '../handlers/types'
import type { ListParams, Page } from '../list'
import { microToDecimal } from '../models'
import type { SandboxServices } from '../services'
import {
  buildFlowGraph,
  type BuiltGraph,
  type GraphBody,
  type RecordKind,
  type StoredNode,
  type StoredRecord,
} from './graph'
import {
  GRAPH,
  bareFlow,
  parseInclude,
  presentFlow,
  type Relation,
  type StoredFlow,
} from './present'
import { AuthoringRecords, COLLECTIONS } from './records'
import { resolverFor } from './resolver'
import { chooseSlug } from './slug'

const FLOW_NOT_FOUND = 'FLOW_NOT_FOUND'

const KIND_COLLECTION: Record<RecordKind, string> = {
  node: COLLECTIONS.flowNodes,
  node_input: COLLECTIONS.flowNodeInputs,
  node_output: COLLECTIONS.flowNodeOutputs,
  input: COLLECTIONS.flowInputs,
  output: COLLECTIONS.flowOutputs,
}

interface Part {
  kind: RecordKind
  path: string
  record: StoredRecord
  parentId: string
}

/** Every record of a graph with its kind, its field path in the request and its parent. */
function partsOf(graph: Pick<BuiltGraph, 'nodes' | 'inputs' | 'outputs'>, flowId: string): Part[] {
  const parts: Part[] = []
  graph.inputs.forEach((record, i) => {
    parts.push({ kind: 'input', path: `inputs.${i}`, record, parentId: flowId })
  })
  graph.outputs.forEach((record, i) => {
    parts.push({ kind: 'output', path: `outputs.${i}`, record, parentId: flowId })
  })
  graph.nodes.forEach((node, i) => {
    // The node's row carries its inputs and outputs, as the node lists answer them.
    parts.push({ kind: 'node', path: `nodes.${i}`, record: node, parentId: flowId })
    node.inputs.forEach((record, j) => {
      parts.push({ kind: 'node_input', path: `nodes.${i}.inputs.${j}`, record, parentId: node.id })
    })
    node.outputs.forEach((record, j) => {
      parts.push({
        kind: 'node_output',
        path: `nodes.${i}.outputs.${j}`,
        record,
        parentId: node.id,
      })
    })
  })
  return parts
}

function existingParts(flow: StoredFlow | undefined): Map<string, StoredRecord> {
  const existing = new Map<string, StoredRecord>()
  if (!flow) return existing
  for (const part of partsOf(flow, flow.id)) {
    existing.set(`${part.kind}:${part.record.id}`, part.record)
  }
  return existing
}

export function flowHandlers(services: SandboxServices): Handlers {
  const { store, contract } = services
  const records = new AuthoringRecords(store)

  const requireFlow = (id: string, orgId: string): StoredFlow =>
    store.require<StoredFlow>(COLLECTIONS.flows, id, orgId, 'The flow', {
      notFoundCode: FLOW_NOT_FOUND,
    })

  /** A flow of the organization, or 404; `any` passes, as it names every flow. */
  const checkParent = (flowId: string, orgId: string) => {
    if (flowId !== 'any') requireFlow(flowId, orgId)
  }

  const slugTaken = (orgId: string, slug: string, except?: string) => {
    const holder = records.bySlug<StoredFlow>(COLLECTIONS.flows, orgId, slug)
    return holder !== undefined && holder.id !== except
  }

  const flowSlug = (orgId: string, asked: string | undefined, name: string, except?: string) =>
    chooseSlug({ asked, name, what: 'flow', taken: (slug) => slugTaken(orgId, slug, except) })

  const buildGraph = (body: GraphBody, orgId: string, flowId: string, before?: StoredFlow) => {
    const existing = existingParts(before)
    const graph = buildFlowGraph(body, {
      flowId,
      now: store.now(),
      newId: () => store.newId(),
      existing,
      resolver: resolverFor(store, orgId),
    })
    if (graph.problems.length > 0) {
      const count = graph.problems.length
      throw invalid(
        `The flow's graph has ${count} problem${count === 1 ? '' : 's'}: ${graph.problems
          .slice(0, 3)
          .map((p) => p.message)
          .join(' ')}${count > 3 ? ' …' : ''}`,
        graph.problems,
      )
    }
    // A client-chosen id may already name a record: this flow's own (kept), a deleted one of this
    // organization (taken over), or someone else's (refused: ids are for one record only).
    const taken: FieldProblem[] = []
    for (const part of partsOf(graph, flowId)) {
      if (existing.has(`${part.kind}:${part.record.id}`)) continue
      const holder = records.holder(KIND_COLLECTION[part.kind], part.record.id)
      if (!holder || (holder.org_id === orgId && holder.deleted_at !== null)) continue
      taken.push({
        field: `${part.path}.id`,
        code: 'taken',
        message: `${part.path}.id is already the id of another flow's ${part.kind.replace('_', ' ')}; give it a new id (when copying a flow, give every node, input and output a new id and point source_output_id at the new output ids).`,
      })
    }
    if (taken.length > 0) {
      throw new SandboxError(
        409,
        'ID_TAKEN',
        `${taken.length} id${taken.length === 1 ? ' is' : 's are'} already used elsewhere: ${taken[0]?.message ?? ''}`,
        taken,
      )
    }
    return graph
  }

  /** Brings the part collections in step with the flow's new graph. */
  const writeParts = (orgId: string, flowId: string, graph: BuiltGraph, before?: StoredFlow) => {
    const existing = existingParts(before)
    const kept = new Set<string>()
    for (const part of partsOf(graph, flowId)) {
      const key = `${part.kind}:${part.record.id}`
      kept.add(key)
      const previous = existing.get(key)
      if (previous && JSON.stringify(previous) === JSON.stringify(part.record)) continue
      records.put(KIND_COLLECTION[part.kind], orgId, part.record, part.parentId)
    }
    for (const [key, record] of existing) {
      if (kept.has(key)) continue
      const kind = key.slice(0, key.indexOf(':')) as RecordKind
      records.remove(KIND_COLLECTION[kind], orgId, [record.id])
    }
  }

  const removeParts = (orgId: string, flow: StoredFlow) => {
    for (const part of partsOf(flow, flow.id)) {
      records.remove(KIND_COLLECTION[part.kind], orgId, [part.record.id])
    }
  }

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
    createFlow: ({ body, auth }) =>
      store.transaction(() => {
        const orgId = auth.orgId
        const id = store.newId()
        const slug = flowSlug(orgId, body.slug, body.name)
        const graph = buildGraph(body, orgId, id)
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
        writeParts(orgId, id, graph)
        return presentFlow(services, orgId, flow, GRAPH)
      }),

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
        removeParts(auth.orgId, flow)
      })
      status(204)
      return undefined
    },

    replaceFlowGraph: ({ params, body, auth }) =>
      store.transaction(() => {
        const before = requireFlow(params.flow_id, auth.orgId)
        const graph = buildGraph(body, auth.orgId, before.id, before)
        writeParts(auth.orgId, before.id, graph, before)
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

  function requireNode(flowId: string, nodeId: string, orgId: string): StoredNode {
    const node = store.get<StoredNode>(COLLECTIONS.flowNodes, nodeId, orgId)
    if (!node || (flowId !== 'any' && node.flow_id !== flowId)) {
      if (flowId !== 'any') checkParent(flowId, orgId)
      throw notFound('The flow node', 'FLOW_NODE_NOT_FOUND')
    }
    return node
  }
}

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

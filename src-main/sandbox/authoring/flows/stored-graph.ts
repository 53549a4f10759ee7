import { SandboxError, invalid, type FieldProblem } from '../../errors'
import {
  buildFlowGraph,
  type BuiltGraph,
  type GraphBody,
  type RecordKind,
  type StoredRecord,
} from '../graph'
import type { StoredFlow } from '../present'
import { COLLECTIONS } from '../records'
import { resolverFor } from '../resolver'
import type { FlowAccess } from './access'

// A flow's graph is stored twice: whole on the flow (what GET answers) and record by record in
// the part collections (what the node, input and output lists answer). This module keeps the two
// in step, so the handlers that write a graph say what they do, not how the parts are kept.

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

/** The flow's graph from a request body, or 422 with its problems, or 409 for ids taken. */
export function buildGraph(
  access: FlowAccess,
  body: GraphBody,
  orgId: string,
  flowId: string,
  before?: StoredFlow,
): BuiltGraph {
  const { store } = access.services
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
    const holder = access.records.holder(KIND_COLLECTION[part.kind], part.record.id)
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
export function writeParts(
  access: FlowAccess,
  orgId: string,
  flowId: string,
  graph: BuiltGraph,
  before?: StoredFlow,
): void {
  const existing = existingParts(before)
  const kept = new Set<string>()
  for (const part of partsOf(graph, flowId)) {
    const key = `${part.kind}:${part.record.id}`
    kept.add(key)
    const previous = existing.get(key)
    if (previous && JSON.stringify(previous) === JSON.stringify(part.record)) continue
    access.records.put(KIND_COLLECTION[part.kind], orgId, part.record, part.parentId)
  }
  for (const [key, record] of existing) {
    if (kept.has(key)) continue
    const kind = key.slice(0, key.indexOf(':')) as RecordKind
    access.records.remove(KIND_COLLECTION[kind], orgId, [record.id])
  }
}

export function removeParts(access: FlowAccess, orgId: string, flow: StoredFlow): void {
  for (const part of partsOf(flow, flow.id)) {
    access.records.remove(KIND_COLLECTION[part.kind], orgId, [part.record.id])
  }
}

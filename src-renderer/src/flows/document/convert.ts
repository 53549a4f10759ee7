import type {
  CanvasEdge,
  CanvasNode,
  EditorDoc,
  FileFlow,
  FileFlowFields,
  FileNode,
  FileNodeInput,
} from './types'

/** The width a node gets when its file does not say (the flow format's default). */
export const DEFAULT_NODE_WIDTH = 220

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const hasIdentity = (value: unknown, ...fields: string[]): boolean =>
  isRecord(value) && fields.every((field) => typeof value[field] === 'string')

/** Thrown when the JSON the main process sent is not a flow file at all. */
export class FlowFileUnreadableError extends Error {
  readonly code = 'FLOW_UNREADABLE'
  constructor(what: string) {
    super(`The flow file cannot be opened: ${what}. Export it again or import a fresh copy.`)
    this.name = 'FlowFileUnreadableError'
  }
}

/**
 * Reads the flow file JSON far enough to trust its shape. The main process has checked it with
 * `parseFlowDocument` already; this only guards the editor against a file it could not draw.
 */
export function readFlowFile(json: Record<string, unknown>): FileFlow {
  if (!hasIdentity(json, 'id', 'name')) throw new FlowFileUnreadableError('it has no id or name')
  const lists: [string, string[]][] = [
    ['nodes', ['id', 'type_code']],
    ['inputs', ['id', 'name', 'variable_type_code']],
    ['outputs', ['id', 'name', 'variable_type_code']],
  ]
  for (const [field, identity] of lists) {
    const list = json[field]
    if (list === undefined) continue
    if (!Array.isArray(list) || !list.every((item) => hasIdentity(item, ...identity))) {
      throw new FlowFileUnreadableError(`its ${field} are not a list of ${field}`)
    }
  }
  for (const node of (json.nodes ?? []) as Record<string, unknown>[]) {
    for (const field of ['inputs', 'outputs']) {
      const ports = node[field]
      if (ports === undefined) continue
      if (
        !Array.isArray(ports) ||
        !ports.every((port) => hasIdentity(port, 'id', 'name', 'variable_type_code'))
      ) {
        throw new FlowFileUnreadableError(`the ${field} of node ${String(node.id)} are not ports`)
      }
    }
  }
  return json as FileFlow
}

const numberOr = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback

/** One canvas node for a node record: the record as it is, placed where it says. */
export function canvasNode(record: FileNode): CanvasNode {
  return {
    id: record.id,
    type: 'flowNode',
    position: { x: numberOr(record.x, 0), y: numberOr(record.y, 0) },
    width: numberOr(record.width, DEFAULT_NODE_WIDTH),
    data: { record },
  }
}

/** The flow file JSON as the editor's document. Nothing is dropped or filled in. */
export function flowFileToDoc(json: Record<string, unknown>): EditorDoc {
  const { nodes, ...flow } = readFlowFile(json)
  return {
    flow: flow satisfies FileFlowFields,
    nodes: (nodes ?? []).map(canvasNode),
    hadNodes: nodes !== undefined,
  }
}

/**
 * Writes a number the editor owns (a position) into a record: the file's own field is rewritten,
 * and a field the file left out stays out while it still holds the format's default.
 */
function placed(record: FileNode, field: 'x' | 'y', value: number): Partial<FileNode> {
  return field in record || value !== 0 ? { [field]: value } : {}
}

/** The node's record as the flow file will have it. */
export function nodeRecord(node: CanvasNode): FileNode {
  const { record } = node.data
  return {
    ...record,
    ...placed(record, 'x', node.position.x),
    ...placed(record, 'y', node.position.y),
  }
}

/** The editor's document as flow file JSON, for `flows.save`, `flows.check` and runs. */
export function docToFlowFile(doc: EditorDoc): Record<string, unknown> {
  const file: FileFlow = { ...doc.flow }
  if (doc.hadNodes || doc.nodes.length > 0) file.nodes = doc.nodes.map(nodeRecord)
  return file
}

/** Where each output id lives: node id and the output's type. */
export function outputIndex(
  nodes: readonly CanvasNode[],
): Map<string, { nodeId: string; variableType: string; name: string }> {
  const index = new Map<string, { nodeId: string; variableType: string; name: string }>()
  for (const node of nodes) {
    for (const output of node.data.record.outputs ?? []) {
      if (!index.has(output.id)) {
        index.set(output.id, {
          nodeId: node.id,
          variableType: output.variable_type_code,
          name: output.name,
        })
      }
    }
  }
  return index
}

/** The edge id of the connection into an input: one source per input, so the input names it. */
export const edgeId = (inputId: string) => `edge-${inputId}`

/** The id of a retry edge into an input: an input has one at most, beside its own feed. */
export const retryEdgeId = (inputId: string) => `retry-${inputId}`

/** Words on a retry edge, on the canvas and in its name. */
export const RETRY_LABEL = 'retry'

/**
 * The canvas edges: one per input whose `source_output_id` names an output on the canvas. An
 * input naming an output that is not there draws nothing; the check reports it as dangling.
 * A quality gate's retry edge (`retry_source_output_id`: what the input takes when the gate
 * sends the loop around again) is drawn too, marked `retry`; it runs backwards, against the
 * flow of data, by its nature.
 */
export function edgesOf(nodes: readonly CanvasNode[]): CanvasEdge[] {
  const outputs = outputIndex(nodes)
  const edges: CanvasEdge[] = []
  for (const node of nodes) {
    for (const input of node.data.record.inputs ?? []) {
      const source = input.source_output_id ? outputs.get(input.source_output_id) : undefined
      if (source && input.source_output_id) {
        edges.push({
          id: edgeId(input.id),
          source: source.nodeId,
          sourceHandle: input.source_output_id,
          target: node.id,
          targetHandle: input.id,
          data: { variableType: source.variableType },
        })
      }
      const retry = input.retry_source_output_id
        ? outputs.get(input.retry_source_output_id)
        : undefined
      if (retry && input.retry_source_output_id) {
        edges.push({
          id: retryEdgeId(input.id),
          source: retry.nodeId,
          sourceHandle: input.retry_source_output_id,
          target: node.id,
          targetHandle: input.id,
          type: 'retry',
          label: RETRY_LABEL,
          data: { variableType: retry.variableType, retry: true },
        })
      }
    }
  }
  return edges
}

/** The input an edge ends at, by the edge's target handle. */
export function inputOfEdge(
  nodes: readonly CanvasNode[],
  edge: Pick<CanvasEdge, 'target' | 'targetHandle'>,
): { node: CanvasNode; input: FileNodeInput } | null {
  const node = nodes.find((candidate) => candidate.id === edge.target)
  const input = node?.data.record.inputs?.find((candidate) => candidate.id === edge.targetHandle)
  return node && input ? { node, input } : null
}

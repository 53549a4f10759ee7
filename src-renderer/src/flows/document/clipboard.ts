import { nodeRecord, canvasNode } from './convert'
import { randomId, uniqueLabel, type NewId } from './edits'
import type { CanvasNode, EditorDoc, FileNode } from './types'

/** What Ctrl/Cmd+C keeps: the copied nodes' records, placed, with the edges among them. */
export interface ClipboardNodes {
  nodes: FileNode[]
}

export function copyNodes(doc: EditorDoc, nodeIds: ReadonlySet<string>): ClipboardNodes | null {
  const nodes = doc.nodes.filter((node) => nodeIds.has(node.id)).map(nodeRecord)
  return nodes.length > 0 ? { nodes: structuredClone(nodes) } : null
}

/** How far a pasted copy sits from what it copies, so both stay visible. */
export const PASTE_OFFSET = 40

/**
 * Pastes copies: every node, input and output gets a new id, edges among the copies follow
 * them, and edges from nodes that were not copied are dropped. The copies fill no flow output
 * (a flow output takes one node output) and lose their slug (slugs are unique in a flow).
 */
export function pasteNodes(
  doc: EditorDoc,
  clipboard: ClipboardNodes,
  newId: NewId = randomId,
  offset = PASTE_OFFSET,
): { doc: EditorDoc; pastedIds: string[] } {
  const ids = new Map<string, string>()
  const renamed = (id: string) => {
    let next = ids.get(id)
    if (next === undefined) {
      next = newId()
      ids.set(id, next)
    }
    return next
  }
  for (const record of clipboard.nodes) {
    renamed(record.id)
    for (const output of record.outputs ?? []) renamed(output.id)
  }
  const placed: CanvasNode[] = []
  for (const source of structuredClone(clipboard.nodes)) {
    const { flow_outputs: _filled, ...config } = source.config ?? {}
    const nodeId = renamed(source.id)
    const record: FileNode = {
      ...source,
      id: nodeId,
      ...('flow_id' in source ? { flow_id: doc.flow.id } : {}),
      label: uniqueLabel([...doc.nodes, ...placed], source.label),
      x: (source.x ?? 0) + offset,
      y: (source.y ?? 0) + offset,
      ...(source.slug !== undefined ? { slug: null } : {}),
      ...(source.config !== undefined ? { config } : {}),
      inputs: source.inputs?.map((input) => ({
        ...input,
        id: newId(),
        ...('flow_node_id' in input ? { flow_node_id: nodeId } : {}),
        ...('source_output_id' in input
          ? {
              source_output_id: input.source_output_id
                ? (ids.get(input.source_output_id) ?? null)
                : null,
            }
          : {}),
        ...('retry_source_output_id' in input
          ? {
              retry_source_output_id: input.retry_source_output_id
                ? (ids.get(input.retry_source_output_id) ?? null)
                : null,
            }
          : {}),
      })),
      outputs: source.outputs?.map((output) => ({
        ...output,
        id: renamed(output.id),
        ...('flow_node_id' in output ? { flow_node_id: nodeId } : {}),
      })),
    }
    if (source.inputs === undefined) delete record.inputs
    if (source.outputs === undefined) delete record.outputs
    placed.push(canvasNode(record))
  }
  return {
    doc: { ...doc, nodes: [...doc.nodes, ...placed] },
    pastedIds: placed.map((node) => node.id),
  }
}

import dagre from '@dagrejs/dagre'
import type { XYPosition } from '@xyflow/react'
import { edgesOf } from './convert'
import type { CanvasNode } from './types'

/** The height assumed for a node the canvas has not measured yet. */
const UNMEASURED_HEIGHT = 120

export interface Size {
  width: number
  height: number
}

/**
 * New positions for the nodes, data flowing left to right (dagre's layered layout), sized as
 * the canvas measured them so that tall nodes do not overlap.
 */
export function autoLayout(
  nodes: readonly CanvasNode[],
  sizes: Readonly<Record<string, Size>>,
): Map<string, XYPosition> {
  const graph = new dagre.graphlib.Graph<object, Size, object>()
  graph.setGraph({ rankdir: 'LR', nodesep: 40, ranksep: 90, marginx: 20, marginy: 20 })
  graph.setDefaultEdgeLabel(() => ({}))
  const size = (node: CanvasNode): Size =>
    sizes[node.id] ?? { width: node.width ?? 220, height: UNMEASURED_HEIGHT }
  for (const node of nodes) graph.setNode(node.id, size(node))
  // Retry edges run backwards by their nature: laid out, they would turn the flow around.
  for (const edge of edgesOf(nodes)) {
    if (!edge.data?.retry) graph.setEdge(edge.source, edge.target)
  }
  dagre.layout(graph)
  const positions = new Map<string, XYPosition>()
  for (const node of nodes) {
    const placed = graph.node(node.id) as (Size & { x?: number; y?: number }) | undefined
    if (placed?.x === undefined || placed.y === undefined) continue
    const { width, height } = size(node)
    // dagre places centres; the canvas places top-left corners.
    positions.set(node.id, {
      x: Math.round(placed.x - width / 2),
      y: Math.round(placed.y - height / 2),
    })
  }
  return positions
}

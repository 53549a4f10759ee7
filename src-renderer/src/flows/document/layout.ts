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
 * What a run adds below a node (flows.css): an image preview (at most 180 px and its border)
 * for a node with an image or video output, a few lines of words for one with a text output.
 */
const PREVIEW_ROOM = 182
const TEXT_ROOM = 78

/**
 * How tall a node will be once a run has shown its result: its measured height, plus the room
 * its preview will take when it does not show one yet. Laying out with this keeps a run's
 * previews from growing a node over the one below it.
 */
export function grownHeight(node: CanvasNode, height: number, showsResult: boolean): number {
  if (showsResult) return height
  const types = (node.data.record.outputs ?? []).map((output) => output.variable_type_code)
  if (types.some((type) => /image|video/.test(type))) return height + PREVIEW_ROOM
  if (types.some((type) => /text|string/.test(type))) return height + TEXT_ROOM
  return height
}

/**
 * New positions for the nodes, data flowing left to right (dagre's layered layout), sized as
 * the canvas measured them and with room for the previews a run adds (`showingResults`: the
 * nodes that show theirs already), so that tall nodes do not overlap.
 */
export function autoLayout(
  nodes: readonly CanvasNode[],
  sizes: Readonly<Record<string, Size>>,
  showingResults: ReadonlySet<string> = new Set(),
): Map<string, XYPosition> {
  const graph = new dagre.graphlib.Graph<object, Size, object>()
  graph.setGraph({ rankdir: 'LR', nodesep: 40, ranksep: 90, marginx: 20, marginy: 20 })
  graph.setDefaultEdgeLabel(() => ({}))
  const size = (node: CanvasNode): Size => {
    const measured = sizes[node.id] ?? { width: node.width ?? 220, height: UNMEASURED_HEIGHT }
    return {
      width: measured.width,
      height: grownHeight(node, measured.height, showingResults.has(node.id)),
    }
  }
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

/** A part of the canvas, in flow units. */
export interface Area {
  x: number
  y: number
  width: number
  height: number
}

/** Between a placed node and the others, and the view's edges. */
const SPOT_GAP = 40

/**
 * Where a node added without a drop point goes: in the part of the canvas in view (`view`, in
 * flow units), on no other node (with room for their previews), first along the top left to
 * right, then row by row; the view's centre when it is full. Off view, a new node would look as
 * if nothing was added.
 */
export function spotInView(
  nodes: readonly CanvasNode[],
  sizes: Readonly<Record<string, Size>>,
  view: Area,
  // Not measured yet: with room for the words or picture its run will add.
  size: Size = { width: 220, height: UNMEASURED_HEIGHT + PREVIEW_ROOM },
): XYPosition {
  const taken = nodes.map((node): Area => {
    const measured = sizes[node.id] ?? { width: node.width ?? 220, height: UNMEASURED_HEIGHT }
    return {
      x: node.position.x - SPOT_GAP / 2,
      y: node.position.y - SPOT_GAP / 2,
      width: measured.width + SPOT_GAP,
      height: grownHeight(node, measured.height, false) + SPOT_GAP,
    }
  })
  const free = (x: number, y: number) =>
    taken.every(
      (box) =>
        x + size.width <= box.x ||
        x >= box.x + box.width ||
        y + size.height <= box.y ||
        y >= box.y + box.height,
    )
  const step = SPOT_GAP
  const right = view.x + view.width - size.width - SPOT_GAP
  const bottom = view.y + view.height - size.height - SPOT_GAP
  for (let y = view.y + SPOT_GAP; y <= bottom; y += step) {
    for (let x = view.x + SPOT_GAP; x <= right; x += step) {
      if (free(x, y)) return { x: Math.round(x), y: Math.round(y) }
    }
  }
  return {
    x: Math.round(view.x + (view.width - size.width) / 2),
    y: Math.round(view.y + (view.height - size.height) / 2),
  }
}

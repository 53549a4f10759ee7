import {
  getBezierPath,
  Position,
  useStoreApi,
  ViewportPortal,
  type InternalNode,
  type ReactFlowState,
  type XYPosition,
} from '@xyflow/react'
import { useSyncExternalStore } from 'react'
import type { CanvasEdge } from './document'
import type { LivePositions } from './liveDrag'
import { retryPath } from './RetryEdge'

type Lookup = ReactFlowState['nodeLookup']

/**
 * How far from the flow's origin the layer reaches, each way. It clips what it draws to its box
 * (the browser then lays it out on its own, not its ancestors with it), so the box is larger than
 * any flow: the browser only rasterizes the part in view.
 */
const REACH = 100_000

/** Where an edge leaves its source port (right side) and enters its target port (left side). */
function portPoint(
  node: InternalNode | undefined,
  type: 'source' | 'target',
  handleId: string | null | undefined,
  live: ReadonlyMap<string, XYPosition>,
): XYPosition | null {
  const handle = node?.internals.handleBounds?.[type]?.find((bounds) => bounds.id === handleId)
  if (!node || !handle) return null
  const { x, y } = live.get(node.id) ?? node.internals.positionAbsolute
  return {
    x: x + handle.x + (type === 'source' ? handle.width : 0),
    y: y + handle.y + handle.height / 2,
  }
}

function pathOf(
  nodes: Lookup,
  edge: CanvasEdge,
  live: ReadonlyMap<string, XYPosition>,
): string | null {
  const from = portPoint(nodes.get(edge.source), 'source', edge.sourceHandle, live)
  const to = portPoint(nodes.get(edge.target), 'target', edge.targetHandle, live)
  if (!from || !to) return null
  if (edge.data?.retry) return retryPath(from.x, from.y, to.x, to.y).path
  const [path] = getBezierPath({
    sourceX: from.x,
    sourceY: from.y,
    sourcePosition: Position.Right,
    targetX: to.x,
    targetY: to.y,
    targetPosition: Position.Left,
  })
  return path
}

/**
 * The edges of the nodes being dragged, drawn in one layer of their own above the other nodes
 * while the drag lasts; React Flow does not draw them meanwhile (the canvas gives them `hidden`).
 * Each of React Flow's edges is an element among 1,500 others in one container, and a moved
 * edge had the browser lay the whole page out again at every frame; this layer clips to its box,
 * which makes the browser lay it out alone. The paths are the canvas's own (React Flow's bezier,
 * or a retry edge's, between the same handles).
 */
export function MovingEdges({
  edges,
  live,
}: {
  edges: readonly CanvasEdge[]
  live: LivePositions
}) {
  const positions = useSyncExternalStore(live.subscribe, live.get)
  // Read, not followed: during a drag only the dragged nodes move, and they are in `positions`.
  const nodes = useStoreApi().getState().nodeLookup
  const paths = edges.map((edge) => pathOf(nodes, edge, positions))
  if (edges.length === 0) return null
  return (
    <ViewportPortal>
      <svg
        className="moving-edges"
        width={2 * REACH}
        height={2 * REACH}
        viewBox={`${-REACH} ${-REACH} ${2 * REACH} ${2 * REACH}`}
        aria-hidden="true"
      >
        {edges.map((edge, i) => {
          const path = paths[i]
          return path ? (
            <path key={edge.id} className={`moving-edge ${edge.className ?? ''}`} d={path} />
          ) : null
        })}
      </svg>
    </ViewportPortal>
  )
}

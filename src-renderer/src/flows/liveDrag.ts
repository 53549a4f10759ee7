import type { NodeChange, XYPosition } from '@xyflow/react'
import { useCallback, useRef, useState, type RefObject } from 'react'
import type { CanvasNode } from './document'

/** Where the nodes being dragged are now, readable outside React (`MovingEdges` follows it). */
export interface LivePositions {
  get: () => ReadonlyMap<string, XYPosition>
  subscribe: (listener: () => void) => () => void
}

const NO_POSITIONS: ReadonlyMap<string, XYPosition> = new Map()
const NOTHING: ReadonlySet<string> = new Set()

function livePositions(): LivePositions & { set: (next: ReadonlyMap<string, XYPosition>) => void } {
  let positions = NO_POSITIONS
  const listeners = new Set<() => void>()
  return {
    get: () => positions,
    set: (next) => {
      positions = next
      for (const listener of listeners) listener()
    },
    subscribe: (listener) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
  }
}

/** Where something else on the canvas goes when nodes move: a group's frame, resized. */
export interface Placement {
  x: number
  y: number
  width: number
  height: number
}

/** React Flow's own transform of a node at a position (NodeWrapper), so React finds it as set. */
export const nodeTransform = ({ x, y }: XYPosition) => `translate(${String(x)}px,${String(y)}px)`

/**
 * A drag of nodes on the canvas, kept out of React until it ends. React Flow reports a position
 * at every pointer move; putting each through the document, then through React Flow's store,
 * ran every subscriber of both (a few for each of 1,000 nodes and 1,500 edges) sixty times a
 * second. Instead the dragged nodes are moved where the browser draws them (the same transform
 * React Flow sets), their edges follow in `MovingEdges`, and at the drag's end the store takes
 * the last positions as one undo step, which moves them in React Flow's store as well.
 *
 * React writes a style only when it differs from what it rendered last, so a node that renders
 * again during the drag keeps the transform set here; and the canvas's nodes are made with the
 * live positions whenever it renders meanwhile (`live.get()`), so React Flow never puts a node
 * back where the drag started.
 *
 * `follow` says what else moves with the nodes (the frames of their groups), by React Flow node
 * id. `moving`: the ids of the dragged nodes, which change at the start and the end of a drag.
 */
export function useLiveDrag(
  applyNodeChanges: (changes: NodeChange<CanvasNode>[]) => void,
  canvas: RefObject<HTMLElement | null>,
  follow: (positions: ReadonlyMap<string, XYPosition>) => Iterable<[string, Placement]>,
) {
  const [live] = useState(livePositions)
  const [moving, setMoving] = useState(NOTHING)
  const elements = useRef(new Map<string, HTMLElement | null>())

  const place = useCallback(
    (id: string, position: XYPosition, size?: { width: number; height: number }) => {
      let element = elements.current.get(id)
      if (element === undefined) {
        const selector = `.react-flow__node[data-id="${CSS.escape(id)}"]`
        element = canvas.current?.querySelector<HTMLElement>(selector) ?? null
        elements.current.set(id, element)
      }
      if (!element) return
      element.style.transform = nodeTransform(position)
      if (size) {
        element.style.width = `${String(size.width)}px`
        element.style.height = `${String(size.height)}px`
      }
    },
    [canvas],
  )

  const onNodesChange = useCallback(
    (changes: NodeChange<CanvasNode>[]) => {
      const moves = new Map<string, XYPosition>()
      const rest: NodeChange<CanvasNode>[] = []
      for (const change of changes) {
        if (change.type === 'position' && change.dragging === true && change.position) {
          moves.set(change.id, change.position)
        } else rest.push(change)
      }
      if (moves.size > 0) {
        const current = live.get()
        const added = [...moves.keys()].some((id) => !current.has(id))
        const next = new Map([...current, ...moves])
        for (const [id, position] of moves) place(id, position)
        for (const [id, { x, y, width, height }] of follow(next)) {
          place(id, { x, y }, { width, height })
        }
        live.set(next)
        if (added) setMoving(new Set(next.keys()))
      }
      if (rest.length > 0) {
        applyNodeChanges(rest)
        // The drag's end moved the nodes in the document: the live positions have served.
        if (rest.some((change) => change.type === 'position' && change.dragging === false)) {
          live.set(NO_POSITIONS)
          elements.current.clear()
          setMoving(NOTHING)
        }
      }
    },
    [applyNodeChanges, live, place, follow],
  )

  return { live: live as LivePositions, moving, onNodesChange }
}

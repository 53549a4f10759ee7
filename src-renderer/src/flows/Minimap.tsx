import { Panel, useReactFlow, useStore, type ReactFlowState } from '@xyflow/react'
import { memo, useMemo, useRef, type PointerEvent, type WheelEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { DEFAULT_NODE_WIDTH, type CanvasEdge, type CanvasNode, type Size } from './document'

const WIDTH = 200
const HEIGHT = 150
/** Around the drawing, in minimap pixels. */
const MARGIN = 5
/** The height assumed for a node the canvas has not measured yet. */
const UNMEASURED_HEIGHT = 120
const WHEEL_ZOOM = 1.2
/** A press that moves less than this (minimap pixels) is a click: it centres the view there. */
const CLICK_SLOP = 3

interface Box {
  x: number
  y: number
  width: number
  height: number
}

function union(boxes: readonly Box[]): Box | null {
  if (boxes.length === 0) return null
  let left = Infinity
  let top = Infinity
  let right = -Infinity
  let bottom = -Infinity
  for (const box of boxes) {
    left = Math.min(left, box.x)
    top = Math.min(top, box.y)
    right = Math.max(right, box.x + box.width)
    bottom = Math.max(bottom, box.y + box.height)
  }
  return { x: left, y: top, width: right - left, height: bottom - top }
}

const rectPath = (box: Box) => `M${box.x},${box.y}h${box.width}v${box.height}h${-box.width}z`

/** Every node as one path: one element to lay out and paint, however many nodes there are. */
const NodeShapes = memo(function NodeShapes({ boxes }: { boxes: readonly Box[] }) {
  return <path className="react-flow__minimap-node" d={boxes.map(rectPath).join('')} />
})

const viewOf = (s: ReactFlowState) => ({
  x: s.transform[0],
  y: s.transform[1],
  zoom: s.transform[2],
  width: s.width,
  height: s.height,
  minZoom: s.minZoom,
  maxZoom: s.maxZoom,
})

/**
 * The flow in small, with the part in view: drag it to move the view, click to centre the view
 * there, scroll to zoom. It draws the document's positions, not the canvas's live ones, so it is
 * still while a drag lasts and catches up when the node is dropped (React Flow's own minimap
 * subscribes once per node to the canvas and drew all of them again at every move).
 */
export function Minimap() {
  const { nodes, measured } = useAppStore(
    useShallow((s) => ({ nodes: s.doc?.nodes, measured: s.measured })),
  )
  const view = useStore(useShallow(viewOf))
  const { setViewport } = useReactFlow<CanvasNode, CanvasEdge>()
  const press = useRef<{ x: number; y: number; view: typeof view; moved: boolean } | null>(null)

  const boxes = useMemo(
    () =>
      (nodes ?? []).map((node): Box => {
        const size: Size | undefined = measured[node.id]
        return {
          x: node.position.x,
          y: node.position.y,
          // Not measured yet: drawn at the width it will have, not as a sliver.
          width: size?.width ?? node.width ?? DEFAULT_NODE_WIDTH,
          height: size?.height ?? UNMEASURED_HEIGHT,
        }
      }),
    [nodes, measured],
  )
  const drawn = useMemo(() => union(boxes), [boxes])

  const inView: Box = {
    x: -view.x / view.zoom,
    y: -view.y / view.zoom,
    width: view.width / view.zoom,
    height: view.height / view.zoom,
  }
  const bounds = union(drawn ? [drawn, inView] : [inView]) ?? inView
  // Flow units per minimap pixel: the whole drawing fits within the margin, centred.
  const scale = Math.max(
    bounds.width / (WIDTH - 2 * MARGIN),
    bounds.height / (HEIGHT - 2 * MARGIN),
    Number.MIN_VALUE,
  )
  const shown: Box = {
    x: bounds.x - (WIDTH * scale - bounds.width) / 2,
    y: bounds.y - (HEIGHT * scale - bounds.height) / 2,
    width: WIDTH * scale,
    height: HEIGHT * scale,
  }

  /** The flow point under the pointer. */
  const flowPoint = (event: PointerEvent<SVGSVGElement>) => {
    const rect = event.currentTarget.getBoundingClientRect()
    return {
      x: shown.x + ((event.clientX - rect.left) / rect.width) * shown.width,
      y: shown.y + ((event.clientY - rect.top) / rect.height) * shown.height,
    }
  }

  const onPointerDown = (event: PointerEvent<SVGSVGElement>) => {
    event.currentTarget.setPointerCapture(event.pointerId)
    press.current = { x: event.clientX, y: event.clientY, view, moved: false }
  }
  const onPointerMove = (event: PointerEvent<SVGSVGElement>) => {
    const start = press.current
    if (!start) return
    const dx = event.clientX - start.x
    const dy = event.clientY - start.y
    if (!start.moved && Math.hypot(dx, dy) < CLICK_SLOP) return
    start.moved = true
    const rect = event.currentTarget.getBoundingClientRect()
    const perPixel = shown.width / rect.width
    void setViewport({
      x: start.view.x - dx * perPixel * start.view.zoom,
      y: start.view.y - dy * perPixel * start.view.zoom,
      zoom: start.view.zoom,
    })
  }
  const onPointerUp = (event: PointerEvent<SVGSVGElement>) => {
    const start = press.current
    press.current = null
    if (!start || start.moved) return
    const point = flowPoint(event)
    void setViewport({
      x: view.width / 2 - point.x * view.zoom,
      y: view.height / 2 - point.y * view.zoom,
      zoom: view.zoom,
    })
  }
  const onWheel = (event: WheelEvent<SVGSVGElement>) => {
    const factor = event.deltaY < 0 ? WHEEL_ZOOM : 1 / WHEEL_ZOOM
    const zoom = Math.min(view.maxZoom, Math.max(view.minZoom, view.zoom * factor))
    const centre = {
      x: (view.width / 2 - view.x) / view.zoom,
      y: (view.height / 2 - view.y) / view.zoom,
    }
    void setViewport({
      x: view.width / 2 - centre.x * zoom,
      y: view.height / 2 - centre.y * zoom,
      zoom,
    })
  }

  // Nothing to show: an empty frame would read as a blank white box over the canvas.
  if (!drawn) return null

  return (
    <Panel position="bottom-right" className="react-flow__minimap flow-minimap">
      <svg
        className="react-flow__minimap-svg"
        width={WIDTH}
        height={HEIGHT}
        viewBox={`${shown.x} ${shown.y} ${shown.width} ${shown.height}`}
        role="img"
        aria-label="Minimap of the flow"
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={() => {
          press.current = null
        }}
        onWheel={onWheel}
      >
        <NodeShapes boxes={boxes} />
        <path
          className="react-flow__minimap-mask"
          d={`${rectPath(shown)}${rectPath(inView)}`}
          fillRule="evenodd"
          pointerEvents="none"
        />
      </svg>
    </Panel>
  )
}

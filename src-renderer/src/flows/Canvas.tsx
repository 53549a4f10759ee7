import {
  Background,
  Controls,
  ReactFlow,
  useReactFlow,
  useStore,
  type Connection,
  type Edge,
  type EdgeTypes,
  type IsValidConnection,
  type NodeChange,
  type NodeTypes,
  type XYPosition,
} from '@xyflow/react'
import '@xyflow/react/dist/style.css'
import { useCallback, useMemo, useRef, useState, type DragEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { framesFollowing, frameNodes, nodeChangesOf } from './canvasGroups'
import { CanvasNodeView } from './CanvasNodeView'
import { FAR_ZOOM, FarViewContext } from './farView'
import { GroupFrame, type GroupFrameNode } from './GroupFrame'
import { useLiveDrag } from './liveDrag'
import { Minimap } from './Minimap'
import { MovingEdges } from './MovingEdges'
import { RetryEdge } from './RetryEdge'
import { edgesOf, judgeConnection, type CanvasEdge, type CanvasNode, type Size } from './document'
import { paletteKey, PALETTE_MIME } from './paletteDrag'
import { typeFamily } from './words'

/**
 * Fitting the view: not so far out that only labels are left (a wide flow is then seen in part,
 * centred, and scrolled to), not so close in that two nodes blow up past the canvas.
 */
const FIT_VIEW = { padding: 0.12, minZoom: 0.6, maxZoom: 1.25 }

const NODE_TYPES: NodeTypes = { flowNode: CanvasNodeView, groupFrame: GroupFrame }
const EDGE_TYPES: EdgeTypes = { retry: RetryEdge }

/** What React Flow is given as nodes: the flow's nodes, and the frames of their groups. */
type CanvasItem = CanvasNode | GroupFrameNode

/** The frames that follow the dragged nodes, from the store as it is now. */
const following = (positions: ReadonlyMap<string, XYPosition>) =>
  framesFollowing(positions, useAppStore.getState())

/**
 * The canvas node React Flow is given: the document's node with its selection and measured size,
 * reused while none of the three changed, so React Flow does not re-measure what did not move.
 */
const views = new WeakMap<
  CanvasNode,
  { selected: boolean; size: Size | undefined; view: CanvasNode }
>()

function viewOf(node: CanvasNode, selected: boolean, size: Size | undefined): CanvasNode {
  const hit = views.get(node)
  if (hit?.selected === selected && hit.size === size) return hit.view
  const view: CanvasNode = { ...node, selected, ...(size ? { measured: size } : {}) }
  views.set(node, { selected, size, view })
  return view
}

const edgeViews = new WeakMap<
  CanvasEdge,
  { selected: boolean; hidden: boolean; view: CanvasEdge }
>()

/**
 * The same for edges: React Flow re-renders each edge whose object is new. `hidden` while
 * `MovingEdges` draws it.
 */
function edgeView(edge: CanvasEdge, selected: boolean, hidden: boolean): CanvasEdge {
  const hit = edgeViews.get(edge)
  if (hit?.selected === selected && hit.hidden === hidden) return hit.view
  const view: CanvasEdge = {
    ...edge,
    selected,
    hidden,
    className: `edge type-${typeFamily(edge.data?.variableType ?? '')}${edge.data?.retry ? ' retry' : ''}`,
  }
  edgeViews.set(edge, { selected, hidden, view })
  return view
}

export function Canvas() {
  const {
    doc,
    selection,
    measured,
    readOnly,
    palette,
    theme,
    applyNodeChanges,
    applyEdgeChanges,
    connectPorts,
    addPaletteNode,
    select,
  } = useAppStore(
    useShallow((s) => ({
      doc: s.doc,
      selection: s.selection,
      measured: s.measured,
      readOnly: s.editor?.readOnly ?? true,
      palette: s.palette,
      theme: s.theme,
      applyNodeChanges: s.applyNodeChanges,
      applyEdgeChanges: s.applyEdgeChanges,
      connectPorts: s.connectPorts,
      addPaletteNode: s.addPaletteNode,
      select: s.select,
    })),
  )
  const { screenToFlowPosition } = useReactFlow<CanvasItem, CanvasEdge>()
  const far = useStore((s) => s.transform[2] < FAR_ZOOM)
  const canvas = useRef<HTMLDivElement>(null)
  const { live, moving, onNodesChange } = useLiveDrag(applyNodeChanges, canvas, following)
  const docNodes = doc?.nodes
  // The first fit is for a flow that has nodes: fitting the first node dropped on an empty
  // canvas blew it up to fill the canvas.
  const [fitOnOpen] = useState(() => (useAppStore.getState().doc?.nodes.length ?? 0) > 0)

  const flowNodes = useMemo(() => {
    const selected = new Set(selection.nodeIds)
    // During a drag (`moving`), where the dragged nodes are now, not where they started.
    const positions = moving.size > 0 ? live.get() : null
    return (docNodes ?? []).map((node) => {
      const view = viewOf(node, selected.has(node.id), measured[node.id])
      const position = positions?.get(node.id)
      return position ? { ...view, position } : view
    })
  }, [docNodes, selection.nodeIds, measured, moving, live])
  const nodes = useMemo(
    (): CanvasItem[] => [
      ...frameNodes(doc, measured, selection.groupIds, moving.size > 0 ? live.get() : null),
      ...flowNodes,
    ],
    [doc, measured, selection.groupIds, moving, live, flowNodes],
  )

  const onItemsChange = useCallback(
    (changes: NodeChange<CanvasItem>[]) => {
      const state = useAppStore.getState()
      const { nodeChanges, groupSelection } = nodeChangesOf(changes, state)
      if (groupSelection.size > 0) {
        const groupIds = new Set(state.selection.groupIds)
        for (const [id, selected] of groupSelection) {
          if (selected) groupIds.add(id)
          else groupIds.delete(id)
        }
        select({ groupIds: [...groupIds] })
      }
      if (nodeChanges.length > 0) onNodesChange(nodeChanges)
    },
    [onNodesChange, select],
  )

  const [edgesFor] = useState(memoizedEdges)
  const baseEdges = edgesFor(docNodes ?? [])
  const { edges, movingEdges } = useMemo(() => {
    const selected = new Set(selection.edgeIds)
    const apart = new Set(
      moving.size > 0
        ? baseEdges.filter((edge) => moving.has(edge.source) || moving.has(edge.target))
        : [],
    )
    const drawnApart: CanvasEdge[] = []
    const views = baseEdges.map((edge) => {
      const view = edgeView(edge, selected.has(edge.id), apart.has(edge))
      if (apart.has(edge)) drawnApart.push(view)
      return view
    })
    return { edges: views, movingEdges: drawnApart }
  }, [baseEdges, selection.edgeIds, moving])

  // Refused as it is drawn: React Flow greys the handle out and draws nothing.
  const isValidConnection = useCallback<IsValidConnection<CanvasEdge>>(
    (connection: Edge | Connection) => {
      const current = useAppStore.getState().doc
      return current ? judgeConnection(current.nodes, connection).ok : false
    },
    [],
  )

  const onDragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(PALETTE_MIME)) return
    event.preventDefault()
    event.dataTransfer.dropEffect = 'copy'
  }, [])

  const onDrop = useCallback(
    (event: DragEvent) => {
      const key = event.dataTransfer.getData(PALETTE_MIME)
      const item = palette?.find((candidate) => paletteKey(candidate) === key)
      if (!item) return
      event.preventDefault()
      addPaletteNode(item, screenToFlowPosition({ x: event.clientX, y: event.clientY }))
    },
    [palette, addPaletteNode, screenToFlowPosition],
  )

  return (
    <div ref={canvas} className={far ? 'flow-canvas far' : 'flow-canvas'} data-testid="flow-canvas">
      <FarViewContext value={far}>
        <ReactFlow<CanvasItem, CanvasEdge>
          nodes={nodes}
          edges={edges}
          nodeTypes={NODE_TYPES}
          edgeTypes={EDGE_TYPES}
          onNodesChange={onItemsChange}
          onEdgesChange={applyEdgeChanges}
          onConnect={connectPorts}
          isValidConnection={isValidConnection}
          onDragOver={onDragOver}
          onDrop={onDrop}
          // Deleting, copying and pasting go through the store, as one undo step each.
          deleteKeyCode={null}
          nodesDraggable={!readOnly}
          nodesConnectable={!readOnly}
          edgesReconnectable={false}
          colorMode={theme}
          fitView={fitOnOpen}
          fitViewOptions={FIT_VIEW}
          minZoom={0.1}
        >
          <Background gap={20} />
          <MovingEdges edges={movingEdges} live={live} />
          <Minimap />
          <Controls showInteractive={false} fitViewOptions={FIT_VIEW} />
        </ReactFlow>
      </FarViewContext>
    </div>
  )
}

/**
 * The edges of the nodes, worked out again only when a node's record changed: a drag moves
 * positions at every pointer move and leaves every record as it was, and 1,500 new edge objects
 * per move made React Flow rebuild and re-render every edge.
 */
function memoizedEdges(): (nodes: readonly CanvasNode[]) => CanvasEdge[] {
  let records: readonly unknown[] = []
  let edges: CanvasEdge[] = []
  return (nodes) => {
    const same =
      nodes.length === records.length && nodes.every((node, i) => node.data.record === records[i])
    if (!same) {
      records = nodes.map((node) => node.data.record)
      edges = edgesOf(nodes)
    }
    return edges
  }
}

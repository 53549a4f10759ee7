import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type IsValidConnection,
  type NodeTypes,
} from '@xyflow/react'
import '@xyflow/react/dist/style.css'
import { useCallback, useMemo, useState, type DragEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { CanvasNodeView } from './CanvasNodeView'
import { edgesOf, judgeConnection, type CanvasEdge, type CanvasNode, type Size } from './document'
import { paletteKey, PALETTE_MIME } from './paletteDrag'
import { typeFamily } from './words'

const NODE_TYPES: NodeTypes = { flowNode: CanvasNodeView }

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
    })),
  )
  const { screenToFlowPosition } = useReactFlow<CanvasNode, CanvasEdge>()
  const docNodes = doc?.nodes

  const nodes = useMemo(() => {
    const selected = new Set(selection.nodeIds)
    return (docNodes ?? []).map((node) => viewOf(node, selected.has(node.id), measured[node.id]))
  }, [docNodes, selection.nodeIds, measured])

  const [edgesFor] = useState(memoizedEdges)
  const baseEdges = edgesFor(docNodes ?? [])
  const edges = useMemo(() => {
    const selected = new Set(selection.edgeIds)
    return baseEdges.map((edge): CanvasEdge => ({
      ...edge,
      selected: selected.has(edge.id),
      className: `edge type-${typeFamily(edge.data?.variableType ?? '')}`,
    }))
  }, [baseEdges, selection.edgeIds])

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
    <div className="flow-canvas" data-testid="flow-canvas">
      <ReactFlow<CanvasNode, CanvasEdge>
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        onNodesChange={applyNodeChanges}
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
        fitView
        minZoom={0.1}
      >
        <Background gap={20} />
        <MiniMap pannable zoomable ariaLabel="Minimap of the flow" />
        <Controls showInteractive={false} fitViewOptions={{ padding: 0.2 }} />
      </ReactFlow>
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

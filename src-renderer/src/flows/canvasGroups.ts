import type { NodeChange, XYPosition } from '@xyflow/react'
import {
  frameBox,
  groupsOf,
  type CanvasNode,
  type EditorDoc,
  type FrameBox,
  type NodeGroup,
  type Size,
} from './document'
import { frameNodeId, groupIdOfFrame, type GroupFrameNode } from './GroupFrame'
import type { Placement } from './liveDrag'

/**
 * Groups on the canvas: each group's frame is a React Flow node of its own (`GroupFrame`), put
 * there from the document and moved by the canvas, never stored as a node.
 */

/** Below every node, selected or not (React Flow adds 1,000 to a selected node's z-index). */
const FRAME_Z = -1001

/** The canvas's view of the document, for the frames: read fresh from the store when needed. */
export interface GroupsSource {
  doc: EditorDoc | null
  measured: Readonly<Record<string, Size>>
}

const nodeMaps = new WeakMap<readonly CanvasNode[], ReadonlyMap<string, CanvasNode>>()

/** The document's nodes by id, made once per list of nodes. */
export function nodesById(nodes: readonly CanvasNode[]): ReadonlyMap<string, CanvasNode> {
  let map = nodeMaps.get(nodes)
  if (!map) {
    map = new Map(nodes.map((node) => [node.id, node]))
    nodeMaps.set(nodes, map)
  }
  return map
}

const frames = new WeakMap<NodeGroup, { box: FrameBox; selected: boolean; view: GroupFrameNode }>()

const sameBox = (a: FrameBox, b: FrameBox) =>
  a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height

/** A group's frame node, the same object while its group, box and selection are the same. */
function frameView(group: NodeGroup, box: FrameBox, selected: boolean): GroupFrameNode {
  const hit = frames.get(group)
  if (hit && hit.selected === selected && sameBox(hit.box, box)) return hit.view
  const view: GroupFrameNode = {
    id: frameNodeId(group.id),
    type: 'groupFrame',
    position: { x: box.x, y: box.y },
    width: box.width,
    height: box.height,
    zIndex: FRAME_Z,
    selected,
    // Only the label bar drags the group: the frame's inside is canvas.
    dragHandle: '.group-frame-head',
    className: 'group-frame-node',
    data: { group },
  }
  frames.set(group, { box, selected, view })
  return view
}

/** The frames of the document's groups, around their nodes (at `positions` during a drag). */
export function frameNodes(
  doc: EditorDoc | null,
  measured: Readonly<Record<string, Size>>,
  selectedGroups: readonly string[],
  positions: ReadonlyMap<string, XYPosition> | null,
): GroupFrameNode[] {
  if (!doc) return []
  const byId = nodesById(doc.nodes)
  const selected = new Set(selectedGroups)
  return groupsOf(doc).flatMap((group) => {
    const box = frameBox(group, byId, measured, positions ?? undefined)
    return box ? [frameView(group, box, selected.has(group.id))] : []
  })
}

/**
 * React Flow's changes to the frames, made the document's: a frame dragged is its nodes moved
 * by as much (each from where the document has it, the drag's start), a frame selected is its
 * group selected, and a frame measured is nothing (its size is its nodes'). Nodes that are
 * themselves in the drag (selected with the frame) move once, as React Flow says.
 */
export function nodeChangesOf(
  changes: readonly NodeChange<CanvasNode | GroupFrameNode>[],
  { doc, measured }: GroupsSource,
): { nodeChanges: NodeChange<CanvasNode>[]; groupSelection: Map<string, boolean> } {
  const nodeChanges: NodeChange<CanvasNode>[] = []
  const groupSelection = new Map<string, boolean>()
  const moved = new Set(
    changes.flatMap((change) =>
      change.type === 'position' && groupIdOfFrame(change.id) === null ? [change.id] : [],
    ),
  )
  const byId = doc ? nodesById(doc.nodes) : new Map<string, CanvasNode>()
  const groups = doc ? groupsOf(doc) : []
  for (const change of changes) {
    const groupId = 'id' in change ? groupIdOfFrame(change.id) : null
    if (groupId === null) {
      nodeChanges.push(change as NodeChange<CanvasNode>)
      continue
    }
    if (change.type === 'select') groupSelection.set(groupId, change.selected)
    if (change.type !== 'position' || !change.position) continue
    const group = groups.find((candidate) => candidate.id === groupId)
    const start = group ? frameBox(group, byId, measured) : null
    if (!group || !start) continue
    const dx = change.position.x - start.x
    const dy = change.position.y - start.y
    for (const id of group.node_ids) {
      const node = byId.get(id)
      if (!node || moved.has(id)) continue
      moved.add(id)
      nodeChanges.push({
        id,
        type: 'position',
        position: { x: node.position.x + dx, y: node.position.y + dy },
        ...(change.dragging === undefined ? {} : { dragging: change.dragging }),
      })
    }
  }
  return { nodeChanges, groupSelection }
}

/** The frames of the groups whose nodes are at `positions` (a drag), where they go meanwhile. */
export function framesFollowing(
  positions: ReadonlyMap<string, XYPosition>,
  { doc, measured }: GroupsSource,
): [string, Placement][] {
  if (!doc) return []
  const byId = nodesById(doc.nodes)
  return groupsOf(doc).flatMap((group): [string, Placement][] => {
    if (!group.node_ids.some((id) => positions.has(id))) return []
    const box = frameBox(group, byId, measured, positions)
    return box ? [[frameNodeId(group.id), box]] : []
  })
}

import type { XYPosition } from '@xyflow/react'
import { groupsOf } from './groups'
import type { Area, Size } from './layout'
import type { CanvasNode, EditorDoc } from './types'

/** The height assumed for a node the canvas has not measured yet. */
const UNMEASURED_HEIGHT = 120
/** What is left between a grown node and a neighbour it pushed aside. */
export const ROOM_GAP = 24
/**
 * A bound on the pushes. Nodes alone settle well within it; groups interleaved with each other can
 * push each other in turn without end, and then nothing is moved.
 */
const PUSHES_PER_NODE = 20

const overlap = (a: Area, b: Area) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height

/**
 * Where the neighbours of grown nodes go so that nothing covers them: a node whose measured size
 * grew (from `before` to `after`: a run's preview appeared) and now overlaps a node it did not
 * overlap before pushes that node down or right, whichever is the shorter way out, to just past
 * its edge. A node pushed onto another pushes that one too. A node in a group takes its whole
 * group along, so groups stay as they were drawn; a neighbour in the grown node's own group moves
 * alone (it stays in the group; the frame is drawn around its members). Nodes that overlapped
 * already before are left as the person put them. Answers the new positions of the nodes that
 * move, and none when nothing has to.
 */
export function makeRoom(
  doc: EditorDoc,
  before: Readonly<Record<string, Size>>,
  after: Readonly<Record<string, Size>>,
): Map<string, XYPosition> {
  const sizeOf = (node: CanvasNode): Size =>
    after[node.id] ?? { width: node.width ?? 220, height: UNMEASURED_HEIGHT }
  const grown = doc.nodes.filter((node) => {
    const old = before[node.id]
    const now = after[node.id]
    return (
      old !== undefined && now !== undefined && (now.height > old.height || now.width > old.width)
    )
  })
  const moved = new Map<string, XYPosition>()
  if (grown.length === 0) return moved

  const byId = new Map(doc.nodes.map((node) => [node.id, node]))
  const groupOf = new Map<string, string[]>()
  for (const group of groupsOf(doc)) {
    const members = group.node_ids.filter((id) => byId.has(id))
    for (const id of members) groupOf.set(id, members)
  }
  const start = (node: CanvasNode): Area => ({
    ...node.position,
    ...(before[node.id] ?? sizeOf(node)),
  })
  const now = (node: CanvasNode): Area => ({
    ...(moved.get(node.id) ?? node.position),
    ...sizeOf(node),
  })

  const pushers = grown.map((node) => node.id)
  let budget = doc.nodes.length * PUSHES_PER_NODE
  for (let id = pushers.shift(); id !== undefined && budget > 0; id = pushers.shift()) {
    const pusher = byId.get(id)
    if (!pusher) continue
    for (const other of doc.nodes) {
      if (other.id === id) continue
      const box = now(pusher)
      const hit = now(other)
      if (!overlap(box, hit) || overlap(start(pusher), start(other))) continue
      const group = groupOf.get(other.id)
      const unit = (group && group !== groupOf.get(id) ? group : [other.id])
        .map((member) => byId.get(member))
        .filter((node): node is CanvasNode => node !== undefined)
      const delta = shortestWayOut(box, unit.map(now))
      for (const node of unit) {
        const { x, y } = now(node)
        moved.set(node.id, { x: x + delta.x, y: y + delta.y })
        pushers.push(node.id)
      }
      budget--
    }
  }
  // Pushes that went on and on (groups interleaved so that they push each other in turn): better
  // the overlap as it is than nodes thrown far away.
  return budget > 0 ? moved : new Map<string, XYPosition>()
}

/**
 * How far the boxes (one node, or a group's nodes) move together to clear `box`: down past its
 * bottom or right past its right edge, whichever is less. Every member in the way counts, one
 * above the box too: moved down, it would come to cover the box, and be pushed back for ever.
 */
function shortestWayOut(box: Area, boxes: readonly Area[]): XYPosition {
  let down = 0
  let right = 0
  for (const hit of boxes) {
    if (hit.x < box.x + box.width && box.x < hit.x + hit.width) {
      down = Math.max(down, box.y + box.height + ROOM_GAP - hit.y)
    }
    if (hit.y < box.y + box.height && box.y < hit.y + hit.height) {
      right = Math.max(right, box.x + box.width + ROOM_GAP - hit.x)
    }
  }
  return down <= right ? { x: 0, y: down } : { x: right, y: 0 }
}

import type { XYPosition } from '@xyflow/react'
import type { NewId } from './edits'
import type { Size } from './layout'
import type { CanvasNode, EditorDoc } from './types'

/**
 * Groups: a labelled frame drawn around some nodes, to tidy a large flow. Only the editor cares,
 * so where a group is kept is chosen for what it must not touch:
 * - in the flow's own `context_variables`, under GROUPS_KEY: saved, exported and imported with
 *   the flow file as it is (the format keeps any value there), and read by nothing that runs a
 *   flow. Not in the nodes' `config`, which is part of each node's cache key: grouping nodes
 *   would make the next run dispatch them again;
 * - as the member node ids and a label, not a position: the frame is drawn around its members
 *   wherever they are (xyflow's parent nodes were the other way, but they would store each
 *   member's position relative to the group, which changes what `x`/`y` mean in the file for
 *   every other reader of it).
 * A node is in one group at most; a group whose last node is deleted is gone.
 */
export const GROUPS_KEY = 'atelier_groups'

export interface NodeGroup {
  id: string
  label: string
  node_ids: string[]
}

const isGroup = (value: unknown): value is NodeGroup => {
  if (typeof value !== 'object' || value === null) return false
  const group = value as Partial<Record<keyof NodeGroup, unknown>>
  return (
    typeof group.id === 'string' &&
    typeof group.label === 'string' &&
    Array.isArray(group.node_ids) &&
    group.node_ids.every((id) => typeof id === 'string')
  )
}

/** The flow's groups; what is not a group (a hand-edited file) is left out, not an error. */
export function groupsOf(doc: EditorDoc): NodeGroup[] {
  const value = doc.flow.context_variables?.[GROUPS_KEY]
  return Array.isArray(value) ? value.filter(isGroup) : []
}

/** The document with these groups; none at all removes the key rather than leaving `[]`. */
function withGroups(doc: EditorDoc, groups: readonly NodeGroup[]): EditorDoc {
  const { [GROUPS_KEY]: _old, ...rest } = doc.flow.context_variables ?? {}
  const kept = groups.filter((group) => group.node_ids.length > 0)
  const context = kept.length > 0 ? { ...rest, [GROUPS_KEY]: kept } : rest
  const hadContext = doc.flow.context_variables !== undefined
  const flow = { ...doc.flow }
  if (hadContext || kept.length > 0) flow.context_variables = context
  return { ...doc, flow }
}

/** `Group`, or `Group 2`…: group labels are told apart on the canvas. */
function uniqueGroupLabel(groups: readonly NodeGroup[], base: string): string {
  const taken = new Set(groups.map((group) => group.label))
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) if (!taken.has(`${base} ${n}`)) return `${base} ${n}`
}

/**
 * Puts the nodes in a new group (taking them out of any group they were in). Unknown ids are
 * ignored; with no known node the document is returned as it was.
 */
export function groupNodes(
  doc: EditorDoc,
  nodeIds: Iterable<string>,
  newId: NewId = () => crypto.randomUUID(),
): { doc: EditorDoc; groupId: string | null } {
  const wanted = new Set(nodeIds)
  const members = doc.nodes.map((node) => node.id).filter((id) => wanted.has(id))
  if (members.length === 0) return { doc, groupId: null }
  const taken = new Set(members)
  const others = groupsOf(doc).map((group) => ({
    ...group,
    node_ids: group.node_ids.filter((id) => !taken.has(id)),
  }))
  const group: NodeGroup = {
    id: newId(),
    label: uniqueGroupLabel(others, 'Group'),
    node_ids: members,
  }
  return { doc: withGroups(doc, [...others, group]), groupId: group.id }
}

/** Removes the groups (their frames), leaving their nodes where they are. */
export function ungroup(doc: EditorDoc, groupIds: ReadonlySet<string>): EditorDoc {
  const groups = groupsOf(doc)
  if (!groups.some((group) => groupIds.has(group.id))) return doc
  return withGroups(
    doc,
    groups.filter((group) => !groupIds.has(group.id)),
  )
}

export function renameGroup(doc: EditorDoc, groupId: string, label: string): EditorDoc {
  const groups = groupsOf(doc)
  if (!groups.some((group) => group.id === groupId)) return doc
  return withGroups(
    doc,
    groups.map((group) => (group.id === groupId ? { ...group, label } : group)),
  )
}

/** The groups after these nodes were deleted: each loses them, and an emptied one is gone. */
export function forgetGroupMembers(doc: EditorDoc, nodeIds: ReadonlySet<string>): EditorDoc {
  const groups = groupsOf(doc)
  if (!groups.some((group) => group.node_ids.some((id) => nodeIds.has(id)))) return doc
  return withGroups(
    doc,
    groups.map((group) => ({
      ...group,
      node_ids: group.node_ids.filter((id) => !nodeIds.has(id)),
    })),
  )
}

/** The groups any of these nodes is in. */
export function groupsOfNodes(doc: EditorDoc, nodeIds: ReadonlySet<string>): NodeGroup[] {
  return groupsOf(doc).filter((group) => group.node_ids.some((id) => nodeIds.has(id)))
}

/** The room a frame leaves around its nodes, and the height of its label bar above them. */
export const FRAME_PADDING = 24
export const FRAME_HEADER = 34
/** The height assumed for a node the canvas has not measured yet. */
const UNMEASURED_HEIGHT = 120

export interface FrameBox {
  x: number
  y: number
  width: number
  height: number
}

/**
 * Where a group's frame is drawn: around its members' boxes (at `positions` where given, the
 * live positions of a drag), with room for its label bar. Null when no member is on the canvas.
 */
export function frameBox(
  group: NodeGroup,
  nodes: ReadonlyMap<string, CanvasNode>,
  sizes: Readonly<Record<string, Size>>,
  positions?: ReadonlyMap<string, XYPosition>,
): FrameBox | null {
  let left = Infinity
  let top = Infinity
  let right = -Infinity
  let bottom = -Infinity
  for (const id of group.node_ids) {
    const node = nodes.get(id)
    if (!node) continue
    const { x, y } = positions?.get(id) ?? node.position
    const size = sizes[id]
    left = Math.min(left, x)
    top = Math.min(top, y)
    right = Math.max(right, x + (size?.width ?? node.width ?? 0))
    bottom = Math.max(bottom, y + (size?.height ?? UNMEASURED_HEIGHT))
  }
  if (left === Infinity) return null
  return {
    x: left - FRAME_PADDING,
    y: top - FRAME_PADDING - FRAME_HEADER,
    width: right - left + 2 * FRAME_PADDING,
    height: bottom - top + 2 * FRAME_PADDING + FRAME_HEADER,
  }
}

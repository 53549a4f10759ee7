import type { Node, NodeProps } from '@xyflow/react'
import { memo } from 'react'
import type { NodeGroup } from './document'

export type GroupFrameData = { group: NodeGroup }

/** A group's frame on the canvas: a React Flow node of its own, drawn behind the others. */
export type GroupFrameNode = Node<GroupFrameData, 'groupFrame'>

/** The frame's node id: apart from every node id of the flow (those are uuids). */
export const frameNodeId = (groupId: string) => `group:${groupId}`

export const groupIdOfFrame = (nodeId: string): string | null =>
  nodeId.startsWith('group:') ? nodeId.slice('group:'.length) : null

/**
 * The frame drawn around a group's nodes, with its label. Only its label bar takes the pointer
 * (flows.css): dragging the bar moves the group, clicking it selects the group, and the area
 * inside stays the canvas's (to pan, to select the nodes in it).
 */
export const GroupFrame = memo(function GroupFrame({ data, selected }: NodeProps<GroupFrameNode>) {
  const { group } = data
  const count = group.node_ids.length
  return (
    <div
      className={selected ? 'group-frame selected' : 'group-frame'}
      data-testid={`group-${group.label}`}
    >
      <div className="group-frame-head" title="Drag to move the group; select it to rename it">
        <span className="group-frame-label">{group.label || 'Untitled group'}</span>
        <span className="group-frame-count">{count === 1 ? '1 node' : `${count} nodes`}</span>
      </div>
    </div>
  )
})

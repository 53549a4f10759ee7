import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../../store'
import { groupsOf } from '../document'
import { FlowPanel } from './FlowPanel'
import { GroupPanel } from './GroupPanel'
import { NodeInspector } from './NodeInspector'
import { SelectionPanel } from './SelectionPanel'

/** The side panel: the selected node, several selected, a group, or the flow itself. */
export function Inspector({
  onRunTo,
  onForce,
}: {
  onRunTo: (nodeId: string) => void
  onForce: (nodeId: string) => void
}) {
  const { doc, selection } = useAppStore(
    useShallow((s) => ({ doc: s.doc, selection: s.selection })),
  )
  const selected = (doc?.nodes ?? []).filter((node) => selection.nodeIds.includes(node.id))
  const only = selected.length === 1 ? selected[0] : undefined
  const group =
    selected.length === 0 && selection.groupIds.length === 1 && doc
      ? groupsOf(doc).find((candidate) => candidate.id === selection.groupIds[0])
      : undefined
  return (
    <aside className="flow-inspector">
      {only ? (
        <NodeInspector node={only} onRunTo={onRunTo} onForce={onForce} />
      ) : selected.length > 1 ? (
        <SelectionPanel count={selected.length} />
      ) : group ? (
        <GroupPanel group={group} />
      ) : (
        <FlowPanel />
      )}
    </aside>
  )
}

import { useShallow } from 'zustand/react/shallow'
import { shortcutHint } from '../../shell/shortcuts'
import { useAppStore } from '../../store'
import { renameGroup, type NodeGroup } from '../document'
import { typing } from './editing'

/** A selected group: its label, its nodes, and the way out of it. */
export function GroupPanel({ group }: { group: NodeGroup }) {
  const { readOnly, nodes, editDoc, select, ungroupSelection } = useAppStore(
    useShallow((s) => ({
      readOnly: s.editor?.readOnly ?? true,
      nodes: s.doc?.nodes,
      editDoc: s.editDoc,
      select: s.select,
      ungroupSelection: s.ungroupSelection,
    })),
  )
  const labels = group.node_ids.map(
    (id) => nodes?.find((node) => node.id === id)?.data.record.label ?? '',
  )
  return (
    <section
      className="inspector"
      aria-label={`Group ${group.label}`}
      data-testid="group-inspector"
    >
      <label className="inspector-field">
        <span>Group label</span>
        <input
          type="text"
          value={group.label}
          disabled={readOnly}
          onChange={(event) => {
            const label = event.target.value
            editDoc((doc) => renameGroup(doc, group.id, label), typing(`group-${group.id}`))
          }}
        />
      </label>
      <p className="muted">
        {labels.length === 1 ? '1 node' : `${String(labels.length)} nodes`}: {labels.join(', ')}.
        Drag the group by its label to move them together.
      </p>
      <div className="inspector-actions">
        <button
          type="button"
          className="small-button"
          onClick={() => {
            select({ nodeIds: group.node_ids, edgeIds: [], groupIds: [] })
          }}
        >
          Select its nodes
        </button>
        <button
          type="button"
          className="small-button"
          disabled={readOnly}
          title={`Remove the frame, keeping the nodes (${shortcutHint('editor.ungroup')})`}
          onClick={ungroupSelection}
        >
          Ungroup
        </button>
      </div>
    </section>
  )
}

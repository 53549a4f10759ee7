import { useShallow } from 'zustand/react/shallow'
import { shortcutHint } from '../../shell/shortcuts'
import { useAppStore } from '../../store'

/** Group and Delete for what is selected, one node or several; `groupTitle` says what groups. */
export function GroupDeleteButtons({ groupTitle }: { groupTitle: string }) {
  const { readOnly, deleteSelection, groupSelection } = useAppStore(
    useShallow((s) => ({
      readOnly: s.editor?.readOnly ?? true,
      deleteSelection: s.deleteSelection,
      groupSelection: s.groupSelection,
    })),
  )
  return (
    <>
      <button
        type="button"
        className="small-button"
        disabled={readOnly}
        title={`${groupTitle} (${shortcutHint('editor.group')})`}
        onClick={groupSelection}
      >
        Group
      </button>
      <button
        type="button"
        className="small-button danger"
        disabled={readOnly}
        onClick={deleteSelection}
      >
        Delete
      </button>
    </>
  )
}

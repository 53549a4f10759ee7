import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { Editor } from './Editor'
import { FlowList } from './FlowList'
import './flows.css'

/** The Flows section: the list, or the flow open in the editor. */
export function FlowsPage() {
  const { editor, editorLoading, editorProblem } = useAppStore(
    useShallow((s) => ({
      editor: s.editor,
      editorLoading: s.editorLoading,
      editorProblem: s.editorProblem,
    })),
  )
  if (editor) return <Editor />
  return (
    <div className="flows-page">
      {editorLoading ? <p className="muted">Opening the flow…</p> : null}
      {editorProblem ? (
        <div className="banner error" role="alert">
          {editorProblem}
        </div>
      ) : null}
      <FlowList />
    </div>
  )
}

import { useEffect } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { LazyBoundary, Pending, whenIdle } from '../shell/lazy'
import { useAppStore } from '../store'
import { FlowList } from './FlowList'
import { editorScreen } from './lazyEditor'
import './flows.css'

const { Component: Editor, preload: preloadEditor } = editorScreen

/** The Flows section: the list, or the flow open in the editor. */
export function FlowsPage() {
  const { editor, editorLoading, editorProblem } = useAppStore(
    useShallow((s) => ({
      editor: s.editor,
      editorLoading: s.editorLoading,
      editorProblem: s.editorProblem,
    })),
  )
  // The editor's chunk comes while nothing else happens, and at once when a flow is opening
  // (from the list, the command palette, a new or imported flow).
  useEffect(() => whenIdle(preloadEditor), [])
  useEffect(() => {
    if (editorLoading) preloadEditor()
  }, [editorLoading])
  if (editor) {
    return (
      // In the editor's own box, so nothing moves when the editor takes its place.
      <LazyBoundary fallback={<Pending className="flow-editor" />}>
        <Editor />
      </LazyBoundary>
    )
  }
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

import { ReactFlowProvider } from '@xyflow/react'
import { useEffect, useState } from 'react'
import { useStore } from 'zustand'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { canResume } from '../store/editorRuns'
import { Canvas } from './Canvas'
import type { RunView } from './document'
import { autoLayout } from './document/layout'
import { Inspector } from './inspector'
import { Palette } from './Palette'
import { QueuedRun, QueueOfflineRun } from './QueuedRun'
import { RunForm, type RunRequest } from './RunForm'
import { FlowRuns } from './FlowRuns'
import { Versions } from './Versions'
import { shortcutHint, shortcutOf, typingInField, type ShortcutId } from '../shell/shortcuts'
import { creditsWords } from './words'
import { plural } from '../../../src-shared/domain/plural'

/** The editor's own shortcuts (the help sheet lists them from the same table). */
const EDITOR_SHORTCUTS = [
  'editor.undo',
  'editor.redo',
  'editor.copy',
  'editor.paste',
  'editor.delete',
  'editor.group',
  'editor.ungroup',
] as const satisfies readonly ShortcutId[]

/**
 * The editor's shortcuts, as any editor has them. Copy, paste, delete and the grouping keys only
 * take the keys when there is something to act on, so copying text still works.
 */
function useEditorKeys() {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typingInField(event.target)) return
      const state = useAppStore.getState()
      const { nodeIds, edgeIds, groupIds } = state.selection
      const act = (): boolean => {
        switch (shortcutOf(event, EDITOR_SHORTCUTS)) {
          case 'editor.undo':
            state.undo()
            return true
          case 'editor.redo':
            state.redo()
            return true
          case 'editor.copy':
            if (nodeIds.length === 0) return false
            state.copySelection()
            return true
          case 'editor.paste':
            if (!state.clipboard) return false
            state.pasteClipboard()
            return true
          case 'editor.delete':
            if (nodeIds.length + edgeIds.length + groupIds.length === 0) return false
            state.deleteSelection()
            return true
          case 'editor.group':
            if (nodeIds.length === 0) return false
            state.groupSelection()
            return true
          case 'editor.ungroup':
            if (nodeIds.length + groupIds.length === 0) return false
            state.ungroupSelection()
            return true
          default:
            return false
        }
      }
      if (act()) event.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [])
}

/**
 * The save state in one or two words, so the toolbar never cuts it at 1440 px (it read "A…"):
 * a word and an icon (flows.css) shown, the whole sentence as its title.
 */
const SAVE_WORDS = {
  saved: { word: 'Saved', sentence: 'All changes saved' },
  pending: { word: 'Unsaved', sentence: 'Unsaved changes, saved in a moment' },
  saving: { word: 'Saving…', sentence: 'Saving your changes…' },
  failed: { word: 'Not saved', sentence: 'Not saved: the last save failed' },
  conflict: { word: 'Not saved', sentence: 'Not saved: changed elsewhere' },
} as const

function FlowName() {
  const { editor, renameFlow } = useAppStore(
    useShallow((s) => ({ editor: s.editor, renameFlow: s.renameFlow })),
  )
  const [draft, setDraft] = useState<string | null>(null)
  if (!editor) return null
  if (draft === null) {
    return (
      <h2 className="flow-title">
        {editor.readOnly ? (
          editor.name
        ) : (
          <button
            type="button"
            className="flow-title-button"
            title="Rename"
            onClick={() => {
              setDraft(editor.name)
            }}
          >
            {editor.name}
          </button>
        )}
      </h2>
    )
  }
  const finish = () => {
    const name = draft.trim()
    setDraft(null)
    if (name !== '' && name !== editor.name) void renameFlow(editor.id, name)
  }
  return (
    <input
      className="flow-title-input"
      aria-label="Flow name"
      // Focus follows the click that asked for the rename.
      autoFocus
      value={draft}
      maxLength={200}
      onChange={(event) => {
        setDraft(event.target.value)
      }}
      onBlur={finish}
      onKeyDown={(event) => {
        if (event.key === 'Enter') finish()
        if (event.key === 'Escape') setDraft(null)
      }}
    />
  )
}

/** How the last run ended, in the toolbar's words. */
function runResultWords(run: RunView): string {
  const ended =
    run.state === 'succeeded'
      ? 'Run succeeded'
      : run.state === 'failed'
        ? 'Run failed'
        : 'Run canceled'
  return run.totals ? `${ended} · ${creditsWords(run.totals.costMicro)}` : ended
}

function Toolbar({ onRun }: { onRun: (request: RunRequest) => void }) {
  const state = useAppStore(
    useShallow((s) => ({
      editor: s.editor,
      saveStatus: s.saveStatus,
      saveProblem: s.saveProblem,
      check: s.check,
      // The sidebar's balance: one number in the store, read again after each charge.
      balanceMicro: s.account?.balanceMicro ?? null,
      checking: s.checking,
      checkProblem: s.checkProblem,
      runPhase: s.runPhase,
      run: s.run,
      closeFlow: s.closeFlow,
      undo: s.undo,
      redo: s.redo,
      layoutNodes: s.layoutNodes,
      flushSave: s.flushSave,
      cancelRun: s.cancelRun,
      resumeRun: s.resumeRun,
      resumable: canResume(s),
    })),
  )
  const canUndo = useStore(useAppStore.temporal, (s) => s.pastStates.length > 0)
  const canRedo = useStore(useAppStore.temporal, (s) => s.futureStates.length > 0)
  const { editor, check, run, runPhase } = state
  if (!editor) return null
  const readOnly = editor.readOnly
  const estimate = check?.estimate?.totalMicro
  const short =
    estimate !== undefined && state.balanceMicro !== null ? estimate > state.balanceMicro : false
  const problemCount = check?.problems.length ?? 0
  // Nodes the cache will answer cost nothing: said, so that a low estimate is not a surprise.
  const fromCache = check?.cachedNodes
    ? ` (${plural(check.cachedNodes, 'node')} from the cache)`
    : ''
  const estimateWords =
    (estimate === undefined
      ? 'Estimate unknown'
      : `Estimate ${creditsWords(estimate)}${fromCache}`) +
    (state.balanceMicro !== null ? ` · balance ${creditsWords(state.balanceMicro)}` : '')
  return (
    <div className="flow-toolbar" role="toolbar" aria-label="Flow editor">
      <button
        type="button"
        className="small-button"
        onClick={() => {
          void state.closeFlow()
        }}
      >
        ← Flows
      </button>
      <FlowName />
      {readOnly ? null : (
        <span
          className={`save-state ${state.saveStatus}`}
          data-testid="save-state"
          title={state.saveProblem ?? SAVE_WORDS[state.saveStatus].sentence}
        >
          {SAVE_WORDS[state.saveStatus].word}
          {state.saveStatus === 'failed' ? (
            <button
              type="button"
              className="link-button"
              onClick={() => {
                void state.flushSave()
              }}
            >
              Try again
            </button>
          ) : null}
        </span>
      )}
      <span className="toolbar-gap" />
      <button
        type="button"
        className="small-button"
        aria-label="Undo"
        title={`Undo (${shortcutHint('editor.undo')})`}
        data-testid="undo-button"
        disabled={!canUndo || readOnly}
        onClick={state.undo}
      >
        ↶
      </button>
      <button
        type="button"
        className="small-button"
        aria-label="Redo"
        title={`Redo (${shortcutHint('editor.redo')})`}
        data-testid="redo-button"
        disabled={!canRedo || readOnly}
        onClick={state.redo}
      >
        ↷
      </button>
      <button
        type="button"
        className="small-button"
        data-testid="auto-layout"
        disabled={readOnly}
        onClick={() => {
          state.layoutNodes(autoLayout)
        }}
      >
        Tidy up
      </button>
      <Versions />
      <FlowRuns />
      <span
        className={problemCount > 0 ? 'check-summary has-problems' : 'check-summary'}
        data-testid="check-summary"
        title={state.checkProblem ?? undefined}
      >
        {state.checkProblem
          ? 'Not checked'
          : check === null
            ? 'Checking…'
            : problemCount === 0
              ? 'No problems'
              : problemCount === 1
                ? '1 problem'
                : `${problemCount} problems`}
      </span>
      <span
        className={short ? 'estimate short' : 'estimate'}
        data-testid="estimate"
        // The line may cut these words short; the whole of them on hover.
        title={estimateWords}
      >
        {estimateWords}
      </span>
      {runPhase === 'running' || runPhase === 'canceling' ? (
        <button
          type="button"
          className="small-button danger"
          data-testid="cancel-button"
          disabled={runPhase === 'canceling'}
          onClick={() => {
            void state.cancelRun()
          }}
        >
          {runPhase === 'canceling' ? 'Canceling…' : 'Cancel run'}
        </button>
      ) : (
        <button
          type="button"
          className="primary-button"
          data-testid="run-button"
          disabled={runPhase === 'starting'}
          onClick={() => {
            onRun({ title: 'Run the flow' })
          }}
        >
          {runPhase === 'starting' ? 'Starting…' : 'Run'}
        </button>
      )}
      {run && runPhase === 'ended' ? (
        <span
          className={`run-result ${run.state}`}
          data-testid="run-result"
          title={runResultWords(run)}
        >
          {runResultWords(run)}
        </span>
      ) : null}
      {state.resumable ? (
        <button
          type="button"
          className="small-button"
          data-testid="resume-button"
          title="Continues where the run stopped; nothing is charged twice."
          onClick={() => {
            void state.resumeRun()
          }}
        >
          Resume
        </button>
      ) : null}
      <QueuedRun />
    </div>
  )
}

function Banners() {
  const state = useAppStore(
    useShallow((s) => ({
      editor: s.editor,
      saveStatus: s.saveStatus,
      saveProblem: s.saveProblem,
      editorProblem: s.editorProblem,
      runProblem: s.runProblem,
      runIssues: s.runIssues,
      select: s.select,
      reloadFlow: s.reloadFlow,
      saveAsCopy: s.saveAsCopy,
      editCopy: s.editCopy,
    })),
  )
  const { editor } = state
  if (!editor) return null
  return (
    <>
      {editor.readOnly ? (
        <div className="banner info" role="note">
          <span>
            {editor.source === 'template'
              ? 'This is a template: it is not changed here. Edit a copy to make it yours.'
              : 'This flow comes from the service: it is not changed here. Edit a copy to make it yours.'}
          </span>
          <button
            type="button"
            className="small-button"
            onClick={() => {
              void state.editCopy()
            }}
          >
            Edit a copy
          </button>
        </div>
      ) : null}
      {state.saveStatus === 'conflict' ? (
        <div className="banner warning" role="alert" data-testid="save-conflict">
          <span>{state.saveProblem}</span>
          <button
            type="button"
            className="small-button"
            onClick={() => {
              void state.reloadFlow()
            }}
          >
            Reload
          </button>
          <button
            type="button"
            className="small-button"
            onClick={() => {
              void state.saveAsCopy()
            }}
          >
            Save as copy
          </button>
        </div>
      ) : null}
      {state.saveStatus === 'failed' && state.saveProblem ? (
        <div className="banner error" role="alert">
          {state.saveProblem}
        </div>
      ) : null}
      {state.editorProblem ? (
        <div className="banner error" role="alert">
          {state.editorProblem}
        </div>
      ) : null}
      {state.runProblem ? (
        <div className="banner error run-problem" role="alert" data-testid="run-problem">
          <span>{state.runProblem}</span>
          <QueueOfflineRun />
          {state.runIssues.length > 0 ? (
            <ul className="run-issues">
              {state.runIssues.map((issue, index) => (
                <li key={`${String(index)}-${issue.message}`} data-testid="run-issue">
                  {issue.nodeLabel !== null ? (
                    <strong>
                      {issue.nodeLabel}
                      {issue.inputLabel !== null ? ` · ${issue.inputLabel}` : ''}
                    </strong>
                  ) : null}{' '}
                  {issue.message}
                  {issue.nodeId !== null ? (
                    <button
                      type="button"
                      className="small-button"
                      onClick={() => {
                        state.select({ nodeIds: [issue.nodeId ?? ''], edgeIds: [], groupIds: [] })
                      }}
                    >
                      Show the node
                    </button>
                  ) : null}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </>
  )
}

/** The editor page: toolbar, palette, canvas and inspector, and the run form when asked. */
export function Editor() {
  useEditorKeys()
  const { inputs, startRun } = useAppStore(
    useShallow((s) => ({ inputs: s.doc?.flow.inputs, startRun: s.startRun })),
  )
  const [request, setRequest] = useState<RunRequest | null>(null)
  const [remembered, setRemembered] = useState<Record<string, unknown>>({})

  const ask = (next: RunRequest) => {
    if ((inputs ?? []).length === 0) {
      void startRun({
        ...(next.only ? { only: next.only } : {}),
        ...(next.force ? { force: next.force } : {}),
      })
    } else setRequest(next)
  }

  return (
    <div className="flow-editor">
      <Toolbar onRun={ask} />
      <Banners />
      {/* Around the palette too: a node added by a click goes where the canvas is looking. */}
      <ReactFlowProvider>
        <div className="flow-editor-body">
          <Palette />
          <Canvas />
          <Inspector
            onRunTo={(nodeId) => {
              ask({ title: 'Run to here', only: [nodeId] })
            }}
            onForce={(nodeId) => {
              ask({ title: 'Force re-run', force: [nodeId] })
            }}
          />
        </div>
      </ReactFlowProvider>
      {request ? (
        <RunForm
          request={request}
          inputs={inputs ?? []}
          remembered={remembered}
          onClose={() => {
            setRequest(null)
          }}
          onStart={(values) => {
            setRemembered(values)
            setRequest(null)
            void startRun({
              inputs: values,
              ...(request.only ? { only: request.only } : {}),
              ...(request.force ? { force: request.force } : {}),
            })
          }}
        />
      ) : null}
    </div>
  )
}

import { useEffect, useRef, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { FlowSource, FlowSummary } from '../../../src-shared/domain/flow-editor'
import { useAppStore } from '../store'
import { NOT_CONNECTED } from '../store/flows'
import { downloadText } from './download'
import { importComfyFile, isComfyFile } from './importWorkflow'
import { editorScreen } from './lazyEditor'
import { changedWords } from './words'

const SECTIONS: { source: FlowSource; title: string; empty: string }[] = [
  {
    source: 'local',
    title: 'Your flows',
    empty: 'Create a flow, import a flow file, or start from a template.',
  },
  { source: 'service', title: 'From the service', empty: 'No flows synced from the service yet.' },
  { source: 'template', title: 'Templates', empty: 'No templates.' },
]

/** How long "Undo" stays offered after a delete. */
const UNDO_MS = 10_000

function RenameInput({ flow, onDone }: { flow: FlowSummary; onDone: () => void }) {
  const renameFlow = useAppStore((s) => s.renameFlow)
  const [name, setName] = useState(flow.name)
  const finish = () => {
    const trimmed = name.trim()
    onDone()
    if (trimmed !== '' && trimmed !== flow.name) void renameFlow(flow.id, trimmed)
  }
  return (
    <input
      className="flow-row-rename"
      aria-label={`New name for ${flow.name}`}
      // Focus follows the click on "Rename".
      autoFocus
      value={name}
      maxLength={200}
      onChange={(event) => {
        setName(event.target.value)
      }}
      onBlur={finish}
      onKeyDown={(event) => {
        if (event.key === 'Enter') finish()
        if (event.key === 'Escape') onDone()
      }}
    />
  )
}

function FlowRow({ flow, now }: { flow: FlowSummary; now: number }) {
  const { openFlow, duplicateFlow, deleteFlow, exportFlow } = useAppStore(
    useShallow((s) => ({
      openFlow: s.openFlow,
      duplicateFlow: s.duplicateFlow,
      deleteFlow: s.deleteFlow,
      exportFlow: s.exportFlow,
    })),
  )
  const [renaming, setRenaming] = useState(false)
  const local = flow.source === 'local'
  return (
    // Pointing at a flow, or tabbing to it, fetches the editor before it is asked for.
    <li
      className="flow-row"
      data-testid={`flow-row-${flow.name}`}
      onPointerEnter={editorScreen.preload}
      onFocus={editorScreen.preload}
    >
      <div className="flow-row-main">
        {renaming ? (
          <RenameInput
            flow={flow}
            onDone={() => {
              setRenaming(false)
            }}
          />
        ) : (
          <button
            type="button"
            className="flow-row-name"
            onClick={() => {
              void openFlow(flow.id)
            }}
          >
            {flow.name}
          </button>
        )}
        <span className="muted flow-row-meta">
          {flow.nodeCount === 1 ? '1 node' : `${flow.nodeCount} nodes`} · changed{' '}
          {changedWords(flow.updatedMs, now)}
        </span>
        {flow.description ? <p className="muted flow-row-description">{flow.description}</p> : null}
      </div>
      <div className="flow-row-actions">
        <button
          type="button"
          className="small-button"
          onClick={() => {
            void duplicateFlow(flow.id).then((copy) => {
              if (copy && !local) void openFlow(copy.id)
            })
          }}
        >
          {flow.source === 'template' ? 'Use template' : 'Duplicate'}
        </button>
        {local ? (
          <button
            type="button"
            className="small-button"
            onClick={() => {
              setRenaming(true)
            }}
          >
            Rename
          </button>
        ) : null}
        <button
          type="button"
          className="small-button"
          onClick={() => {
            void exportFlow(flow.id).then((file) => {
              if (file) downloadText(file.fileName, file.json)
            })
          }}
        >
          Export
        </button>
        {local ? (
          <button
            type="button"
            className="small-button danger"
            onClick={() => {
              void deleteFlow(flow.id)
            }}
          >
            Delete
          </button>
        ) : null}
      </div>
    </li>
  )
}

function DeletedToast() {
  const { deletedFlow, undoDelete, dismissDeleted } = useAppStore(
    useShallow((s) => ({
      deletedFlow: s.deletedFlow,
      undoDelete: s.undoDelete,
      dismissDeleted: s.dismissDeleted,
    })),
  )
  useEffect(() => {
    if (!deletedFlow) return
    const timer = setTimeout(dismissDeleted, UNDO_MS)
    return () => {
      clearTimeout(timer)
    }
  }, [deletedFlow, dismissDeleted])
  if (!deletedFlow) return null
  return (
    <div className="toast" role="status" data-testid="delete-toast">
      <span>Deleted “{deletedFlow.name}”.</span>
      <button
        type="button"
        className="link-button"
        onClick={() => {
          void undoDelete()
        }}
      >
        Undo
      </button>
    </div>
  )
}

/** The flows: the person's own, the service's and the templates, with what can be done to each. */
export function FlowList() {
  const { flows, flowsLoading, flowsProblem, loadFlows, createFlow, importFlow, openFlow } =
    useAppStore(
      useShallow((s) => ({
        flows: s.flows,
        flowsLoading: s.flowsLoading,
        flowsProblem: s.flowsProblem,
        loadFlows: s.loadFlows,
        createFlow: s.createFlow,
        importFlow: s.importFlow,
        openFlow: s.openFlow,
      })),
    )
  const dismissFlowsProblem = useAppStore((s) => s.dismissFlowsProblem)
  const [newName, setNewName] = useState('')
  const file = useRef<HTMLInputElement>(null)
  const [now] = useState(() => Date.now())

  useEffect(() => {
    void loadFlows()
  }, [loadFlows])

  const bySource = (source: FlowSource) => (flows ?? []).filter((flow) => flow.source === source)

  return (
    <div className="flow-list">
      <div className="flow-list-toolbar">
        <form
          className="flow-create"
          onSubmit={(event) => {
            event.preventDefault()
            const name = newName.trim()
            if (name === '') return
            void createFlow(name).then((created) => {
              if (!created) return
              setNewName('')
              void openFlow(created.id)
            })
          }}
        >
          <input
            type="text"
            aria-label="New flow name"
            placeholder="Name a new flow"
            maxLength={200}
            value={newName}
            onChange={(event) => {
              setNewName(event.target.value)
            }}
          />
          <button type="submit" className="primary-button" disabled={newName.trim() === ''}>
            Create
          </button>
        </form>
        <button
          type="button"
          className="small-button"
          onClick={() => {
            file.current?.click()
          }}
        >
          Import a flow or ComfyUI file…
        </button>
        <input
          ref={file}
          type="file"
          accept=".json,application/json,.png,image/png,.webp,image/webp"
          hidden
          data-testid="import-file"
          onChange={(event) => {
            const chosen = event.target.files?.[0]
            event.target.value = ''
            if (!chosen) return
            void chosen
              .text()
              // A ComfyUI workflow (or a picture carrying one) becomes a workflow, not a flow.
              .then((text) =>
                isComfyFile(chosen, text)
                  ? importComfyFile(chosen).then(() => null)
                  : importFlow(text),
              )
              .then((imported) => {
                if (imported) void openFlow(imported.id)
              })
          }}
        />
      </div>
      {/* Not connected at all: the shell's own banner says so once for the whole window. */}
      {flowsProblem && flowsProblem.message !== NOT_CONNECTED ? (
        <div className="banner error" role="alert">
          <span>
            {flowsProblem.message}
            {flowsProblem.issues.length > 0 ? (
              <ul className="problem-list">
                {flowsProblem.issues.map((issue, index) => (
                  <li key={`${issue.path}-${index}`}>
                    {issue.path ? <code>{issue.path}</code> : null} {issue.message}
                  </li>
                ))}
              </ul>
            ) : null}
          </span>
          <button type="button" className="link-button" onClick={dismissFlowsProblem}>
            Dismiss
          </button>
        </div>
      ) : null}
      {flows === null && flowsLoading ? <p className="muted">Loading flows…</p> : null}
      {SECTIONS.map(({ source, title, empty }) => {
        const list = bySource(source)
        if (source !== 'local' && list.length === 0) return null
        return (
          <section key={source} className="flow-section" aria-label={title}>
            <h2>{title}</h2>
            {list.length === 0 ? (
              <div className="empty-state" role="status">
                <h2>No flows yet</h2>
                <p>{empty}</p>
              </div>
            ) : (
              <ul className="flow-rows">
                {list.map((flow) => (
                  <FlowRow key={flow.id} flow={flow} now={now} />
                ))}
              </ul>
            )}
          </section>
        )
      })}
      <DeletedToast />
    </div>
  )
}

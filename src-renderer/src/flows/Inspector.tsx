import { useEffect, useRef, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { KNOWN_VARIABLE_TYPES, typeConnection } from '../../../src-shared/domain/flow'
import type { FlowProblem } from '../../../src-shared/domain/flow'
import { TYPING_MERGE_MS, useAppStore } from '../store'
import {
  addFlowInput,
  addFlowOutput,
  disconnectInputs,
  feedOf,
  firstImage,
  firstText,
  groupsOf,
  innerRuns,
  inputKey,
  mapInputToFlowInput,
  mapOutputToFlowOutput,
  NODE_LOG_LIMIT,
  outputIndex,
  portMapping,
  removeFlowInput,
  removeFlowOutput,
  renameGroup,
  setInputValue,
  setNodeLabel,
  updateFlowInput,
  updateFlowOutput,
  type CanvasNode,
  type FileFlowInput,
  type FileNodeInput,
  type FileNodeOutput,
  type NodeGroup,
  type NodeLogLine,
} from './document'
import { specOfFlowInput, specOfNodeInput, ValueField } from './inputs'
import { creditsWords, NODE_STATE_WORDS, typeFamily } from './words'
import { MediaImage } from '../components/MediaImage'
import { shortcutHint } from '../shell/shortcuts'

/** The types a flow port can be given here: the ones the connection rules know, and lists. */
const PORT_TYPES = [...KNOWN_VARIABLE_TYPES, 'image[]', 'text[]']

const words = (problems: readonly FlowProblem[] | undefined) =>
  problems && problems.length > 0 ? problems.map((problem) => problem.message).join(' ') : null

const typing = (key: string) => ({ key, windowMs: TYPING_MERGE_MS })

function TypeChip({ type }: { type: string }) {
  return <span className={`type-chip type-${typeFamily(type)}`}>{type}</span>
}

function ProblemList({ problems }: { problems: readonly FlowProblem[] | undefined }) {
  if (!problems || problems.length === 0) return null
  return (
    <ul className="problem-list">
      {problems.map((problem, index) => (
        <li key={`${problem.code}-${problem.path}-${index}`} data-testid="problem-marker">
          {problem.message}
        </li>
      ))}
    </ul>
  )
}

function InputEditor({ node, input }: { node: CanvasNode; input: FileNodeInput }) {
  const { doc, readOnly, problems, editDoc } = useAppStore(
    useShallow((s) => ({
      doc: s.doc,
      readOnly: s.editor?.readOnly ?? true,
      problems: s.problems.byInput.get(inputKey(node.id, input.name)),
      editDoc: s.editDoc,
    })),
  )
  if (!doc) return null
  const { record } = node.data
  const spec = specOfNodeInput(input)
  const feed = feedOf(record, input)
  // Flow inputs of a type that feeds this input, and the one it follows now whatever its type.
  const flowInputs = (doc.flow.inputs ?? []).filter(
    (candidate) =>
      typeConnection(candidate.variable_type_code, input.variable_type_code) !== 'none' ||
      (feed.kind === 'flowInput' && candidate.name === feed.name),
  )
  const source = feed.kind === 'edge' ? outputIndex(doc.nodes).get(feed.outputId) : undefined
  const sourceNode = source
    ? doc.nodes.find((candidate) => candidate.id === source.nodeId)
    : undefined
  return (
    <div className="inspector-input" data-testid={`input-${input.name}`}>
      <div className="inspector-input-head">
        <span className="inspector-input-label">
          {spec.label}
          {spec.required ? <span aria-label="required"> *</span> : null}
        </span>
        <TypeChip type={input.variable_type_code} />
      </div>
      {feed.kind === 'edge' ? (
        <div className="inspector-connected">
          {source && sourceNode ? (
            <span>
              From <strong>{sourceNode.data.record.label}</strong> · {source.name}
            </span>
          ) : (
            <span>Connected to an output that is not in this flow.</span>
          )}
          <button
            type="button"
            className="link-button"
            disabled={readOnly}
            onClick={() => {
              editDoc((current) => disconnectInputs(current, new Set([input.id])))
            }}
          >
            Disconnect
          </button>
          <ProblemList problems={problems} />
        </div>
      ) : (
        <>
          {flowInputs.length > 0 ? (
            <select
              aria-label={`Where ${spec.label} comes from`}
              value={feed.kind === 'flowInput' ? `flow:${feed.name}` : 'value'}
              disabled={readOnly}
              onChange={(event) => {
                const choice = event.target.value
                editDoc((current) =>
                  mapInputToFlowInput(
                    current,
                    node.id,
                    input.id,
                    choice.startsWith('flow:') ? choice.slice('flow:'.length) : null,
                  ),
                )
              }}
            >
              <option value="value">A value set here</option>
              {flowInputs.map((flowInput) => (
                <option key={flowInput.id} value={`flow:${flowInput.name}`}>
                  The flow input “{flowInput.display_name ?? flowInput.name}”
                </option>
              ))}
            </select>
          ) : null}
          {feed.kind === 'flowInput' ? (
            <ProblemList problems={problems} />
          ) : (
            <ValueField
              spec={spec}
              value={input.value ?? null}
              disabled={readOnly}
              problem={words(problems)}
              onChange={(value) => {
                editDoc(
                  (current) => setInputValue(current, node.id, input.id, value),
                  typing(`value-${input.id}`),
                )
              }}
            />
          )}
        </>
      )}
    </div>
  )
}

function OutputEditor({ node, output }: { node: CanvasNode; output: FileNodeOutput }) {
  const { flowOutputs, readOnly, editDoc } = useAppStore(
    useShallow((s) => ({
      flowOutputs: s.doc?.flow.outputs,
      readOnly: s.editor?.readOnly ?? true,
      editDoc: s.editDoc,
    })),
  )
  const mapped = portMapping(node.data.record, 'flow_outputs')[output.name] ?? ''
  const compatible = (flowOutputs ?? []).filter(
    (candidate) =>
      typeConnection(output.variable_type_code, candidate.variable_type_code) !== 'none' ||
      candidate.name === mapped,
  )
  return (
    <div className="inspector-output" data-testid={`output-${output.name}`}>
      <div className="inspector-input-head">
        <span className="inspector-input-label">{output.display_name ?? output.name}</span>
        <TypeChip type={output.variable_type_code} />
      </div>
      {compatible.length > 0 ? (
        <select
          aria-label={`Flow output filled by ${output.name}`}
          value={mapped}
          disabled={readOnly}
          onChange={(event) => {
            const name = event.target.value === '' ? null : event.target.value
            editDoc((current) => mapOutputToFlowOutput(current, node.id, output.name, name))
          }}
        >
          <option value="">Fills no flow output</option>
          {compatible.map((flowOutput) => (
            <option key={flowOutput.id} value={flowOutput.name}>
              Fills the flow output “{flowOutput.display_name ?? flowOutput.name}”
            </option>
          ))}
        </select>
      ) : null}
    </div>
  )
}

/**
 * The node's latest log lines in the run, oldest first (the last one is also on the node), kept
 * scrolled to the newest as lines come in.
 */
function NodeLog({ lines }: { lines: readonly NodeLogLine[] }) {
  const list = useRef<HTMLOListElement>(null)
  useEffect(() => {
    const element = list.current
    if (element) element.scrollTop = element.scrollHeight
  }, [lines])
  if (lines.length === 0) return null
  return (
    <div className="inspector-log">
      <h3>Log</h3>
      {lines.length >= NODE_LOG_LIMIT ? (
        <p className="muted">The latest {NODE_LOG_LIMIT} lines.</p>
      ) : null}
      <ol ref={list} className="node-log-lines" aria-label="Log lines" data-testid="node-log-lines">
        {lines.map((line, index) => (
          // Lines have no id and only ever leave from the top: the position is the line.
          <li key={index} className={`node-log-line ${line.level}`} data-level={line.level}>
            <span className="node-log-level">{line.level}</span> {line.message}
          </li>
        ))}
      </ol>
    </div>
  )
}

function NodeInspector({
  node,
  onRunTo,
  onForce,
}: {
  node: CanvasNode
  onRunTo: (nodeId: string) => void
  onForce: (nodeId: string) => void
}) {
  const { readOnly, run, problems, estimate, running, editDoc, deleteSelection, groupSelection } =
    useAppStore(
      useShallow((s) => ({
        readOnly: s.editor?.readOnly ?? true,
        run: s.nodeRuns[node.id],
        problems: s.problems.byNode.get(node.id),
        estimate: s.check?.estimate?.byNode[node.id],
        running:
          s.runPhase === 'starting' || s.runPhase === 'running' || s.runPhase === 'canceling',
        editDoc: s.editDoc,
        deleteSelection: s.deleteSelection,
        groupSelection: s.groupSelection,
      })),
    )
  const { record } = node.data
  const images = Object.entries(run?.outputs ?? {}).flatMap(([name, value]) => {
    const image = firstImage({ [name]: value })
    return image ? [{ name, image }] : []
  })
  const texts = Object.entries(run?.outputs ?? {}).flatMap(([name, value]) => {
    const text = firstText({ [name]: value }, record.outputs)
    return text ? [text] : []
  })
  const nodeLevel = problems?.filter((problem) => problem.inputName === undefined)
  return (
    <section className="inspector" aria-label={`Node ${record.label}`} data-testid="node-inspector">
      <label className="inspector-field">
        <span>Label</span>
        <input
          type="text"
          value={record.label}
          disabled={readOnly}
          onChange={(event) => {
            const label = event.target.value
            editDoc((current) => setNodeLabel(current, node.id, label), typing(`label-${node.id}`))
          }}
        />
      </label>
      <p className="muted inspector-kind">
        {record.type_code}
        {estimate !== undefined ? ` · estimated ${creditsWords(estimate)}` : ''}
      </p>
      <div className="inspector-actions">
        <button
          type="button"
          className="small-button"
          data-testid="run-to-here"
          disabled={running}
          title="Run this node and only what it needs"
          onClick={() => {
            onRunTo(node.id)
          }}
        >
          Run to here
        </button>
        <button
          type="button"
          className="small-button"
          data-testid="force-rerun"
          disabled={running}
          title="Run the flow, this node again even if cached, and what depends on it"
          onClick={() => {
            onForce(node.id)
          }}
        >
          Force re-run
        </button>
        <button
          type="button"
          className="small-button"
          disabled={readOnly}
          title={`Put it in a labelled frame (${shortcutHint('editor.group')})`}
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
      </div>
      {run ? (
        <div className="inspector-run">
          <span className={`state-badge ${run.state}`}>{NODE_STATE_WORDS[run.state]}</span>
          {run.costMicro !== null ? <span>{creditsWords(run.costMicro)}</span> : null}
          {run.error ? <p className="field-problem">{run.error.message}</p> : null}
          {texts.map(({ name, text }) => (
            <figure
              key={name}
              className="inspector-output-text"
              data-testid={`output-text-${name}`}
            >
              <blockquote>{text}</blockquote>
              <figcaption>{name}</figcaption>
            </figure>
          ))}
          {images.map(({ name, image }) => (
            <figure key={name} className="inspector-output-image">
              <MediaImage source={image} alt={`${name} of ${record.label}`} />
              <figcaption>{name}</figcaption>
            </figure>
          ))}
          <NodeLog lines={run.logs} />
        </div>
      ) : null}
      {record.type_code === 'sub_flow' ? <SubFlowStates node={node} /> : null}
      <ProblemList problems={nodeLevel} />
      {(record.inputs ?? []).length > 0 ? <h3>Inputs</h3> : null}
      {(record.inputs ?? []).map((input) => (
        <InputEditor key={input.id} node={node} input={input} />
      ))}
      {(record.outputs ?? []).length > 0 ? <h3>Outputs</h3> : null}
      {(record.outputs ?? []).map((output) => (
        <OutputEditor key={output.id} node={node} output={output} />
      ))}
    </section>
  )
}

function FlowInputEditor({ input }: { input: FileFlowInput }) {
  const { readOnly, problems, editDoc } = useAppStore(
    useShallow((s) => ({
      readOnly: s.editor?.readOnly ?? true,
      problems: s.problems.byFlowInput.get(input.id),
      editDoc: s.editDoc,
    })),
  )
  return (
    <div className="flow-port" data-testid={`flow-input-${input.name}`}>
      <div className="flow-port-row">
        <input
          type="text"
          aria-label="Flow input name"
          value={input.name}
          disabled={readOnly}
          onChange={(event) => {
            const name = event.target.value
            editDoc((doc) => updateFlowInput(doc, input.id, { name }), typing(`fin-${input.id}`))
          }}
        />
        <select
          aria-label={`Type of ${input.name}`}
          value={input.variable_type_code}
          disabled={readOnly}
          onChange={(event) => {
            const type = event.target.value
            editDoc((doc) =>
              updateFlowInput(doc, input.id, { variable_type_code: type, default_value: null }),
            )
          }}
        >
          {[...new Set([input.variable_type_code, ...PORT_TYPES])].map((type) => (
            <option key={type}>{type}</option>
          ))}
        </select>
        <button
          type="button"
          className="link-button"
          aria-label={`Remove the flow input ${input.name}`}
          disabled={readOnly}
          onClick={() => {
            editDoc((doc) => removeFlowInput(doc, input.id))
          }}
        >
          Remove
        </button>
      </div>
      <label className="check-field">
        <input
          type="checkbox"
          checked={input.is_required ?? false}
          disabled={readOnly}
          onChange={(event) => {
            const required = event.target.checked
            editDoc((doc) => updateFlowInput(doc, input.id, { is_required: required }))
          }}
        />
        Required
      </label>
      <div className="flow-port-default">
        <span>Default, when a run leaves it empty</span>
        <ValueField
          spec={{
            ...specOfFlowInput(input),
            label: `Default of ${input.name}`,
            defaultValue: null,
          }}
          value={input.default_value ?? null}
          disabled={readOnly}
          onChange={(value) => {
            editDoc(
              (doc) => updateFlowInput(doc, input.id, { default_value: value }),
              typing(`fin-default-${input.id}`),
            )
          }}
        />
      </div>
      <ProblemList problems={problems} />
    </div>
  )
}

/** With no node selected: the flow's own inputs and outputs, and its problems. */
function FlowPanel() {
  const { doc, readOnly, problems, editDoc, select } = useAppStore(
    useShallow((s) => ({
      doc: s.doc,
      readOnly: s.editor?.readOnly ?? true,
      problems: s.problems,
      editDoc: s.editDoc,
      select: s.select,
    })),
  )
  if (!doc) return null
  const filledBy = new Map<string, string>()
  for (const node of doc.nodes) {
    for (const [port, name] of Object.entries(portMapping(node.data.record, 'flow_outputs'))) {
      filledBy.set(name, `${node.data.record.label} · ${port}`)
    }
  }
  const problemNodes = [...problems.byNode.entries()].flatMap(([nodeId, list]) => {
    const node = doc.nodes.find((candidate) => candidate.id === nodeId)
    return node ? [{ node, list }] : []
  })
  return (
    <section className="inspector" aria-label="Flow inputs and outputs" data-testid="flow-panel">
      <h3>Flow inputs</h3>
      <p className="muted">What a run asks for. Feed a node input from one in the node’s panel.</p>
      {(doc.flow.inputs ?? []).map((input) => (
        <FlowInputEditor key={input.id} input={input} />
      ))}
      <AddPort
        label="Add a flow input"
        disabled={readOnly}
        onAdd={(type) => {
          editDoc((current) => addFlowInput(current, type))
        }}
      />
      <h3>Flow outputs</h3>
      <p className="muted">What a run gives back. Choose which node output fills each.</p>
      {(doc.flow.outputs ?? []).map((output) => (
        <div key={output.id} className="flow-port" data-testid={`flow-output-${output.name}`}>
          <div className="flow-port-row">
            <input
              type="text"
              aria-label="Flow output name"
              value={output.name}
              disabled={readOnly}
              onChange={(event) => {
                const name = event.target.value
                editDoc(
                  (current) => updateFlowOutput(current, output.id, { name }),
                  typing(`fout-${output.id}`),
                )
              }}
            />
            <TypeChip type={output.variable_type_code} />
            <button
              type="button"
              className="link-button"
              aria-label={`Remove the flow output ${output.name}`}
              disabled={readOnly}
              onClick={() => {
                editDoc((current) => removeFlowOutput(current, output.id))
              }}
            >
              Remove
            </button>
          </div>
          <p className="muted">
            {filledBy.has(output.name)
              ? `Filled by ${filledBy.get(output.name) ?? ''}`
              : 'Not filled yet'}
          </p>
          <ProblemList problems={problems.byFlowOutput.get(output.id)} />
        </div>
      ))}
      <AddPort
        label="Add a flow output"
        disabled={readOnly}
        onAdd={(type) => {
          editDoc((current) => addFlowOutput(current, type))
        }}
      />
      {problems.count > 0 ? (
        <>
          <h3>Problems</h3>
          <ProblemList problems={problems.flow} />
          <ul className="problem-nodes">
            {problemNodes.map(({ node, list }) => (
              <li key={node.id}>
                <button
                  type="button"
                  className="link-button"
                  onClick={() => {
                    select({ nodeIds: [node.id], edgeIds: [] })
                  }}
                >
                  {node.data.record.label}
                </button>
                : {list.map((problem) => problem.message).join(' ')}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  )
}

function AddPort({
  label,
  disabled,
  onAdd,
}: {
  label: string
  disabled: boolean
  onAdd: (type: string) => void
}) {
  return (
    <form
      className="add-port"
      onSubmit={(event) => {
        event.preventDefault()
        const type = new FormData(event.currentTarget).get('type')
        if (typeof type === 'string') onAdd(type)
      }}
    >
      <select name="type" aria-label={`${label}: type`} defaultValue="text" disabled={disabled}>
        {PORT_TYPES.map((type) => (
          <option key={type}>{type}</option>
        ))}
      </select>
      <button type="submit" className="small-button" disabled={disabled}>
        {label}
      </button>
    </form>
  )
}

/** A selected group: its label, its nodes, and the way out of it. */
function GroupPanel({ group }: { group: NodeGroup }) {
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

/** A sub-flow's own nodes, as they do in the run: loaded from the sub-flow for their labels. */
function SubFlowStates({ node }: { node: CanvasNode }) {
  const inner = useAppStore(useShallow((s) => Object.fromEntries(innerRuns(s.nodeRuns, node.id))))
  const subFlowId = node.data.record.sub_flow_id ?? null
  const [loaded, setLoaded] = useState<{ id: string; labels: Map<string, string> } | null>(null)
  useEffect(() => {
    const api = window.atelier
    if (!api || subFlowId === null) return
    let current = true
    void api.flows.get({ id: subFlowId }).then((result) => {
      if (!current || !result.ok) return
      const nodes = Array.isArray(result.value.flow.nodes) ? result.value.flow.nodes : []
      const labels = new Map<string, string>()
      for (const item of nodes as { id?: unknown; label?: unknown }[]) {
        if (typeof item.id === 'string') {
          labels.set(item.id, typeof item.label === 'string' ? item.label : item.id)
        }
      }
      setLoaded({ id: subFlowId, labels })
    })
    return () => {
      current = false
    }
  }, [subFlowId])
  const labels = loaded?.id === subFlowId ? loaded.labels : new Map<string, string>()
  // The sub-flow's nodes in its own order, then any the run told of that it does not list.
  const ids = [...labels.keys(), ...Object.keys(inner).filter((id) => !labels.has(id))]
  if (ids.length === 0) return null
  return (
    <div className="sub-flow-states" data-testid="sub-flow-states">
      <h3>Inside the sub-flow</h3>
      <ul>
        {ids.map((id) => {
          const run = inner[id]
          return (
            <li key={id} data-testid={`inner-${labels.get(id) ?? id}`}>
              <span className="sub-flow-node">{labels.get(id) ?? id}</span>
              {run ? (
                <span className={`state-badge ${run.state}`} data-state={run.state}>
                  {NODE_STATE_WORDS[run.state]}
                </span>
              ) : (
                <span className="muted">Not reached</span>
              )}
              {run?.error ? <p className="field-problem">{run.error.message}</p> : null}
            </li>
          )
        })}
      </ul>
    </div>
  )
}

/** The side panel: the selected node, several selected, a group, or the flow itself. */
export function Inspector({
  onRunTo,
  onForce,
}: {
  onRunTo: (nodeId: string) => void
  onForce: (nodeId: string) => void
}) {
  const { doc, selection, readOnly, deleteSelection, copySelection, groupSelection } = useAppStore(
    useShallow((s) => ({
      doc: s.doc,
      selection: s.selection,
      readOnly: s.editor?.readOnly ?? true,
      deleteSelection: s.deleteSelection,
      copySelection: s.copySelection,
      groupSelection: s.groupSelection,
    })),
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
        <section className="inspector" aria-label="Selected nodes">
          <p>{selected.length} nodes selected.</p>
          <div className="inspector-actions">
            <button type="button" className="small-button" onClick={copySelection}>
              Copy
            </button>
            <button
              type="button"
              className="small-button"
              disabled={readOnly}
              title={`Group them in a labelled frame (${shortcutHint('editor.group')})`}
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
          </div>
        </section>
      ) : group ? (
        <GroupPanel group={group} />
      ) : (
        <FlowPanel />
      )}
    </aside>
  )
}

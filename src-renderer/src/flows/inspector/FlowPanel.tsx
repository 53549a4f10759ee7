import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../../store'
import {
  addFlowInput,
  addFlowOutput,
  portMapping,
  removeFlowOutput,
  updateFlowOutput,
} from '../document'
import { AddPort } from './AddPort'
import { typing } from './editing'
import { FlowInputEditor } from './FlowInputEditor'
import { ProblemList } from './ProblemList'
import { TypeChip } from './TypeChip'

/** With no node selected: the flow's own inputs and outputs, and its problems. */
export function FlowPanel() {
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

import { useShallow } from 'zustand/react/shallow'
import {
  drawnSeedIn,
  SEED_TYPE,
  typeConnection,
  type FlowProblem,
} from '../../../../src-shared/domain/flow'
import { useAppStore } from '../../store'
import {
  disconnectInputs,
  feedOf,
  inputKey,
  mapInputToFlowInput,
  outputIndex,
  setInputValue,
  type CanvasNode,
  type FileNodeInput,
} from '../document'
import { specOfNodeInput, ValueField } from '../inputs'
import { typing } from './editing'
import { ProblemList } from './ProblemList'
import { changeSeed, SeedField } from './SeedField'
import { TypeChip } from './TypeChip'

const words = (problems: readonly FlowProblem[] | undefined) =>
  problems && problems.length > 0 ? problems.map((problem) => problem.message).join(' ') : null

/** The seed the node's latest run drew for an input, from its log; null when none was drawn. */
function lastDrawnSeed(logs: readonly { message: string }[] | undefined, name: string) {
  for (const line of [...(logs ?? [])].reverse()) {
    const seed = drawnSeedIn(line.message, name)
    if (seed !== null) return seed
  }
  return null
}

export function InputEditor({ node, input }: { node: CanvasNode; input: FileNodeInput }) {
  const { doc, readOnly, problems, editDoc, logs } = useAppStore(
    useShallow((s) => ({
      doc: s.doc,
      readOnly: s.editor?.readOnly ?? true,
      problems: s.problems.byInput.get(inputKey(node.id, input.name)),
      editDoc: s.editDoc,
      logs: s.nodeRuns[node.id]?.logs,
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
          ) : input.variable_type_code === SEED_TYPE ? (
            <SeedField
              label={spec.label}
              input={input}
              lastDrawn={lastDrawnSeed(logs, input.name)}
              disabled={readOnly}
              problem={words(problems)}
              onChange={(change) => {
                editDoc((current) => changeSeed(current, node.id, input.id, change))
              }}
            />
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

import { useShallow } from 'zustand/react/shallow'
import { MediaImage } from '../../components/MediaImage'
import { useAppStore } from '../../store'
import { isOutOfDate } from '../../store/editorRuns'
import { firstImage, firstText, setNodeLabel, type CanvasNode } from '../document'
import { creditsWords, NODE_STATE_WORDS, nodeKindWords, STALE_TITLE, STALE_WORDS } from '../words'
import { typing } from './editing'
import { GroupDeleteButtons } from './GroupDeleteButtons'
import { InputEditor } from './InputEditor'
import { NodeLog } from './NodeLog'
import { OutputEditor } from './OutputEditor'
import { ProblemList } from './ProblemList'
import { SubFlowStates } from './SubFlowStates'

export function NodeInspector({
  node,
  onRunTo,
  onForce,
}: {
  node: CanvasNode
  onRunTo: (nodeId: string) => void
  onForce: (nodeId: string) => void
}) {
  const { readOnly, run, stale, problems, estimate, running, editDoc } = useAppStore(
    useShallow((s) => ({
      readOnly: s.editor?.readOnly ?? true,
      run: s.nodeRuns[node.id],
      stale: isOutOfDate(s, node.id),
      problems: s.problems.byNode.get(node.id),
      estimate: s.check?.estimate?.byNode[node.id],
      running: s.runPhase === 'starting' || s.runPhase === 'running' || s.runPhase === 'canceling',
      editDoc: s.editDoc,
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
        {nodeKindWords(record)}
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
        <GroupDeleteButtons groupTitle="Put it in a labelled frame" />
      </div>
      {run ? (
        <div className={stale ? 'inspector-run stale' : 'inspector-run'}>
          <span
            className={stale ? 'state-badge stale' : `state-badge ${run.state}`}
            data-testid="inspector-state"
            data-stale={stale ? 'true' : undefined}
          >
            {stale ? STALE_WORDS : NODE_STATE_WORDS[run.state]}
          </span>
          {stale ? <p className="muted">{STALE_TITLE}</p> : null}
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

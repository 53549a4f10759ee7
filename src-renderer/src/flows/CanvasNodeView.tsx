import { Handle, Position, type NodeProps } from '@xyflow/react'
import { memo, useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { firstImage, inputKey, type CanvasNode, type FileNodeInput } from './document'
import { creditsWords, elapsedWords, NODE_STATE_WORDS, typeFamily } from './words'
import { MediaImage } from '../components/MediaImage'

/** The current time, renewed every second while `ticking`, for a running node's clock. */
function useTicking(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!ticking) return
    const timer = setInterval(() => {
      setNow(Date.now())
    }, 1000)
    return () => {
      clearInterval(timer)
    }
  }, [ticking])
  return now
}

function InputPort({ nodeId, input }: { nodeId: string; input: FileNodeInput }) {
  const problems = useAppStore((s) => s.problems.byInput.get(inputKey(nodeId, input.name)))
  const family = typeFamily(input.variable_type_code)
  return (
    <div className={problems ? 'port in has-problem' : 'port in'}>
      <Handle
        type="target"
        position={Position.Left}
        id={input.id}
        className={`handle type-${family}`}
        data-testid={`port-in-${input.name}`}
        title={`${input.name}: ${input.variable_type_code}`}
      />
      <span className="port-name">
        {input.display_name ?? input.name}
        {input.is_required ? <span aria-label="required"> *</span> : null}
      </span>
      {problems ? (
        <span
          className="problem-dot"
          data-testid="problem-marker"
          title={problems.map((p) => p.message).join('\n')}
        >
          !
        </span>
      ) : null}
    </div>
  )
}

/**
 * A node on the canvas: its label, its typed ports, and how it does in the run (state, clock,
 * cost, last log line, first image out), with the check's problems marked on it.
 */
export const CanvasNodeView = memo(function CanvasNodeView({
  id,
  data,
  selected,
}: NodeProps<CanvasNode>) {
  const { record } = data
  const { run, problems, estimate } = useAppStore(
    useShallow((s) => ({
      run: s.nodeRuns[id],
      problems: s.problems.byNode.get(id),
      estimate: s.check?.estimate?.byNode[id],
    })),
  )
  const running = run?.state === 'running'
  const now = useTicking(running)
  const image = firstImage(run?.outputs ?? null)
  const cost = run?.costMicro ?? null
  const state = run?.state
  return (
    <div
      className={[
        'flow-node',
        state ? `state-${state}` : '',
        problems ? 'has-problem' : '',
        selected ? 'selected' : '',
      ]
        .filter(Boolean)
        .join(' ')}
      data-testid={`node-${record.label}`}
    >
      <header className="flow-node-head">
        <span className="flow-node-label">{record.label || 'Untitled node'}</span>
        {state ? (
          <span className={`state-badge ${state}`} data-testid="node-state" data-state={state}>
            {NODE_STATE_WORDS[state]}
          </span>
        ) : null}
      </header>
      <div className="flow-node-kind">
        {record.subtitle ?? record.builtin_node_code ?? record.type_code}
      </div>
      <div className="flow-node-ports">
        <div className="ports-in">
          {(record.inputs ?? []).map((input) => (
            <InputPort key={input.id} nodeId={id} input={input} />
          ))}
        </div>
        <div className="ports-out">
          {(record.outputs ?? []).map((output) => (
            <div key={output.id} className="port out">
              <span className="port-name">{output.display_name ?? output.name}</span>
              <Handle
                type="source"
                position={Position.Right}
                id={output.id}
                className={`handle type-${typeFamily(output.variable_type_code)}`}
                data-testid={`port-out-${output.name}`}
                title={`${output.name}: ${output.variable_type_code}`}
              />
            </div>
          ))}
        </div>
      </div>
      <footer className="flow-node-foot">
        {running && run.startedMs !== null ? (
          <span data-testid="node-elapsed">{elapsedWords(now - run.startedMs)}</span>
        ) : null}
        {running && run.progress !== null ? <span>{Math.round(run.progress * 100)}%</span> : null}
        {cost !== null ? (
          <span data-testid="node-cost">{creditsWords(cost)}</span>
        ) : estimate !== undefined ? (
          <span data-testid="node-estimate" title="Estimated cost">
            ≈ {creditsWords(estimate)}
          </span>
        ) : null}
        {problems ? (
          <span
            className="problem-count"
            data-testid="problem-marker"
            title={problems.map((p) => p.message).join('\n')}
          >
            {problems.length === 1 ? '1 problem' : `${problems.length} problems`}
          </span>
        ) : null}
      </footer>
      {run?.lastLog ? (
        <div
          className={`flow-node-log ${run.lastLog.level}`}
          data-testid="node-log"
          title={run.lastLog.message}
        >
          {run.lastLog.message}
        </div>
      ) : null}
      {image ? (
        <MediaImage
          className="flow-node-preview"
          source={image}
          alt={`Output of ${record.label}`}
        />
      ) : null}
    </div>
  )
})

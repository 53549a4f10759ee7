import { Handle, Position, type HandleType, type NodeProps } from '@xyflow/react'
import { memo, useContext, useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { isOutOfDate } from '../store/editorRuns'
import type { FlowProblem } from '../../../src-shared/domain/flow'
import {
  firstImage,
  firstText,
  innerRuns,
  inputKey,
  subFlowProgress,
  type CanvasNode,
  type FileNodeInput,
} from './document'
import { FarViewContext } from './farView'
import {
  creditsWords,
  elapsedWords,
  NODE_STATE_WORDS,
  nodeKindWords,
  STALE_TITLE,
  STALE_WORDS,
  subFlowWords,
  typeFamily,
} from './words'
import { MediaImage } from '../components/MediaImage'

/** Longer labels are set smaller when the canvas is zoomed out (flows.css, `.far`). */
const LONG_LABEL = 24

/**
 * A text output on the node: at most this many characters (then clamped to a few lines by
 * flows.css), and a longer part of it on hover; the inspector shows it whole.
 */
const TEXT_PREVIEW_CHARS = 280
const TEXT_TITLE_CHARS = 2000

const clip = (text: string, limit: number) =>
  text.length > limit ? `${text.slice(0, limit - 1).trimEnd()}…` : text

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

/**
 * Where a port's edges end when the canvas is zoomed out past reading: a plain element React
 * Flow measures as it measures a handle (by these classes and data attributes), without a
 * handle's subscription to the canvas store, which every handle runs at every store change. At
 * that zoom a port is too small to draw a connection from anyway.
 */
function PortMark({ nodeId, portId, type }: { nodeId: string; portId: string; type: HandleType }) {
  const position = type === 'target' ? Position.Left : Position.Right
  return (
    <div
      className={`react-flow__handle react-flow__handle-${position} ${type} handle`}
      data-handleid={portId}
      data-nodeid={nodeId}
      data-handlepos={position}
    />
  )
}

function PortEnd({
  nodeId,
  portId,
  type,
  variableType,
  name,
}: {
  nodeId: string
  portId: string
  type: HandleType
  variableType: string
  name: string
}) {
  const far = useContext(FarViewContext)
  if (far) return <PortMark nodeId={nodeId} portId={portId} type={type} />
  return (
    <Handle
      type={type}
      position={type === 'target' ? Position.Left : Position.Right}
      id={portId}
      className={`handle type-${typeFamily(variableType)}`}
      data-testid={`port-${type === 'target' ? 'in' : 'out'}-${name}`}
      title={`${name}: ${variableType}`}
    />
  )
}

function InputPort({
  nodeId,
  input,
  problems,
}: {
  nodeId: string
  input: FileNodeInput
  problems: readonly FlowProblem[] | undefined
}) {
  return (
    <div className={problems ? 'port in has-problem' : 'port in'}>
      <PortEnd
        nodeId={nodeId}
        portId={input.id}
        type="target"
        variableType={input.variable_type_code}
        name={input.name}
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
 * A sub-flow node's inner nodes in a line, "3/5 done · 1 failed", once the run reaches them (the
 * total is the sub-flow's node count when the flow list knows the sub-flow).
 */
function SubFlowLine({ nodeId, subFlowId }: { nodeId: string; subFlowId: string | null }) {
  const progress = useAppStore(
    useShallow((s) =>
      subFlowProgress(
        innerRuns(s.nodeRuns, nodeId),
        s.flows?.find((flow) => flow.id === subFlowId)?.nodeCount ?? null,
      ),
    ),
  )
  if (progress.done + progress.failed + progress.running === 0) return null
  return (
    <span
      className={progress.failed > 0 ? 'sub-flow-progress failed' : 'sub-flow-progress'}
      data-testid="sub-flow-progress"
    >
      {subFlowWords(progress)}
    </span>
  )
}

/**
 * A node on the canvas: its label, its typed ports, and how it does in the run (state, clock,
 * cost, last log line, first words and first image out), with the check's problems marked on it.
 */
export const CanvasNodeView = memo(function CanvasNodeView({
  id,
  data,
  selected,
}: NodeProps<CanvasNode>) {
  const { record } = data
  // One subscription per node, not one per port: every store change runs every subscriber.
  const { run, stale, problems, byInput, estimate } = useAppStore(
    useShallow((s) => ({
      run: s.nodeRuns[id],
      stale: isOutOfDate(s, id),
      problems: s.problems.byNode.get(id),
      byInput: s.problems.byInput,
      estimate: s.check?.estimate?.byNode[id],
    })),
  )
  const running = run?.state === 'running'
  const now = useTicking(running)
  const image = firstImage(run?.outputs ?? null)
  const text = firstText(run?.outputs ?? null, record.outputs)
  const cost = run?.costMicro ?? null
  const state = run?.state
  return (
    <div
      className={[
        'flow-node',
        state ? `state-${state}` : '',
        stale ? 'stale' : '',
        problems ? 'has-problem' : '',
        selected ? 'selected' : '',
      ]
        .filter(Boolean)
        .join(' ')}
      data-testid={`node-${record.label}`}
    >
      <header className="flow-node-head">
        <span
          className={record.label.length > LONG_LABEL ? 'flow-node-label long' : 'flow-node-label'}
        >
          {record.label || 'Untitled node'}
        </span>
        {state ? (
          <span
            className={stale ? 'state-badge stale' : `state-badge ${state}`}
            data-testid="node-state"
            data-state={state}
            data-stale={stale ? 'true' : undefined}
            title={stale ? STALE_TITLE : undefined}
          >
            {stale ? STALE_WORDS : NODE_STATE_WORDS[state]}
          </span>
        ) : null}
      </header>
      <div className="flow-node-kind">{nodeKindWords(record)}</div>
      <div className="flow-node-ports">
        <div className="ports-in">
          {(record.inputs ?? []).map((input) => (
            <InputPort
              key={input.id}
              nodeId={id}
              input={input}
              problems={byInput.get(inputKey(id, input.name))}
            />
          ))}
        </div>
        <div className="ports-out">
          {(record.outputs ?? []).map((output) => (
            <div key={output.id} className="port out">
              <span className="port-name">{output.display_name ?? output.name}</span>
              <PortEnd
                nodeId={id}
                portId={output.id}
                type="source"
                variableType={output.variable_type_code}
                name={output.name}
              />
            </div>
          ))}
        </div>
      </div>
      <footer className="flow-node-foot">
        {record.type_code === 'sub_flow' ? (
          <SubFlowLine nodeId={id} subFlowId={record.sub_flow_id ?? null} />
        ) : null}
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
      {text ? (
        <p
          className="flow-node-text"
          data-testid="node-text"
          aria-label={`${text.name} of ${record.label}`}
          title={clip(text.text, TEXT_TITLE_CHARS)}
        >
          {clip(text.text, TEXT_PREVIEW_CHARS)}
        </p>
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

import type {
  FlowRunEvent,
  FlowRunState,
  FlowRunTotals,
  NodeRunError,
  NodeRunState,
} from '../../../../src-shared/domain/flow-run'

/** What a node shows of the run while it goes: its badge, clock, cost, last log line, outputs. */
export interface NodeRunView {
  state: NodeRunState
  attempt: number
  /** When it started running (ms, this window's clock), for the elapsed time. */
  startedMs: number | null
  endedMs: number | null
  /** 0…1, when the runner tells. */
  progress: number | null
  lastLog: { level: 'debug' | 'info' | 'warning' | 'error'; message: string } | null
  costMicro: number | null
  outputs: Record<string, unknown> | null
  error: NodeRunError | null
  skipReason: 'branch-not-taken' | 'upstream-failed' | null
}

/** The run the editor started, as its events tell it. */
export interface RunView {
  flowRunId: string
  state: FlowRunState
  estimateMicro: number | null
  totals: FlowRunTotals | null
  /** By flow output name, once finished. */
  outputs: Record<string, unknown> | null
}

const blank = (state: NodeRunState, attempt: number): NodeRunView => ({
  state,
  attempt,
  startedMs: null,
  endedMs: null,
  progress: null,
  lastLog: null,
  costMicro: null,
  outputs: null,
  error: null,
  skipReason: null,
})

const ENDED: readonly NodeRunState[] = ['succeeded', 'cached', 'skipped', 'failed', 'canceled']

export const isEnded = (state: NodeRunState) => ENDED.includes(state)

/**
 * The node views after one event. Pure, so a sequence of events replays to the same views; an
 * event of an earlier attempt than the one shown is stale and changes nothing.
 */
export function applyNodeEvent(
  views: Readonly<Record<string, NodeRunView>>,
  event: FlowRunEvent,
  now: number,
): Record<string, NodeRunView> {
  if (event.type === 'flow-started' || event.type === 'flow-finished') return { ...views }
  const current = views[event.nodeId]
  if (current && event.attempt < current.attempt) return { ...views }
  const base =
    current && current.attempt === event.attempt ? current : blank('queued', event.attempt)
  const end = (state: NodeRunState, patch: Partial<NodeRunView> = {}): NodeRunView => ({
    ...base,
    ...patch,
    state,
    endedMs: now,
    progress: state === 'succeeded' || state === 'cached' ? 1 : base.progress,
  })
  let next: NodeRunView
  switch (event.type) {
    case 'node-queued':
      next = blank('queued', event.attempt)
      break
    case 'node-running':
      next = { ...base, state: 'running', startedMs: base.startedMs ?? now, endedMs: null }
      break
    case 'node-progress':
      next = {
        ...base,
        progress: event.fraction,
        lastLog: event.message ? { level: 'info', message: event.message } : base.lastLog,
      }
      break
    case 'node-log':
      next = { ...base, lastLog: { level: event.level, message: event.message } }
      break
    case 'node-remote-run':
      next = base
      break
    case 'node-cost':
      next = { ...base, costMicro: event.costMicro }
      break
    case 'node-cached':
      next = end('cached', { outputs: event.outputs, costMicro: 0 })
      break
    case 'node-skipped':
      next = end('skipped', { skipReason: event.reason })
      break
    case 'node-succeeded':
      next = end('succeeded', { outputs: event.outputs, costMicro: event.costMicro })
      break
    case 'node-failed':
      next = end('failed', {
        error: event.error,
        lastLog: { level: 'error', message: event.error.message },
      })
      break
    case 'node-canceled':
      next = end('canceled')
      break
  }
  return { ...views, [event.nodeId]: next }
}

/** The run view after one event; null while nothing has been told of it. */
export function applyRunEvent(run: RunView | null, event: FlowRunEvent): RunView | null {
  switch (event.type) {
    case 'flow-started':
      return {
        flowRunId: event.flowRunId,
        state: 'running',
        estimateMicro: event.estimateMicro,
        totals: null,
        outputs: null,
      }
    case 'flow-finished':
      return {
        flowRunId: event.flowRunId,
        state: event.state,
        estimateMicro: run?.estimateMicro ?? event.totals.estimateMicro,
        totals: event.totals,
        outputs: event.outputs,
      }
    default:
      return run
  }
}

/** A media reference as run outputs carry images and videos. */
export interface MediaRef {
  kind: 'media'
  sha256: string
  content_type: string
  url: string
}

export function isMediaRef(value: unknown): value is MediaRef {
  if (typeof value !== 'object' || value === null) return false
  const ref = value as Partial<Record<keyof MediaRef, unknown>>
  return (
    ref.kind === 'media' &&
    typeof ref.sha256 === 'string' &&
    typeof ref.content_type === 'string' &&
    typeof ref.url === 'string'
  )
}

/** The first image among a node's outputs (a list's first item counts), for its preview. */
export function firstImage(outputs: Record<string, unknown> | null): MediaRef | null {
  for (const value of Object.values(outputs ?? {})) {
    const candidates: unknown[] = Array.isArray(value) ? value : [value]
    for (const candidate of candidates) {
      if (isMediaRef(candidate) && candidate.content_type.startsWith('image/')) return candidate
    }
  }
  return null
}

/**
 * The run views of a sub-flow node's own inner nodes (the executor names them
 * `<sub-flow node id>/<inner node id>`; deeper ones belong to the inner sub-flows), by inner id.
 */
export function innerRuns(
  views: Readonly<Record<string, NodeRunView>>,
  nodeId: string,
): Map<string, NodeRunView> {
  const prefix = `${nodeId}/`
  const inner = new Map<string, NodeRunView>()
  for (const [id, view] of Object.entries(views)) {
    if (!id.startsWith(prefix)) continue
    const rest = id.slice(prefix.length)
    if (!rest.includes('/')) inner.set(rest, view)
  }
  return inner
}

/** How a sub-flow's nodes do in the run, counted. */
export interface SubFlowProgress {
  done: number
  failed: number
  running: number
  /** The sub-flow's node count when known (the flow list has it), else null. */
  total: number | null
}

export function subFlowProgress(
  inner: ReadonlyMap<string, NodeRunView>,
  total: number | null,
): SubFlowProgress {
  let done = 0
  let failed = 0
  let running = 0
  for (const view of inner.values()) {
    if (view.state === 'succeeded' || view.state === 'cached') done++
    else if (view.state === 'failed') failed++
    else if (view.state === 'running') running++
  }
  return { done, failed, running, total }
}

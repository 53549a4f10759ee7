import { listElement } from '../../../../src-shared/domain/flow'
import type {
  FlowRunEvent,
  FlowRunState,
  FlowRunTotals,
  NodeRunError,
  NodeRunState,
} from '../../../../src-shared/domain/flow-run'

/** One line of a node's log in the run, as the runner told it. */
export interface NodeLogLine {
  level: 'debug' | 'info' | 'warning' | 'error'
  message: string
}

/** A node keeps this many of its latest log lines (the inspector lists them). */
export const NODE_LOG_LIMIT = 50

/**
 * What a node shows of the run while it goes: its badge, clock, cost, log lines (the last one on
 * the node, the latest ones in the inspector), outputs.
 */
export interface NodeRunView {
  state: NodeRunState
  attempt: number
  /** When it started running (ms, this window's clock), for the elapsed time. */
  startedMs: number | null
  endedMs: number | null
  /** 0…1, when the runner tells. */
  progress: number | null
  /** The latest line of `logs`, or null before the first. */
  lastLog: NodeLogLine | null
  /** The attempt's latest log lines, oldest first, at most NODE_LOG_LIMIT. */
  logs: readonly NodeLogLine[]
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
  logs: [],
  costMicro: null,
  outputs: null,
  error: null,
  skipReason: null,
})

/**
 * The view with one more log line: appended to its latest lines (the oldest let go past the
 * limit) and shown as its last. A progress message the same as the last line is not repeated.
 */
function withLog(view: NodeRunView, line: NodeLogLine, repeatable = true): NodeRunView {
  const last = view.lastLog
  if (!repeatable && last?.message === line.message && last.level === line.level) return view
  const logs =
    view.logs.length >= NODE_LOG_LIMIT
      ? [...view.logs.slice(view.logs.length - NODE_LOG_LIMIT + 1), line]
      : [...view.logs, line]
  return { ...view, lastLog: line, logs }
}

/** The line a canceled node ends its log with, so its last line is not a status it left. */
const CANCELED_LINE: NodeLogLine = { level: 'warning', message: 'Canceled before it finished.' }

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
  if (event.type === 'flow-started') return { ...views }
  if (event.type === 'flow-finished') {
    if (event.state !== 'canceled') return { ...views }
    // A canceled run leaves nothing waiting or running, even a node whose own word got lost.
    return Object.fromEntries(
      Object.entries(views).map(([id, view]) => [
        id,
        isEnded(view.state)
          ? view
          : withLog({ ...view, state: 'canceled', endedMs: now }, CANCELED_LINE),
      ]),
    )
  }
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
      next = { ...base, progress: event.fraction }
      if (event.message) next = withLog(next, { level: 'info', message: event.message }, false)
      break
    case 'node-log':
      next = withLog(base, { level: event.level, message: event.message })
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
      next = withLog(end('failed', { error: event.error }), {
        level: 'error',
        message: event.error.message,
      })
      break
    case 'node-canceled':
      // Its last line was the service's live status ("running"): that is no longer true.
      next = withLog(end('canceled'), CANCELED_LINE)
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

/** Words a node made (a caption, a prompt), by the output that holds them. */
export interface TextOutput {
  name: string
  text: string
}

const TEXT_TYPES: ReadonlySet<string> = new Set(['text', 'string'])

/**
 * The first words among a node's outputs (a list's first words count), for its preview. When the
 * node names its output ports, only a text or string port (or a list of them) counts, so an id
 * it also gives (an evaluation's) is not shown as words; when it names none, any string does.
 * Blank strings are not words.
 */
export function firstText(
  outputs: Record<string, unknown> | null,
  ports: readonly { name: string; variable_type_code: string }[] = [],
): TextOutput | null {
  const types = new Map(ports.map((port) => [port.name, port.variable_type_code]))
  for (const [name, value] of Object.entries(outputs ?? {})) {
    const type = types.get(name)
    if (types.size > 0 && (type === undefined || !TEXT_TYPES.has(listElement(type) ?? type))) {
      continue
    }
    const candidates: unknown[] = Array.isArray(value) ? value : [value]
    const text = candidates.find(
      (candidate): candidate is string => typeof candidate === 'string' && candidate.trim() !== '',
    )
    if (text !== undefined) return { name, text }
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

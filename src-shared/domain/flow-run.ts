/**
 * A local flow run as both ends of the IPC boundary see it: the events the executor tells while
 * a flow runs (for the run view, the CLI's lines and scripts) and the record the ledger keeps of
 * it afterwards (for offline review). Runtime-free: types only.
 *
 * Node ids inside a sub-flow are prefixed with the sub-flow node's id and a slash
 * (`<sub-flow node>/<node>`), so that one flow run names every node run it made once.
 */

export type FlowRunState = 'running' | 'succeeded' | 'failed' | 'canceled'

/**
 * `cached`: its outputs came from an earlier node run with the same cache key (or from this
 * flow run before a crash), nothing was dispatched. `skipped`: it had nothing to run on (a
 * branch not taken, or a node it depends on failed or was skipped).
 */
export type NodeRunState =
  'queued' | 'running' | 'succeeded' | 'cached' | 'skipped' | 'failed' | 'canceled'

export type FailurePolicy = 'finish-independent' | 'fail-fast'

export interface FlowRunTotals {
  nodes: number
  /** Node runs that went to a runner (the service or this machine). */
  dispatched: number
  cached: number
  skipped: number
  failed: number
  canceled: number
  /** Micro-credits: what the estimate said before the run, and what it actually cost. */
  estimateMicro: number
  costMicro: number
}

export interface NodeRunError {
  code: string
  message: string
}

interface NodeEventBase {
  flowRunId: string
  nodeId: string
  attempt: number
}

export type FlowRunEvent =
  | {
      type: 'flow-started'
      flowRunId: string
      flowId: string
      resumed: boolean
      estimateMicro: number
      /** Per node id, what the estimate expects it to cost. */
      estimateByNode: Record<string, number>
      /** Nodes the estimate expects to be answered by the cache (and so to cost nothing). */
      cachedNodes?: number
    }
  | {
      type: 'flow-finished'
      flowRunId: string
      state: Exclude<FlowRunState, 'running'>
      totals: FlowRunTotals
      /** By flow output name. */
      outputs: Record<string, unknown>
    }
  | (NodeEventBase & { type: 'node-queued' })
  | (NodeEventBase & { type: 'node-running' })
  | (NodeEventBase & { type: 'node-progress'; fraction: number | null; message?: string })
  | (NodeEventBase & {
      type: 'node-log'
      level: 'debug' | 'info' | 'warning' | 'error'
      message: string
    })
  | (NodeEventBase & { type: 'node-remote-run'; runId: string; batchId?: string })
  | (NodeEventBase & { type: 'node-cost'; costMicro: number })
  | (NodeEventBase & {
      type: 'node-cached'
      outputs: Record<string, unknown>
      /** The flow run whose node run the outputs come from. */
      fromFlowRunId: string
    })
  | (NodeEventBase & { type: 'node-skipped'; reason: 'branch-not-taken' | 'upstream-failed' })
  | (NodeEventBase & {
      type: 'node-succeeded'
      outputs: Record<string, unknown>
      costMicro: number
      remoteRunId?: string
      batchId?: string
    })
  | (NodeEventBase & { type: 'node-failed'; error: NodeRunError })
  | (NodeEventBase & { type: 'node-canceled' })

export type FlowRunEventType = FlowRunEvent['type']

/** One node run as the ledger keeps it. */
export interface NodeRunRecord {
  flowRunId: string
  nodeId: string
  attempt: number
  cacheKey: string | null
  state: NodeRunState
  outputs: Record<string, unknown> | null
  costMicro: number
  remoteRunId: string | null
  batchId: string | null
  /** For a cached node run: the flow run the outputs were first made in. */
  cachedFrom: string | null
  error: NodeRunError | null
  queuedMs: number | null
  startedMs: number | null
  endedMs: number | null
}

/** One flow run as the ledger keeps it, with its node runs for review. */
export interface FlowRunRecord {
  id: string
  profile: string
  orgId: string
  flowId: string
  flowVersion: number | null
  inputs: Record<string, unknown>
  state: FlowRunState
  startedMs: number
  endedMs: number | null
  totals: FlowRunTotals
  error: NodeRunError | null
}

import type { Flow, FlowInput, FlowNode, FlowOutput } from '../../src-shared/api'

/**
 * The shapes the executor's parts share: validation and planning (`validate/`), the node
 * runners (`remote/` for model and workflow-engine nodes through the service, `builtins/` for
 * the nodes that run on this machine) and the scheduler on top of them.
 *
 * A flow is the service's Flow shape with its graph embedded (`nodes` with their `inputs` and
 * `outputs`, the flow's `inputs` and `outputs`); the same JSON is Atelier's flow file format.
 * Wiring, as the service defines it (see the contract's description of flows):
 * - a node input is fed by at most one of: an edge (`source_output_id`, the id of a node output
 *   of the same flow), a flow input (the node's `config.flow_inputs`,
 *   `{ "<node input name>": "<flow input name>" }`), or its literal `value`;
 *   `retry_source_output_id` names a node output that feeds the input when the node runs again
 *   after a failed quality gate, and may point backwards: edges may not, they form no loop;
 * - a flow output is filled by the node output that `config.flow_outputs` of its node maps to
 *   it, `{ "<node output name>": "<flow output name>" }`;
 * - `type_code` says what a node runs: `model` (`model_id`), `builtin` (`builtin_node_code`),
 *   `wfengine_workflow` (`wfengine_workflow_id`) or `sub_flow` (`sub_flow_id`).
 */
export interface FlowDocument extends Flow {
  nodes: FlowNode[]
  inputs: FlowInput[]
  outputs: FlowOutput[]
}

/**
 * A value on a port: any JSON. Media travel as `MediaRef`s so that a node's cache key can name
 * them by content, not by a presigned URL that changes every time it is minted.
 */
export type PortValue = unknown

export interface MediaRef {
  kind: 'media'
  sha256: string
  content_type: string
  /** Where the bytes can be read now: a presigned URL or a local file path; may expire. */
  url: string
  /**
   * The service run that made it, when one did: a fresh URL is asked of that run when this one
   * has expired (a cached output used days later). Not part of any cache key.
   */
  run_id?: string
  width?: number
  height?: number
}

/** Something a node reports while it runs, for the UI and the flow run's record. */
export type NodeEvent =
  | { type: 'progress'; fraction: number | null; message?: string }
  | { type: 'log'; level: 'debug' | 'info' | 'warning' | 'error'; message: string }
  | { type: 'remote-run'; runId: string; batchId?: string }
  | { type: 'cost'; costMicro: number }

export interface NodeRunContext {
  /** The local flow run this node run belongs to (the ledger keys intents by it). */
  flowRunId: string
  node: FlowNode
  /** Resolved inputs, by node input name (edges, flow inputs, values and defaults applied). */
  inputs: Record<string, PortValue>
  /** 1 for the first run of the node in this flow run; more after a quality gate sent it back. */
  attempt: number
  signal: AbortSignal
  emit: (event: NodeEvent) => void
}

export interface NodeOutcome {
  /** By node output name. */
  outputs: Record<string, PortValue>
  /** What it actually cost, in micro-credits (0 for local work). */
  costMicro: number
  /** The service's run (or batch) behind it, when there is one. */
  remoteRunId?: string
  batchId?: string
}

/** Runs one kind of node. A failure throws an `Error` with a stable `code` and plain message. */
export interface NodeRunner {
  run: (context: NodeRunContext) => Promise<NodeOutcome>
  /** Micro-credits a run with these inputs is expected to cost; 0 for local work. */
  estimate?: (node: FlowNode, inputs: Record<string, PortValue>) => number
}

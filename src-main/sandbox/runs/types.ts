import type { Run, RunSourceCode } from '../../../src-shared/api'
import type { ModelLog } from '../models'

/** What a run executes: a model (by slug or id), a flow or a workflow-engine workflow (by id). */
export type RunTarget =
  | { type: 'model'; model: string }
  | { type: 'flow'; flow_id: string }
  | { type: 'wfengine_workflow'; wfengine_workflow_id: string }

/** Run state the contract does not show; kept in the stored doc under `_sandbox`, never answered. */
export interface RunInternals {
  /** The seed the run uses: input.seed, or one drawn at dispatch. */
  seed: number
  /** Micro-credits taken at dispatch, settled when the run ends. */
  held_micro: number
  callback_secret_id: string | null
  target: RunTarget
}

export type StoredRun = Run & { _sandbox: RunInternals }

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'canceled'])

export const isTerminal = (status: string): boolean => TERMINAL_STATUSES.has(status)

/** What `RunEngine.dispatch` takes. Batches, flow runs and re-runs all come through here. */
export interface DispatchRequest {
  target: RunTarget
  /** As the caller sent it; echoed verbatim in the run. */
  input: Record<string, unknown>
  callback_url?: string | null
  callback_secret_id?: string | null
  metadata?: Record<string, unknown> | null
  idempotencyKey?: string | null
  /**
   * What the Idempotency-Key protects (the HTTP path and body, say): the same key with another
   * fingerprint is a 409 IDEMPOTENCY_KEY_REUSED. Defaults to this request without the key.
   */
  fingerprint?: unknown
  source_code: RunSourceCode
  parent_run_id?: string | null
  batch_id?: string | null
}

export interface DispatchResult {
  run: Run
  /** True when the Idempotency-Key named an earlier run: nothing was created or charged. */
  replayed: boolean
}

/** The target fields of a run record. */
export interface TargetFields {
  model_id: string | null
  model_slug: string | null
  flow_id: string | null
  wfengine_workflow_id: string | null
}

/** One node of a run's work, recorded as a node run when the run starts running. */
export interface NodeWork {
  flow_node_id: string | null
  wfengine_node_id: string | null
  input: Record<string, unknown> | null
  status_code: 'succeeded' | 'failed' | 'canceled'
  /** Stored form: files as `{sha256, content_type, …}`; URLs are added when read. */
  output: Record<string, unknown> | null
  cost_micro: number
  failure_code: string | null
  failure_stage: string | null
  failure_message: string | null
  /** The node's own log lines (the model's logs), written with its node_run_id. */
  logs: ModelLog[]
  /**
   * Nominal milliseconds the node took: a run's running phase is shared among its nodes by these,
   * so each node run opens and closes in turn. Equal shares when left out.
   */
  workMs?: number
}

interface WorkCommon {
  /** Nominal milliseconds the work takes; the engine scales it by the sandbox latency. */
  workMs: number
  /** Run-level log lines (no node). */
  logs: ModelLog[]
  nodes: NodeWork[]
}

export type RunWork =
  | (WorkCommon & { ok: true; output: Record<string, unknown>; cost_micro: number })
  | (WorkCommon & {
      ok: false
      failure_code: string
      failure_stage: string
      failure_message: string
    })

/**
 * Told of every status change of a run, inside the transaction that makes it, so records that
 * follow runs (a batch's items) never disagree with them. Must not throw.
 */
export type RunObserver = (orgId: string, run: StoredRun) => void

/** What a target handler gets to do a run's work. */
export interface RunJob {
  orgId: string
  runId: string
  target: RunTarget
  /** The input as dispatched. */
  input: Record<string, unknown>
  seed: number
  /** Aborted when the run is canceled or the sandbox stops. */
  signal: AbortSignal
  /** Loads an image reference that is not a data: URL (asset id, presigned or http(s) URL). */
  fetchImage: (ref: string) => Promise<Buffer>
}

/**
 * One kind of run target. The engine owns the life cycle (queue, timing, charging, logs, node
 * runs, events); a handler only says what the target is, what it costs and does the work.
 */
export interface TargetHandler {
  /** The run fields naming the target, and its parent for lists; a 404 SandboxError when unknown. */
  resolve(orgId: string, target: RunTarget): TargetFields & { parentId: string }
  /** Micro-credits to hold at dispatch. */
  estimate(orgId: string, target: RunTarget, input: Record<string, unknown>): number
  /** Does the work. Must not throw: failures are a `{ ok: false }` result. */
  execute(job: RunJob): Promise<RunWork>
}

import { z } from 'zod'
import type { NodeRun, Run, RunCallbackDelivery, RunLog } from '../api'

/** A log level as the service's catalog names and colours it (`GET /v1/runs/log-levels`). */
export interface RunLogLevel {
  code: string
  name: string
  /** A CSS colour, e.g. `#d32f2f`; null when the catalog gave none. */
  color: string | null
}

/** The local flow run that dispatched this run, from the ledger: "Open flow" goes there. */
export interface RunFlowOrigin {
  flowRunId: string
  flowId: string
  /** The flow's name as this machine knows it; null when the flow is gone. */
  flowName: string | null
  nodeId: string | null
}

/** A page of a run's log, oldest first; `next` asks for the following lines. */
export interface RunLogPage {
  items: RunLog[]
  next: string | null
}

/**
 * One run as its page shows it: the service's records, read from the mirror. `detailsFetched`
 * is false while the run's node runs, logs and deliveries were never fetched (they come with
 * `runs.refresh`); `refreshedMs` says when the service was last asked for this run.
 */
export interface RunDetail {
  run: Run
  nodeRuns: NodeRun[]
  logs: RunLogPage
  deliveries: RunCallbackDelivery[]
  logLevels: RunLogLevel[]
  flow: RunFlowOrigin | null
  detailsFetched: boolean
  /** Epoch ms of the last fetch of the run's details; null when never. */
  fetchedMs: number | null
}

/** What `runs.refresh` answers: the detail, and whether the service could be asked. */
export interface RunRefresh {
  detail: RunDetail
  /** False when the service could not be reached: `detail` is what the mirror holds. */
  refreshed: boolean
  /** Why not, in the service's code (OFFLINE, UNAUTHORIZED…); null when refreshed. */
  problem: { code: string; message: string } | null
}

export interface RerunStarted {
  /** The new run: it is a run of its own, charged again. */
  runId: string
  estimatedCost: string | null
}

export interface SignatureCheck {
  /** True when the signature is HMAC-SHA256 of the delivery's exact bytes under the secret. */
  valid: boolean
  /** Where the secret came from: pasted now, or remembered in the OS keychain for the URL. */
  secretFrom: 'pasted' | 'keychain'
  /** True when the pasted secret was saved to the keychain for this callback URL. */
  remembered: boolean
}

const id = z.string().min(1).max(100)

export const runPageSchemas = {
  run: z.strictObject({ runId: id }),
  logs: z.strictObject({ runId: id, after: z.string().min(1).max(500) }),
  rerun: z.strictObject({
    runId: id,
    /** Made once per confirmation: a double click or a retry cannot start (and charge) twice. */
    idempotencyKey: z.string().min(8).max(200),
  }),
  redeliver: z.strictObject({ runId: id }),
  verify: z.strictObject({
    runId: id,
    deliveryId: id,
    /** The `Service-Signature` header the receiver got: lowercase hex HMAC-SHA256. */
    signature: z.string().trim().min(1).max(200),
    /** Left out: the one remembered for the delivery's callback URL. */
    secret: z.string().min(1).max(500).optional(),
    /** Save the pasted secret in the OS keychain for this callback URL. */
    remember: z.boolean().optional(),
  }),
}

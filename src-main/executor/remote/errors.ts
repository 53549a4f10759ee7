/** Stable codes of the failures a remote node run ends with. */
export type RemoteErrorCode =
  /** The service ran the node and it failed; the message is the service's. */
  | 'NODE_FAILED'
  /** The flow run was canceled (the remote run was canceled too), or someone canceled the run. */
  | 'CANCELED'
  /** The service refused the dispatch for lack of credit (402). */
  | 'INSUFFICIENT_CREDIT'
  /** The service refused the dispatch (404, 409, 422…): sending it again would not help. */
  | 'DISPATCH_REFUSED'
  /** The request may have reached the service and the run could not be looked up yet. */
  | 'OUTCOME_UNKNOWN'
  /** The run was dispatched but could not be followed; it keeps running on the service. */
  | 'SERVICE_UNREACHABLE'
  /** The node names a model the catalog (mirror or service) does not have. */
  | 'MODEL_UNKNOWN'
  /** Fanned-out list inputs of different lengths. */
  | 'FAN_OUT_MISMATCH'
  /** More items than one batch takes. */
  | 'FAN_OUT_TOO_LARGE'
  /** A list fanned out on a node the Batches API cannot run (a workflow), or a bad fan_out. */
  | 'FAN_OUT_UNSUPPORTED'
  /** A media input whose bytes cannot be read or sent. */
  | 'MEDIA_UNREADABLE'
  /** The node is not a model or workflow-engine node. */
  | 'NOT_A_REMOTE_NODE'

export interface RemoteErrorDetails {
  intentId?: string | undefined
  remoteRunId?: string | undefined
  batchId?: string | undefined
  /** The service's failure_code of a failed run (MODEL_ERROR, INPUT_VALIDATION_FAILED…). */
  failureCode?: string | null | undefined
  cause?: unknown
}

/** A remote node run that did not produce outputs. Messages are whole sentences for the user. */
export class RemoteNodeError extends Error {
  override readonly name = 'RemoteNodeError'
  readonly code: RemoteErrorCode
  readonly intentId: string | undefined
  readonly remoteRunId: string | undefined
  readonly batchId: string | undefined
  readonly failureCode: string | null | undefined

  constructor(code: RemoteErrorCode, message: string, details: RemoteErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.code = code
    this.intentId = details.intentId
    this.remoteRunId = details.remoteRunId
    this.batchId = details.batchId
    this.failureCode = details.failureCode
  }
}

export function isRemoteNodeError(value: unknown): value is RemoteNodeError {
  return value instanceof RemoteNodeError
}

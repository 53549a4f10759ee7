import { CodedError } from '../errors/coded'

/**
 * Stable codes of the flow editor's services; each reaches the window with its message, which
 * says what to do.
 */
export type FlowEditorErrorCode =
  /** No flow (or version) with that id, or not one of this profile's. */
  | 'FLOW_NOT_FOUND'
  /** The flow file does not read as one (its problems are in `problems`). */
  | 'FLOW_INVALID'
  /** Saved elsewhere since the editor opened it; reload, or save as a copy. */
  | 'CONFLICT'
  /** Only local flows change; service flows and templates are copied first. */
  | 'READ_ONLY'
  /**
   * A service flow or template whose graph is not on this machine yet, and the service cannot be
   * reached to fetch it: connect and open it again.
   */
  | 'FLOW_NOT_SYNCED'
  /** No flow run with that id is running here. */
  | 'FLOW_RUN_NOT_FOUND'
  /** The run could not start (the estimate exceeds the balance, the service refused…). */
  | 'RUN_REFUSED'
  /** The service is known to be unreachable: the run was refused before anything was sent. */
  | 'OFFLINE'

/** Field-level problems (`issues`: a flow file's, by path) go to the window with it. */
export class FlowEditorError extends CodedError<FlowEditorErrorCode> {
  override readonly name = 'FlowEditorError'
}

export const isFlowEditorError = (error: unknown): error is FlowEditorError =>
  error instanceof FlowEditorError

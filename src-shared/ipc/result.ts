/** Stable error codes an IPC call can answer with; the renderer switches on these, never on messages. */
export type IpcErrorCode =
  | 'INVALID_ARGUMENT'
  | 'UNKNOWN_CHANNEL'
  | 'FORBIDDEN_SENDER'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'INTERNAL'
  // Errors of the service pass through with the service's own code (UNAUTHORIZED, INSUFFICIENT_CREDIT, …).
  | (string & {})

export interface IpcError {
  code: IpcErrorCode
  message: string
  /** Field-level problems, for INVALID_ARGUMENT and the service's 422. */
  issues?: { path: string; message: string }[]
}

export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: IpcError }

export function ipcOk<T>(value: T): IpcResult<T> {
  return { ok: true, value }
}

export function ipcFail(error: IpcError): IpcResult<never> {
  return { ok: false, error }
}

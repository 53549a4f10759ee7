export { dispatchIpc, IpcHandlerError } from './dispatch'
export type { IpcCallContext, IpcHandler, IpcHandlers } from './dispatch'
export { createHandlers } from './handlers'
export type { HandlerDeps, CoreControl, Unavailable } from './handlers'

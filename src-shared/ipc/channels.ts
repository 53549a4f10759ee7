import type { IpcChannel } from './contract'

/**
 * The channel list, kept apart from the schemas so that the preload bundle carries no zod.
 * A compile-time test checks it against `ipcContract`, both ways.
 */
export const IPC_CHANNELS = [
  'app.getInfo',
  'app.openExternal',
  'sync.getStatus',
  'sync.start',
  'search.query',
] as const satisfies readonly IpcChannel[]

import type { IpcChannel } from './contract'

/**
 * The channel list, kept apart from the schemas so that the preload bundle carries no zod.
 * A compile-time test checks it against `ipcContract`, both ways.
 */
export const IPC_CHANNELS = [
  'app.getInfo',
  'app.openExternal',
  'account.summary',
  'sync.getStatus',
  'sync.start',
  'search.query',
  'flows.list',
  'flows.get',
  'flows.create',
  'flows.save',
  'flows.rename',
  'flows.delete',
  'flows.restore',
  'flows.import',
  'flows.export',
  'flows.saveVersion',
  'flows.restoreVersion',
  'flows.check',
  'flows.palette',
  'flowRuns.start',
  'flowRuns.cancel',
  'media.preview',
] as const satisfies readonly IpcChannel[]

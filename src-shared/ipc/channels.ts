import type { IpcChannel } from './contract'
import { ASSETS_CHANNELS } from './channels/assets'
import { EVALUATIONS_CHANNELS } from './channels/evaluations'
import { OUTPUTS_CHANNELS } from './channels/outputs'
import { REMIX_CHANNELS } from './channels/remix'
import { RUN_PAGE_CHANNELS } from './channels/run-page'
import { RUNS_CHANNELS } from './channels/runs'
import { SETTINGS_CHANNELS } from './channels/settings'
import { WORKFLOWS_CHANNELS } from './channels/workflows'

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
  'flows.runs',
  'flowRuns.start',
  'flowRuns.cancel',
  'flowRuns.resume',
  'media.preview',
  'batches.list',
  'batches.get',
  ...RUNS_CHANNELS,
  ...RUN_PAGE_CHANNELS,
  ...EVALUATIONS_CHANNELS,
  ...ASSETS_CHANNELS,
  ...SETTINGS_CHANNELS,
  ...WORKFLOWS_CHANNELS,
  ...REMIX_CHANNELS,
  ...OUTPUTS_CHANNELS,
] as const satisfies readonly IpcChannel[]

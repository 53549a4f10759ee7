import { z } from 'zod'
import type { AccountSummary, AppInfo } from '../domain/app'
import {
  flowEditorSchemas as editor,
  type FlowCheck,
  type FlowRunSummary,
  type FlowSummary,
  type FlowVersion,
  type MediaPreview,
  type PaletteItem,
  type StartedRun,
  type StoredFlow,
} from '../domain/flow-editor'
import { searchQuerySchema, type SearchResult } from '../domain/search'
import {
  batchIdSchema,
  batchListQuerySchema,
  type BatchDetail,
  type BatchListPage,
} from '../domain/batches'
import { channel } from './channel'
import { assetsContract } from './contracts/assets'
import { evaluationsContract } from './contracts/evaluations'
import { outputsContract } from './contracts/outputs'
import { remixContract } from './contracts/remix'
import { runPageContract } from './contracts/run-page'
import { runsContract } from './contracts/runs'
import { settingsContract } from './contracts/settings'
import { workflowsContract } from './contracts/workflows'
import type { SyncStatus } from '../domain/sync'

/**
 * One entry per IPC channel: the zod schema of its single argument and, as a phantom type,
 * what it answers. Channel names are `<domain>.<verb>`; the preload turns them into
 * `window.atelier.<domain>.<verb>(args)`. The review, asset and settings domains keep their
 * channels in `./contracts/<domain>` so each grows in a file of its own.
 */
const noArgs = z.undefined()

export const ipcContract = {
  'app.getInfo': channel<AppInfo>()(noArgs),
  'app.openExternal': channel<null>()(
    z.strictObject({
      url: z
        .url({ protocol: /^https?$/, error: 'Only http and https links can be opened.' })
        .max(2048),
    }),
  ),
  /**
   * The profile, its organization and its balance. The balance is read from the service at most
   * every 30 s (and again after each sync and flow run); null when it cannot be reached.
   */
  'account.summary': channel<AccountSummary>()(noArgs),
  'sync.getStatus': channel<SyncStatus>()(noArgs),
  /** Starts a sync, or joins the running one; answers once it has ended. */
  'sync.start': channel<SyncStatus>()(noArgs),
  /** Offline search of the mirror: ranked with words, a filtered list without. */
  'search.query': channel<SearchResult>()(searchQuerySchema),
  /** Local flows, the service's (from the mirror) and templates, newest first. */
  'flows.list': channel<FlowSummary[]>()(noArgs),
  'flows.get': channel<StoredFlow>()(editor.id),
  /** A new local flow: empty, or a copy of any flow (duplicate, start from a template). */
  'flows.create': channel<StoredFlow>()(editor.create),
  /** Autosave of a local flow; CONFLICT when it was saved elsewhere since `baseUpdatedMs`. */
  'flows.save': channel<{ updatedMs: number }>()(editor.save),
  'flows.rename': channel<FlowSummary>()(editor.rename),
  /** Moves a local flow to the trash; `flows.restore` brings it back (undo). */
  'flows.delete': channel<null>()(editor.id),
  'flows.restore': channel<FlowSummary>()(editor.id),
  /** A flow file's text becomes a new local flow; FLOW_INVALID lists what is wrong with it. */
  'flows.import': channel<StoredFlow>()(editor.import),
  'flows.export': channel<{ fileName: string; json: string }>()(editor.id),
  'flows.saveVersion': channel<FlowVersion>()(editor.saveVersion),
  'flows.restoreVersion': channel<StoredFlow>()(editor.restoreVersion),
  /** Problems and the cost estimate, as a run would see them, before it starts. */
  'flows.check': channel<FlowCheck>()(editor.check),
  /** What can be put on the canvas: models, built-ins, workflows, other flows. */
  'flows.palette': channel<PaletteItem[]>()(noArgs),
  /** The flow's runs on this computer, newest first (the last 50). */
  'flows.runs': channel<FlowRunSummary[]>()(editor.id),
  /** Starts a run of the flow; its events follow as `flowRuns.event`. */
  'flowRuns.start': channel<StartedRun>()(editor.run),
  /** Cancels a run started here (its remote runs too). */
  'flowRuns.cancel': channel<null>()(editor.flowRun),
  /** Resumes an interrupted flow run: what succeeded is kept, nothing is paid twice. */
  'flowRuns.resume': channel<StartedRun>()(editor.resume),
  /**
   * A WebP preview of an image as a data URL, animated for an animated WebP or GIF: from the
   * local media store, fetched there first when it is not yet (the window loads no remote image).
   * NOT_FOUND offline for one never kept, NOT_AN_IMAGE for a video file.
   */
  'media.preview': channel<MediaPreview>()(editor.preview),
  /** The Batches section's list from the mirror, newest first; `get` adds each item's run. */
  'batches.list': channel<BatchListPage>()(batchListQuerySchema),
  'batches.get': channel<BatchDetail>()(batchIdSchema),
  ...runsContract,
  ...runPageContract,
  ...evaluationsContract,
  ...assetsContract,
  ...settingsContract,
  ...workflowsContract,
  ...remixContract,
  ...outputsContract,
} as const

export type IpcContract = typeof ipcContract
export type IpcChannel = keyof IpcContract
export type IpcArgs<C extends IpcChannel> = z.input<IpcContract[C]['args']>
export type IpcParsedArgs<C extends IpcChannel> = z.output<IpcContract[C]['args']>
export type IpcValue<C extends IpcChannel> = IpcContract[C]['result']

import type { AccountSummary, BackendInfo } from '../../src-shared/domain/app'
import type {
  FlowCheck,
  FlowSummary,
  FlowVersion,
  MediaPreview,
  PaletteItem,
  StartedRun,
  StoredFlow,
} from '../../src-shared/domain/flow-editor'
import type { IpcParsedArgs } from '../../src-shared/ipc'
import type { SearchQuery, SearchResult } from '../../src-shared/domain/search'
import type { SyncStatus } from '../../src-shared/domain/sync'
import { IpcHandlerError } from './dispatch'
import type { AssetsControl } from './domains/assets'
import type { EvaluationsControl } from './domains/evaluations'
import type { RunPageControl } from './domains/run-page'
import type { RunsControl } from './domains/runs'
import type { SettingsControl } from './domains/settings'

/** The part of the core the sync and search channels use (`Core` from `src-main/core` fits). */
export interface CoreControl {
  /** Never throws for the service: an unreachable one leaves `balanceMicro` null. */
  accountSummary: () => Promise<AccountSummary>
  syncStatus: () => SyncStatus
  syncNow: () => Promise<SyncStatus>
  /** Throws SEARCH_INVALID_CURSOR (a `SearchError`) for a cursor of another search. */
  search: (query: SearchQuery) => SearchResult
  /** The flow editor's services (`src-main/flows`); absent in a core opened without them. */
  flows?: FlowEditorControl
  /** The offline review of runs and deliveries (issue 8). */
  runs?: RunsControl
  /** One run's page: detail, deliveries, redeliver, cancel, re-run, compare (issue 8). */
  runPage?: RunPageControl
  /** The offline review of evaluations and their feedback (issue 8). */
  evaluations?: EvaluationsControl
  /** The asset manager and the uploads it starts (issue 8). */
  assets?: AssetsControl
}

export type Awaitable<T> = T | Promise<T>

/**
 * What the flow editor's channels call, one method per channel, with the channel's parsed
 * arguments; a `FlowEditorError` reaches the window as its code and message.
 */
export interface FlowEditorControl {
  list(): Awaitable<FlowSummary[]>
  get(args: IpcParsedArgs<'flows.get'>): Awaitable<StoredFlow>
  create(args: IpcParsedArgs<'flows.create'>): Awaitable<StoredFlow>
  save(args: IpcParsedArgs<'flows.save'>): Awaitable<{ updatedMs: number }>
  rename(args: IpcParsedArgs<'flows.rename'>): Awaitable<FlowSummary>
  delete(args: IpcParsedArgs<'flows.delete'>): Awaitable<null>
  restore(args: IpcParsedArgs<'flows.restore'>): Awaitable<FlowSummary>
  import(args: IpcParsedArgs<'flows.import'>): Awaitable<StoredFlow>
  export(args: IpcParsedArgs<'flows.export'>): Awaitable<{ fileName: string; json: string }>
  saveVersion(args: IpcParsedArgs<'flows.saveVersion'>): Awaitable<FlowVersion>
  restoreVersion(args: IpcParsedArgs<'flows.restoreVersion'>): Awaitable<StoredFlow>
  check(args: IpcParsedArgs<'flows.check'>): Awaitable<FlowCheck>
  palette(): Awaitable<PaletteItem[]>
  startRun(args: IpcParsedArgs<'flowRuns.start'>): Awaitable<StartedRun>
  cancelRun(args: IpcParsedArgs<'flowRuns.cancel'>): Awaitable<null>
  /** The editor's media store owns the previews of the outputs it shows. */
  preview(args: IpcParsedArgs<'media.preview'>): Awaitable<MediaPreview>
}

/** Why there is no core: its code and message reach the window as they are. */
export interface Unavailable {
  code: string
  message: string
}

/** What the handlers need from the host: the Electron shell and the browser mode differ here. */
export interface HandlerDeps {
  openExternal: (url: string) => Promise<void>
  platform: string
  /** The service in use, as the window may see it (null while it starts or when it failed). */
  backend: () => BackendInfo | null
  /** The core; null while it opens, `Unavailable` when it could not open (e.g. LEDGER_DAMAGED). */
  core?: () => CoreControl | Unavailable | null
  /** The system's folder dialog (Electron only); null when it was closed without a choice. */
  chooseFolder?: () => Promise<string | null>
  /**
   * Profiles, the sandbox, webhooks and sync settings (issue 8). The host's, not the core's:
   * switching profile closes the core and opens another, and this outlives both.
   */
  settings?: SettingsControl
}

export function coreOf(deps: HandlerDeps): CoreControl {
  const found = deps.core?.() ?? null
  if (found === null) {
    throw new IpcHandlerError(
      'UNAVAILABLE',
      'Atelier is still opening its local data. Try again in a moment.',
    )
  }
  if ('code' in found) throw new IpcHandlerError(found.code, found.message)
  return found
}

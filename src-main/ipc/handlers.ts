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
import { APP_NAME, APP_VERSION } from '../app/version'
import { isFlowEditorError } from '../flows/errors'
import { isMediaStoreError } from '../media-store'
import { isSearchError } from '../search'
import { IpcHandlerError, type IpcHandlers } from './dispatch'

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
}

type Awaitable<T> = T | Promise<T>

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
}

function coreOf(deps: HandlerDeps): CoreControl {
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

function flowsOf(deps: HandlerDeps): FlowEditorControl {
  const flows = coreOf(deps).flows
  if (!flows) {
    throw new IpcHandlerError('UNAVAILABLE', 'The flow editor is not available in this window.')
  }
  return flows
}

/** Calls the flow editor, turning its own errors into the channel's error. */
async function editor<T>(deps: HandlerDeps, call: (flows: FlowEditorControl) => Awaitable<T>) {
  try {
    return await call(flowsOf(deps))
  } catch (error) {
    if (isFlowEditorError(error)) {
      throw new IpcHandlerError(error.code, error.message, error.issues)
    }
    if (isMediaStoreError(error)) throw new IpcHandlerError(error.code, error.message)
    throw error
  }
}

export function createHandlers(deps: HandlerDeps): IpcHandlers {
  return {
    'app.getInfo': (_args, context) => ({
      name: APP_NAME,
      version: APP_VERSION,
      shell: context.shell,
      platform: deps.platform,
      backend: deps.backend(),
    }),
    'app.openExternal': async ({ url }) => {
      await deps.openExternal(url)
      return null
    },
    'account.summary': () => coreOf(deps).accountSummary(),
    'sync.getStatus': () => coreOf(deps).syncStatus(),
    'sync.start': () => coreOf(deps).syncNow(),
    'search.query': (query) => {
      try {
        return coreOf(deps).search(query)
      } catch (error) {
        if (isSearchError(error)) throw new IpcHandlerError(error.code, error.message)
        throw error
      }
    },
    'flows.list': () => editor(deps, (f) => f.list()),
    'flows.get': (args) => editor(deps, (f) => f.get(args)),
    'flows.create': (args) => editor(deps, (f) => f.create(args)),
    'flows.save': (args) => editor(deps, (f) => f.save(args)),
    'flows.rename': (args) => editor(deps, (f) => f.rename(args)),
    'flows.delete': (args) => editor(deps, (f) => f.delete(args)),
    'flows.restore': (args) => editor(deps, (f) => f.restore(args)),
    'flows.import': (args) => editor(deps, (f) => f.import(args)),
    'flows.export': (args) => editor(deps, (f) => f.export(args)),
    'flows.saveVersion': (args) => editor(deps, (f) => f.saveVersion(args)),
    'flows.restoreVersion': (args) => editor(deps, (f) => f.restoreVersion(args)),
    'flows.check': (args) => editor(deps, (f) => f.check(args)),
    'flows.palette': () => editor(deps, (f) => f.palette()),
    'flowRuns.start': (args) => editor(deps, (f) => f.startRun(args)),
    'flowRuns.cancel': (args) => editor(deps, (f) => f.cancelRun(args)),
    'media.preview': (args) => editor(deps, (f) => f.preview(args)),
  }
}

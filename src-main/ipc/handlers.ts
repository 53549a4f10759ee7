import type { BackendInfo } from '../../src-shared/domain/app'
import type { SearchQuery, SearchResult } from '../../src-shared/domain/search'
import type { SyncStatus } from '../../src-shared/domain/sync'
import { APP_NAME, APP_VERSION } from '../app/version'
import { isSearchError } from '../search'
import { IpcHandlerError, type IpcHandlers } from './dispatch'

/** The part of the core the sync and search channels use (`Core` from `src-main/core` fits). */
export interface CoreControl {
  syncStatus: () => SyncStatus
  syncNow: () => Promise<SyncStatus>
  /** Throws SEARCH_INVALID_CURSOR (a `SearchError`) for a cursor of another search. */
  search: (query: SearchQuery) => SearchResult
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
  }
}

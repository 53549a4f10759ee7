import type { RunFilterOptions, RunListPage } from '../../../src-shared/domain/runs-list'
import type { IpcParsedArgs } from '../../../src-shared/ipc'
import type { RUNS_CHANNELS } from '../../../src-shared/ipc/channels/runs'
import { isRunListError } from '../../review/runs-list'
import { coreOf, type HandlerDeps } from '../core-access'
import { IpcHandlerError, type IpcHandlers } from '../dispatch'

/** What the runs channels call on the core (`RunsList` from `src-main/review/runs-list` fits). */
export interface RunsControl {
  /** Throws a `RunListError` (RUNS_INVALID_QUERY, RUNS_INVALID_CURSOR) for bad input. */
  listChecked: (query: IpcParsedArgs<'runs.list'>) => RunListPage
  filterOptions: () => RunFilterOptions
}

function runsOf(deps: HandlerDeps): RunsControl {
  const runs = coreOf(deps).runs
  if (!runs) throw new IpcHandlerError('UNAVAILABLE', 'The runs list is not available here.')
  return runs
}

/** Calls the list, turning its own errors into the channel's error. */
function listing<T>(deps: HandlerDeps, call: (runs: RunsControl) => T): T {
  try {
    return call(runsOf(deps))
  } catch (error) {
    if (isRunListError(error)) throw new IpcHandlerError(error.code, error.message)
    throw error
  }
}

export function runsHandlers(deps: HandlerDeps): Pick<IpcHandlers, (typeof RUNS_CHANNELS)[number]> {
  return {
    'runs.list': (query) => listing(deps, (runs) => runs.listChecked(query)),
    'runs.filterOptions': () => listing(deps, (runs) => runs.filterOptions()),
  }
}

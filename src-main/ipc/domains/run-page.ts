import type { RunCallbackDelivery } from '../../../src-shared/api'
import type {
  RerunStarted,
  RunDetail,
  RunLogPage,
  RunRefresh,
  SignatureCheck,
} from '../../../src-shared/domain/run-page'
import type { IpcParsedArgs } from '../../../src-shared/ipc'
import type { RUN_PAGE_CHANNELS } from '../../../src-shared/ipc/channels/run-page'
import { isRunPageError } from '../../review/run-page'
import { coreOf, type Awaitable, type HandlerDeps } from '../core-access'
import { IpcHandlerError, type IpcHandlers } from '../dispatch'

/** What the run page's channels call on the core (`RunPageService` fits). */
export interface RunPageControl {
  get(args: IpcParsedArgs<'runs.get'>): Awaitable<RunDetail>
  refresh(args: IpcParsedArgs<'runs.refresh'>): Awaitable<RunRefresh>
  logs(args: IpcParsedArgs<'runs.logs'>): Awaitable<RunLogPage>
  cancel(args: IpcParsedArgs<'runs.cancel'>): Awaitable<RunDetail>
  rerun(args: IpcParsedArgs<'runs.rerun'>): Awaitable<RerunStarted>
  redeliver(args: IpcParsedArgs<'deliveries.redeliver'>): Awaitable<RunCallbackDelivery[]>
  verify(args: IpcParsedArgs<'deliveries.verify'>): Awaitable<SignatureCheck>
}

function runPageOf(deps: HandlerDeps): RunPageControl {
  const runPage = coreOf(deps).runPage
  if (!runPage) {
    throw new IpcHandlerError('UNAVAILABLE', 'The run page is not available in this window.')
  }
  return runPage
}

/** Calls the run page, turning its own errors into the channel's error (service errors pass). */
async function call<T>(deps: HandlerDeps, work: (page: RunPageControl) => Awaitable<T>) {
  try {
    return await work(runPageOf(deps))
  } catch (error) {
    if (isRunPageError(error)) throw new IpcHandlerError(error.code, error.message)
    throw error
  }
}

export function runPageHandlers(
  deps: HandlerDeps,
): Pick<IpcHandlers, (typeof RUN_PAGE_CHANNELS)[number]> {
  return {
    'runs.get': (args) => call(deps, (p) => p.get(args)),
    'runs.refresh': (args) => call(deps, (p) => p.refresh(args)),
    'runs.logs': (args) => call(deps, (p) => p.logs(args)),
    'runs.cancel': (args) => call(deps, (p) => p.cancel(args)),
    'runs.rerun': (args) => call(deps, (p) => p.rerun(args)),
    'deliveries.redeliver': (args) => call(deps, (p) => p.redeliver(args)),
    'deliveries.verify': (args) => call(deps, (p) => p.verify(args)),
  }
}

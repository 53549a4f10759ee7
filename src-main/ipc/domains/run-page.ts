import type { RUN_PAGE_CHANNELS } from '../../../src-shared/ipc/channels/run-page'
import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

/** One run's page (`src-main/review/run-page`). */
export function runPageHandlers({
  core,
}: FeatureAccess): Pick<IpcHandlers, (typeof RUN_PAGE_CHANNELS)[number]> {
  return {
    'runs.get': (request) => core().runPage.get(request),
    'runs.refresh': (request) => core().runPage.refresh(request),
    'runs.logs': (request) => core().runPage.logs(request),
    'runs.cancel': (request) => core().runPage.cancel(request),
    'runs.rerun': (request) => core().runPage.rerun(request),
    'deliveries.redeliver': (request) => core().runPage.redeliver(request),
    'deliveries.verify': (request) => core().runPage.verify(request),
  }
}

import type { EVALUATIONS_CHANNELS } from '../../../src-shared/ipc/channels/evaluations'
import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

/** The Evaluations section (`src-main/review/evaluations`). */
export function evaluationsHandlers({
  core,
}: FeatureAccess): Pick<IpcHandlers, (typeof EVALUATIONS_CHANNELS)[number]> {
  return {
    'evaluations.list': (query) => core().evaluations.list(query),
    'evaluations.get': (request) => core().evaluations.get(request),
    'evaluations.refresh': (request) => core().evaluations.refresh(request),
    'evaluations.feedback': (request) => core().evaluations.feedback(request),
    'evaluations.submit': (request) => core().evaluations.submit(request),
  }
}

import type { WORKFLOWS_CHANNELS } from '../../../src-shared/ipc/channels/workflows'
import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

/** ComfyUI workflows imported from the flow list (`src-main/workflows`). */
export function workflowsHandlers({
  core,
}: FeatureAccess): Pick<IpcHandlers, (typeof WORKFLOWS_CHANNELS)[number]> {
  return {
    'workflows.import': (request) => core().workflows.import(request),
  }
}

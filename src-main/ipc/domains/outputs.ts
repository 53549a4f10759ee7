import type { OUTPUTS_CHANNELS } from '../../../src-shared/ipc/channels/outputs'
import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

/** Outputs saved from the app with their record inside (`src-main/provenance/records-export`). */
export function outputsHandlers({
  core,
}: FeatureAccess): Pick<IpcHandlers, (typeof OUTPUTS_CHANNELS)[number]> {
  return {
    'outputs.export': (request) => core().outputs.export(request),
  }
}

import type { REMIX_CHANNELS } from '../../../src-shared/ipc/channels/remix'
import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

/** Remix from anything (`src-main/flows/remix`). */
export function remixHandlers({
  core,
}: FeatureAccess): Pick<IpcHandlers, (typeof REMIX_CHANNELS)[number]> {
  return {
    'remix.open': (request) => core().remix.open(request),
    'remix.inspect': (request) => core().remix.inspect(request),
  }
}

import type { RUNS_CHANNELS } from '../../../src-shared/ipc/channels/runs'
import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

/** The Runs section's list (`src-main/review/runs-list`). */
export function runsHandlers({
  core,
}: FeatureAccess): Pick<IpcHandlers, (typeof RUNS_CHANNELS)[number]> {
  return {
    'runs.list': (query) => core().runs.listChecked(query),
    'runs.filterOptions': () => core().runs.filterOptions(),
  }
}

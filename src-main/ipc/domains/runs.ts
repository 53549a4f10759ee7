import type { IpcHandlers } from '../dispatch'
import type { HandlerDeps } from '../core-access'

/** What the runs channels call on the core. */
export type RunsControl = Record<string, never>

export function runsHandlers(_deps: HandlerDeps): Partial<IpcHandlers> {
  // Until its first channel lands; then `Pick<IpcHandlers, (typeof RUNS_CHANNELS)[number]>`.
  return {}
}

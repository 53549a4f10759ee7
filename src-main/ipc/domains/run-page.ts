import type { IpcHandlers } from '../dispatch'
import type { HandlerDeps } from '../core-access'

/** What the run page's channels call on the core. */
export type RunPageControl = Record<string, never>

export function runPageHandlers(_deps: HandlerDeps): Partial<IpcHandlers> {
  // Until its first channel lands; then `Pick<IpcHandlers, (typeof RUN_PAGE_CHANNELS)[number]>`.
  return {}
}

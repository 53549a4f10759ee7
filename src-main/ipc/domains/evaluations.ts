import type { IpcHandlers } from '../dispatch'
import type { HandlerDeps } from '../core-access'

/** What the evaluations channels call on the core. */
export type EvaluationsControl = Record<string, never>

export function evaluationsHandlers(_deps: HandlerDeps): Partial<IpcHandlers> {
  // Until its first channel lands; then `Pick<IpcHandlers, (typeof EVALUATIONS_CHANNELS)[number]>`.
  return {}
}

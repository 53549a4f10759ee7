import type { IpcHandlers } from '../dispatch'
import type { HandlerDeps } from '../core-access'

/** What the assets channels call on the core. */
export type AssetsControl = Record<string, never>

export function assetsHandlers(_deps: HandlerDeps): Partial<IpcHandlers> {
  // Until its first channel lands; then `Pick<IpcHandlers, (typeof ASSETS_CHANNELS)[number]>`.
  return {}
}

import type { IpcHandlers } from '../dispatch'
import type { HandlerDeps } from '../core-access'

/** What the settings channels call on the core. */
export type SettingsControl = Record<string, never>

export function settingsHandlers(_deps: HandlerDeps): Partial<IpcHandlers> {
  // Until its first channel lands; then `Pick<IpcHandlers, (typeof SETTINGS_CHANNELS)[number]>`.
  return {}
}

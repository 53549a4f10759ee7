import type { BackendInfo } from '../../src-shared/domain/app'
import type { Core } from '../core'
import type { Settings } from '../settings'
import { IpcHandlerError } from './dispatch'

/**
 * What the channels call on the core: its features, each declared by the feature itself. Every
 * member but the core's own plumbing, so a feature added to the core is reachable with no line
 * here.
 */
export type CoreControl = Omit<
  Core,
  'databases' | 'client' | 'orgId' | 'notices' | 'applySettings' | 'onEvent' | 'close'
>

/** Why there is no core: its code and message reach the window as they are. */
export interface Unavailable {
  code: string
  message: string
}

/** What the handlers need from the host: the Electron shell and the browser mode differ here. */
export interface HandlerDeps {
  openExternal: (url: string) => Promise<void>
  platform: string
  /** The service in use, as the window may see it (null while it starts or when it failed). */
  backend: () => BackendInfo | null
  /** The core; null while it opens, `Unavailable` when it could not open (e.g. LEDGER_DAMAGED). */
  core?: () => CoreControl | Unavailable | null
  /** The system's folder dialog (Electron only); null when it was closed without a choice. */
  chooseFolder?: () => Promise<string | null>
  /**
   * Profiles, the sandbox, webhooks and sync settings (issue 8). The workspace's, not the
   * core's: switching profile closes the core and opens another, and this outlives both.
   */
  settings?: Settings
}

/**
 * The one place that answers "not yet" or "not here": the channels reach every feature through
 * these, so no channel checks for itself.
 */
export interface FeatureAccess {
  core: () => CoreControl
  settings: () => Settings
}

export function featureAccess(deps: HandlerDeps): FeatureAccess {
  return {
    core: () => {
      const found = deps.core?.() ?? null
      if (found === null) {
        throw new IpcHandlerError(
          'UNAVAILABLE',
          'Atelier is still opening its local data. Try again in a moment.',
        )
      }
      if ('code' in found) throw new IpcHandlerError(found.code, found.message)
      return found
    },
    settings: () => {
      if (!deps.settings) {
        throw new IpcHandlerError('UNAVAILABLE', 'Settings are not available in this window.')
      }
      return deps.settings
    },
  }
}

/**
 * The workspace: the layer between the services thread and the core. It owns the backend (the
 * embedded sandbox, a profile's service, or a service given directly), the profile switch and
 * the core's life cycle, and carries every event of every core to whoever shows the app. One
 * entry point, `new CoreHost({ home, logger })` then `open()`; the Electron main and
 * `atelier web` both reach it through `src-main/services-thread`.
 *
 * Decisions, and why:
 *
 * - The workspace, not the core, owns the backend and the core: switching profile, rebuilding
 *   the mirror and resetting the sandbox close the core and open another, while the window's
 *   channels and event subscriptions stay. Changes of life cycle run one at a time; while one
 *   runs `core()` is null and the channels answer UNAVAILABLE ("still opening").
 * - The profile in use is `profiles.json`'s `current`, shared with `atelier` and `atelier web`.
 *   A switch opens the new backend before closing the old core, so a profile whose key is gone
 *   leaves the app as it was.
 * - It is the one place that starts the embedded sandbox (`backend.ts`): the app's other
 *   layers never import it, and it is loaded on demand, since Fastify and sharp are only needed
 *   when the sandbox runs.
 * - Settings is a feature above the core like the others: it asks the workspace to switch
 *   through the interface it declares (`SettingsWorkspace`), which `CoreHost` fits; the
 *   workspace reads the settings file when a core opens and hands changes to the running core.
 * - Events: one `EventBus` (`src-main/events/bus.ts`) per side of the thread boundary; the
 *   workspace's hears every core's and adds its own notices, and a window opening later asks
 *   `notices` and `syncStatus()`.
 */
export { CoreHost, type CoreHostOptions, type GivenService } from './host'
export {
  openProfileBackend,
  SANDBOX_PROFILE,
  sandboxBackend,
  startHomeSandbox,
  startLocalSandbox,
} from './backend'
export type { Backend } from '../core'

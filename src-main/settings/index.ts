/**
 * The Settings section's services (issue 8): profiles, the local sandbox, webhooks, callback
 * secrets, what the mirror keeps and what the local data takes. A feature like the others: one
 * entry point, `createSettingsService({ host, logger })`, whose interface is `Settings`
 * (`types.ts`); `host` is the workspace (`src-main/workspace`'s `CoreHost`), which Settings
 * asks to switch (`SettingsWorkspace`, declared here so the workspace depends on Settings and
 * not the other way round).
 *
 * Decisions, and why:
 *
 * - The workspace, not the core, owns the backend and the core: switching profile, rebuilding
 *   the mirror and resetting the sandbox close the core and open another, so these services
 *   live as long as the workspace and survive every core.
 * - The profile in use is `profiles.json`'s `current`, shared with `atelier` and `atelier web`:
 *   one answer to "which service". A switch opens the new backend before closing the old core,
 *   so a profile whose key is gone leaves the app as it was. Adding a profile never switches.
 * - Keys go from the form straight to the keychain after the service accepted them; the
 *   profile keeps the key's organization (asked once), so the app opens offline. The profile in
 *   use cannot be removed: switching first is one click, and removing it under the running
 *   sync would leave the app with a core whose key is gone.
 * - Settings live in `<home>/settings.json` (written atomically), read each time a core opens
 *   and applied to the running core at once (`Core.applySettings`): interval, collections,
 *   media downloads and the output store's cap.
 * - Webhooks go to the service only (OFFLINE when it cannot be reached); their signing secret is
 *   made here and is in the create answer once, as the service keeps only its fingerprint.
 * - Callback secrets are made by the service (OFFLINE when it cannot be reached), whose answer
 *   holds the plain secret once. The service cannot list or delete them, so the list is the one
 *   Atelier keeps of those it made (`callback-secrets.json`, never a plain secret) and removing
 *   one takes it off that list only; `callback-secrets.ts` says why.
 * - Destructive calls (`sandbox.reset`, `settings.rebuildMirror`) take `{ confirmed: true }`.
 *   The reset wipes `<home>/sandbox` only; the rebuild deletes the mirror (a cache) and lets the
 *   new core's first sync refill it, as after a damaged mirror.
 */
export { createSettingsService, type SettingsServiceOptions } from './service'
export type { Settings, SettingsWorkspace } from './types'
export { isSettingsError, SettingsError, type SettingsErrorCode } from './errors'
export { readAppSettings, writeAppSettings, coreSettingsOf, SETTINGS_FILE } from './app-settings'
export { SANDBOX_DIR } from '../app/paths'
export {
  CALLBACK_SECRETS_FILE,
  CallbackSecretList,
  callbackSecretsOwner,
  createCallbackSecret,
} from './callback-secrets'

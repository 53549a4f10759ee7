import type {
  AppSettings,
  CallbackSecretItem,
  CreatedCallbackSecret,
  CreatedWebhook,
  ProfilesView,
  SandboxStatus,
  StorageFigures,
  WebhookItem,
} from '../../../src-shared/domain/settings'
import type { SyncStatus } from '../../../src-shared/domain/sync'
import type { IpcParsedArgs } from '../../../src-shared/ipc'
import type { SETTINGS_CHANNELS } from '../../../src-shared/ipc/channels/settings'
import { isSecretsError } from '../../secrets'
import { isSettingsError } from '../../settings'
import type { Awaitable, HandlerDeps } from '../core-access'
import { IpcHandlerError, type IpcHandlers } from '../dispatch'

/**
 * What the settings channels call. Not a part of the core: switching profile closes the core
 * and opens another, so the host that owns the core's lifecycle provides it (`HandlerDeps`).
 */
export interface SettingsControl {
  profiles: {
    list(): Awaitable<ProfilesView>
    add(args: IpcParsedArgs<'profiles.add'>): Awaitable<ProfilesView>
    switch(args: IpcParsedArgs<'profiles.switch'>): Awaitable<ProfilesView>
    remove(args: IpcParsedArgs<'profiles.remove'>): Awaitable<ProfilesView>
  }
  sandbox: {
    status(): Awaitable<SandboxStatus>
    start(): Awaitable<SandboxStatus>
    stop(): Awaitable<SandboxStatus>
    reset(args: IpcParsedArgs<'sandbox.reset'>): Awaitable<SandboxStatus>
  }
  webhooks: {
    list(): Awaitable<WebhookItem[]>
    create(args: IpcParsedArgs<'webhooks.create'>): Awaitable<CreatedWebhook>
    delete(args: IpcParsedArgs<'webhooks.delete'>): Awaitable<null>
  }
  callbackSecrets: {
    list(): Awaitable<CallbackSecretItem[]>
    create(args: IpcParsedArgs<'callbackSecrets.create'>): Awaitable<CreatedCallbackSecret>
    remove(args: IpcParsedArgs<'callbackSecrets.remove'>): Awaitable<null>
  }
  settings: {
    get(): Awaitable<AppSettings>
    set(args: IpcParsedArgs<'settings.set'>): Awaitable<AppSettings>
    storage(): Awaitable<StorageFigures>
    rebuildMirror(args: IpcParsedArgs<'settings.rebuildMirror'>): Awaitable<SyncStatus>
  }
}

function settingsOf(deps: HandlerDeps): SettingsControl {
  if (!deps.settings) {
    throw new IpcHandlerError('UNAVAILABLE', 'Settings are not available in this window.')
  }
  return deps.settings
}

/** Calls the service, turning its own and the keychain's errors into the channel's. */
async function call<T>(deps: HandlerDeps, work: (s: SettingsControl) => Awaitable<T>) {
  try {
    return await work(settingsOf(deps))
  } catch (error) {
    if (isSettingsError(error) || isSecretsError(error)) {
      throw new IpcHandlerError(error.code, error.message)
    }
    throw error
  }
}

export function settingsHandlers(
  deps: HandlerDeps,
): Pick<IpcHandlers, (typeof SETTINGS_CHANNELS)[number]> {
  return {
    'profiles.list': () => call(deps, (s) => s.profiles.list()),
    'profiles.add': (args) => call(deps, (s) => s.profiles.add(args)),
    'profiles.switch': (args) => call(deps, (s) => s.profiles.switch(args)),
    'profiles.remove': (args) => call(deps, (s) => s.profiles.remove(args)),
    'sandbox.status': () => call(deps, (s) => s.sandbox.status()),
    'sandbox.start': () => call(deps, (s) => s.sandbox.start()),
    'sandbox.stop': () => call(deps, (s) => s.sandbox.stop()),
    'sandbox.reset': (args) => call(deps, (s) => s.sandbox.reset(args)),
    'webhooks.list': () => call(deps, (s) => s.webhooks.list()),
    'webhooks.create': (args) => call(deps, (s) => s.webhooks.create(args)),
    'webhooks.delete': (args) => call(deps, (s) => s.webhooks.delete(args)),
    'callbackSecrets.list': () => call(deps, (s) => s.callbackSecrets.list()),
    'callbackSecrets.create': (args) => call(deps, (s) => s.callbackSecrets.create(args)),
    'callbackSecrets.remove': (args) => call(deps, (s) => s.callbackSecrets.remove(args)),
    'settings.get': () => call(deps, (s) => s.settings.get()),
    'settings.set': (args) => call(deps, (s) => s.settings.set(args)),
    'settings.storage': () => call(deps, (s) => s.settings.storage()),
    'settings.rebuildMirror': (args) => call(deps, (s) => s.settings.rebuildMirror(args)),
  }
}

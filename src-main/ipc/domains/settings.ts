import type { SETTINGS_CHANNELS } from '../../../src-shared/ipc/channels/settings'
import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

/** The Settings section (`src-main/settings`): the workspace's, so it outlives every core. */
export function settingsHandlers({
  settings,
}: FeatureAccess): Pick<IpcHandlers, (typeof SETTINGS_CHANNELS)[number]> {
  return {
    'profiles.list': () => settings().profiles.list(),
    'profiles.add': (request) => settings().profiles.add(request),
    'profiles.switch': (request) => settings().profiles.switch(request),
    'profiles.remove': (request) => settings().profiles.remove(request),
    'sandbox.status': () => settings().sandbox.status(),
    'sandbox.start': () => settings().sandbox.start(),
    'sandbox.stop': () => settings().sandbox.stop(),
    'sandbox.reset': (request) => settings().sandbox.reset(request),
    'webhooks.list': () => settings().webhooks.list(),
    'webhooks.create': (request) => settings().webhooks.create(request),
    'webhooks.delete': (request) => settings().webhooks.delete(request),
    'callbackSecrets.list': () => settings().callbackSecrets.list(),
    'callbackSecrets.create': (request) => settings().callbackSecrets.create(request),
    'callbackSecrets.remove': (request) => settings().callbackSecrets.remove(request),
    'settings.get': () => settings().settings.get(),
    'settings.set': (request) => settings().settings.set(request),
    'settings.storage': () => settings().settings.storage(),
    'settings.rebuildMirror': (request) => settings().settings.rebuildMirror(request),
  }
}

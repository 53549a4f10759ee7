/** The names of the settings channels, free of zod for the preload; a compile-time test matches them. */
export const SETTINGS_CHANNELS = [
  'profiles.list',
  'profiles.add',
  'profiles.switch',
  'profiles.remove',
  'sandbox.status',
  'sandbox.start',
  'sandbox.stop',
  'sandbox.reset',
  'webhooks.list',
  'webhooks.create',
  'webhooks.delete',
  'settings.get',
  'settings.set',
  'settings.storage',
  'settings.rebuildMirror',
] as const

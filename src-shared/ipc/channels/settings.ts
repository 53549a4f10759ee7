/** The names of the settings channels, free of zod for the preload; a compile-time test matches them. */
export const SETTINGS_CHANNELS = [] as const

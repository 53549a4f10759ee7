/** The names of the assets channels, free of zod for the preload; a compile-time test matches them. */
export const ASSETS_CHANNELS = [] as const

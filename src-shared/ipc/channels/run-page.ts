/** The names of the run page's channels, free of zod for the preload; a compile-time test matches them. */
export const RUN_PAGE_CHANNELS = [] as const

/** The names of the remix channels, free of zod for the preload; a compile-time test matches them. */
export const REMIX_CHANNELS = ['remix.open', 'remix.inspect'] as const

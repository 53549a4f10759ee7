/** The names of the evaluations channels, free of zod for the preload; a compile-time test matches them. */
export const EVALUATIONS_CHANNELS = [] as const

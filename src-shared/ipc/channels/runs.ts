/** The names of the runs channels, free of zod for the preload; a compile-time test matches them. */
export const RUNS_CHANNELS = ['runs.list', 'runs.filterOptions'] as const

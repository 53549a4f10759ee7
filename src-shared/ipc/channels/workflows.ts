/** The names of the workflows channels, free of zod for the preload; a compile-time test matches them. */
export const WORKFLOWS_CHANNELS = ['workflows.import'] as const

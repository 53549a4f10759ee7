/** The names of the outputs channels, free of zod for the preload; a compile-time test matches them. */
export const OUTPUTS_CHANNELS = ['outputs.export'] as const

/** The names of the evaluations channels, free of zod for the preload; a compile-time test matches them. */
export const EVALUATIONS_CHANNELS = [
  'evaluations.list',
  'evaluations.get',
  'evaluations.refresh',
  'evaluations.feedback',
  'evaluations.submit',
] as const

/** The names of the run page's channels, free of zod for the preload; a compile-time test matches them. */
export const RUN_PAGE_CHANNELS = [
  'runs.get',
  'runs.refresh',
  'runs.logs',
  'runs.cancel',
  'runs.rerun',
  'deliveries.redeliver',
  'deliveries.verify',
] as const

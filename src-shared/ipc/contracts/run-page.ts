/**
 * The run page's channels of the IPC contract (issue 8: one run, its deliveries, compare),
 * spread into `ipcContract`. Placeholder until the first channel lands: each entry is
 * `'<domain>.<verb>': channel<Result>()(argsSchema)` with `channel` from `../channel`.
 */
export const runPageContract = {} as const

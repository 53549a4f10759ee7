/**
 * The evaluations channels of the IPC contract (issue 8), spread into `ipcContract`. Placeholder until
 * the first channel lands: each entry is `'<domain>.<verb>': channel<Result>()(argsSchema)`
 * with `channel` from `../channel`.
 */
export const evaluationsContract = {} as const

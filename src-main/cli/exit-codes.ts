/** The exit codes every `atelier` command keeps to (see the README). */
export const EXIT = {
  ok: 0,
  /** The work itself failed: a run failed, an upload had failures, the service said no. */
  failed: 1,
  /** Bad usage or input: nothing was attempted. */
  usage: 2,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

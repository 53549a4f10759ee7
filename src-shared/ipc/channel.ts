import type { z } from 'zod'

/**
 * One IPC channel of the contract: the zod schema of its single argument and, as a phantom type,
 * what it answers.
 */
export interface ChannelContract<Args extends z.ZodType, Result> {
  args: Args
  /** Never read at run time: carries the result type to both ends. */
  result: Result
}

export function channel<Result>() {
  return <Args extends z.ZodType>(args: Args): ChannelContract<Args, Result> => ({
    args,
    result: undefined as Result,
  })
}

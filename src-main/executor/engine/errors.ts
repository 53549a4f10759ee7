import type { FlowProblem } from '../../../src-shared/domain/flow'

export type FlowRunErrorCode =
  'FLOW_INVALID' | 'INSUFFICIENT_CREDIT' | 'ESTIMATE_FAILED' | 'FLOW_RUN_CONFLICT'

/**
 * Why a flow run was refused before anything was dispatched: the flow (or its inputs) has
 * problems (`problems`, every one of them), or the balance does not cover the estimate.
 */
export class FlowRunError extends Error {
  readonly problems: readonly FlowProblem[]
  readonly estimateMicro: number | null
  readonly balanceMicro: number | null

  constructor(
    readonly code: FlowRunErrorCode,
    message: string,
    details: {
      problems?: readonly FlowProblem[]
      estimateMicro?: number
      balanceMicro?: number
      cause?: unknown
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'FlowRunError'
    this.problems = details.problems ?? []
    this.estimateMicro = details.estimateMicro ?? null
    this.balanceMicro = details.balanceMicro ?? null
  }
}

export function isFlowRunError(value: unknown): value is FlowRunError {
  return value instanceof FlowRunError
}

/** Micro-credits as people read credits: `0.0205`. */
export function credits(micro: number): string {
  return (micro / 1_000_000).toFixed(4)
}

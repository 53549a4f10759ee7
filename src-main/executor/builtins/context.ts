import type { ProvenanceRecord } from '../../../src-shared/domain/provenance'
import type { MediaStore } from '../../media-store'
import type { ServiceClient } from '../../service'
import type { NodeOutcome, NodeRunContext, PortValue } from '../types'
import { BuiltinError } from './errors'
import { describeNode, PortReader } from './ports'

/** How the evaluate node waits for a verdict. */
export interface EvaluationPolling {
  /** First wait between two reads of the evaluation; default 250 ms. */
  initialMs: number
  /** The waits grow by this factor…; default 1.5. */
  factor: number
  /** …up to this; default 3 s. */
  maxMs: number
  /** A verdict that takes longer fails the node with EVALUATION_TIMEOUT; default 10 minutes. */
  timeoutMs: number
}

/** Micro-credits per evaluation, by job class. */
export interface EvaluationPrices {
  standard: number
  quick: number
}

/** What the built-ins share: the media store, the service, and how to reach storage. */
export interface BuiltinDeps {
  media: MediaStore
  service: ServiceClient | null
  /** For presigned storage PUTs (no API key) and nothing else. */
  fetch: typeof fetch
  polling: EvaluationPolling
  prices: EvaluationPrices
  /** The provenance record of a picture this flow run made, to save inside the file. */
  recordOf: ((sha256: string, flowRunId: string) => ProvenanceRecord | null) | null
}

/** One run of one built-in: the node run's context, its inputs as a reader, and the deps. */
export interface BuiltinRun extends NodeRunContext {
  ports: PortReader
  deps: BuiltinDeps
}

export type BuiltinStep = (run: BuiltinRun) => Promise<NodeOutcome>

export function builtinRun(context: NodeRunContext, deps: BuiltinDeps): BuiltinRun {
  return { ...context, ports: new PortReader(context.node, context.inputs), deps }
}

/** A local node's outcome: it costs nothing and has no remote run. */
export const local = (outputs: Record<string, PortValue>): NodeOutcome => ({
  outputs,
  costMicro: 0,
})

export function requireService(run: BuiltinRun, why: string): ServiceClient {
  if (run.deps.service) return run.deps.service
  throw new BuiltinError(
    'SERVICE_REQUIRED',
    `Node ${describeNode(run.node)} ${why}, which needs the service; sign in to a profile (atelier login) and run the flow again.`,
  )
}

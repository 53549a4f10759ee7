import type { FlowNode } from '../../src-shared/api'
import type { FlowCheck } from '../../src-shared/domain/flow-editor'
import {
  checkFlowInputs,
  parseFlowDocument,
  runnerFor,
  validateFlow,
  type FlowCatalog,
  type FlowDocument,
  type FlowRunners,
  type OnlineCatalog,
  type PortValue,
} from '../executor'
import type { Logger } from '../log'
import { isServiceError, type ServiceClient } from '../service'

export interface FlowCheckOptions {
  catalog: OnlineCatalog
  runners: () => FlowRunners
  client: ServiceClient
  orgId: string
  logger: Logger
  /** Aborted when Atelier closes. */
  signal: AbortSignal
}

/** How long a check waits for the service (details, balance) before answering with the mirror. */
const CHECK_WAIT_MS = 8_000
const MAX_DEPTH = 16

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What a run of the flow would be refused for, what it would cost, and what the account has.
 * The catalog is completed from the service first (as a run does); offline the mirror's is
 * used as it is. Flow inputs are checked only when the editor gives values for them: a flow being
 * edited is not refused for a run nobody has asked for yet.
 */
export async function checkFlow(
  options: FlowCheckOptions,
  flow: FlowDocument,
  inputs: Record<string, unknown> | undefined,
): Promise<FlowCheck> {
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(CHECK_WAIT_MS)])
  const balance = balanceOf(options, signal)
  try {
    await options.catalog.complete(flow, signal)
  } catch (error) {
    // A refused key or a fault of the service: the mirror's catalog is still worth checking with.
    if (!isServiceError(error)) throw error
    options.logger.info('the catalog could not be completed for a check', { err: error })
  }
  const catalog = options.catalog.catalog
  const problems = [
    ...validateFlow(flow, catalog),
    ...(inputs === undefined ? [] : checkFlowInputs(flow, inputs)),
  ]
  const byNode = estimateNodes(flow, inputs ?? {}, options.runners(), catalog, 0)
  const estimate =
    byNode === null
      ? null
      : { totalMicro: Object.values(byNode).reduce((sum, micro) => sum + micro, 0), byNode }
  return { problems, estimate, balanceMicro: await balance }
}

/**
 * Micro-credits per node, as the executor estimates before a run: each node's runner's
 * `estimate` with what is known before anything runs (values, flow inputs and their defaults,
 * node defaults; edges are not known yet), sub-flows summed into their node. Null when a price
 * is unknown (a model the catalog has no pricing for, a sub-flow that is not there).
 */
export function estimateNodes(
  flow: FlowDocument,
  inputs: Record<string, PortValue>,
  runners: FlowRunners,
  catalog: FlowCatalog,
  depth: number,
): Record<string, number> | null {
  const byNode: Record<string, number> = {}
  for (const node of flow.nodes) {
    const known = knownInputs(flow, node, inputs)
    if (node.type_code === 'sub_flow') {
      const found = catalog.flow(node.sub_flow_id ?? '')
      const sub = found && depth < MAX_DEPTH ? parseFlowDocument(found) : null
      if (!sub?.ok) return null
      const nested = estimateNodes(sub.flow, known, runners, catalog, depth + 1)
      if (nested === null) return null
      byNode[node.id] = Object.values(nested).reduce((sum, micro) => sum + micro, 0)
      continue
    }
    const runner = runnerFor(runners, node)
    if (!runner?.estimate) {
      byNode[node.id] = 0
      continue
    }
    try {
      byNode[node.id] = runner.estimate(node, known)
    } catch {
      return null
    }
  }
  return byNode
}

function knownInputs(
  flow: FlowDocument,
  node: FlowNode,
  inputs: Record<string, PortValue>,
): Record<string, PortValue> {
  const mapped = isRecord(node.config.flow_inputs) ? node.config.flow_inputs : {}
  const known: Record<string, PortValue> = {}
  for (const input of node.inputs) {
    if (input.source_output_id !== null) continue
    const flowInput = mapped[input.name]
    let value: unknown
    if (typeof flowInput === 'string') {
      value = inputs[flowInput] ?? flow.inputs.find((i) => i.name === flowInput)?.default_value
    } else {
      value = input.value ?? input.default_value
    }
    if (value !== undefined && value !== null) known[input.name] = value
  }
  return known
}

/** The balance in micro-credits; null when the service cannot say (offline, refused). Never throws. */
async function balanceOf(options: FlowCheckOptions, signal: AbortSignal): Promise<number | null> {
  try {
    const balance = await options.client.get('/v1/billing/balance', {
      headers: { 'X-Organization-Id': options.orgId },
      signal,
    })
    const value = Number(balance.balance)
    return Number.isFinite(value) ? Math.round(value * 1_000_000) : null
  } catch (error) {
    options.logger.debug('the balance could not be read for a check', { err: error })
    return null
  }
}

import type { FlowCheck } from '../../src-shared/domain/flow-editor'
import type { FlowRunsRepository } from '../db/repositories/flow-runs'
import {
  checkFlowInputs,
  isFlowRunError,
  validateFlow,
  type FlowDocument,
  type FlowRunners,
  type OnlineCatalog,
} from '../executor'
import { estimateFlow } from '../executor/engine/estimate'
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
  /** The flow runs whose results a run would reuse; without it the estimate ignores the cache. */
  cache?: { flowRuns: FlowRunsRepository; scope: { profile: string; orgId: string } }
}

/** How long a check waits for the service (details, balance) before answering with the mirror. */
const CHECK_WAIT_MS = 8_000

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
  const estimate = await estimateOf(options, flow, inputs ?? {})
  return {
    problems,
    estimate: estimate && { totalMicro: estimate.totalMicro, byNode: estimate.byNode },
    cachedNodes: estimate?.cachedNodes ?? 0,
    balanceMicro: await balance,
  }
}

/**
 * What a run would cost, as `atelier run` and the run itself estimate it (nodes the cache will
 * answer cost 0); null when a price is unknown (a model the catalog has no pricing for, a
 * sub-flow that is not there). Models are not fetched for it: the check answers at once.
 */
async function estimateOf(
  options: FlowCheckOptions,
  flow: FlowDocument,
  inputs: Record<string, unknown>,
) {
  try {
    return await estimateFlow({
      flow,
      inputs,
      runners: options.runners(),
      catalog: options.catalog.catalog,
      ...(options.cache ? { cache: options.cache } : {}),
      loadModels: false,
    })
  } catch (error) {
    if (!isFlowRunError(error)) throw error
    options.logger.debug('a flow check has no estimate', { err: error })
    return null
  }
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

import type { FlowProblem } from '../../../src-shared/domain/flow'
import type { FlowDocument } from '../types'
import type { FlowCatalog } from './catalog'
import { bindInputs } from './phases/bindings'
import { checkCatalogCodes } from './phases/catalog-codes'
import {
  openContext,
  type FlowOutputLink,
  type InputBinding,
  type RetryLink,
} from './phases/context'
import { readFanOutConfig } from './phases/fan-out-config'
import { checkIdentity } from './phases/identity'
import { findLoops } from './phases/loops'
import { readMappings } from './phases/mappings'
import { checkPorts } from './phases/ports'
import { checkRetries } from './phases/retries'
import { resolveTargets } from './phases/targets'
import { checkTypes } from './phases/types'
import { checkWiring } from './phases/wiring'

export { DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_LIMIT } from './phases/attempts'
export type { InputBinding, Port, RetryLink, RetrySource } from './phases/context'

/** What validation learnt about a flow, which planning builds on. */
export interface Analysis {
  problems: FlowProblem[]
  /** By node index: the nodes each feeds through edges (retry edges left out), no repeats. */
  next: number[][]
  /** Node indexes, each after every node that feeds it; empty when the edges make a loop. */
  order: number[]
  bindings: Map<string, InputBinding>[]
  /** By node index: the inputs that fan out. */
  fanOut: string[][]
  /** By output id: the type each output carries, `T[]` when its node fans out. */
  outputTypes: Map<string, string>
  retries: RetryLink[]
  flowOutputs: FlowOutputLink[]
}

/**
 * Every problem of a flow at once, and what planning needs, in phases over one context: each
 * phase reports what it finds and sets what the phases after it read (see `AnalysisContext`).
 * The order is the order problems are listed in, and each phase's comment says why it comes
 * where it does. A phase that meets something an earlier one refused skips it rather than
 * stopping, so one pass finds everything.
 */
export function analyzeFlow(flow: FlowDocument, catalog: FlowCatalog): Analysis {
  const context = openContext(flow, catalog)
  checkIdentity(context)
  checkCatalogCodes(context)
  resolveTargets(context)
  readFanOutConfig(context)
  checkPorts(context)
  readMappings(context)
  checkWiring(context)
  findLoops(context)
  checkTypes(context)
  checkRetries(context)
  bindInputs(context)
  return {
    problems: context.problems,
    next: context.next,
    order: context.looped ? [] : context.order,
    bindings: context.bindings,
    fanOut: context.fanOut,
    outputTypes: context.outputTypes,
    retries: context.retries,
    flowOutputs: context.outputLinks,
  }
}

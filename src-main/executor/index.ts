/**
 * The executor: runs flows — directed graphs of nodes — on this machine, with paid work never
 * done twice. Its parts, each with its own entry and its decisions written there:
 *
 * - `validate/`: parsing flow files, validation (every problem at once) and planning;
 * - `remote/`: model and workflow-engine nodes on the service, with intents in the ledger;
 * - `builtins/`: the built-in nodes that run locally;
 * - `engine/`: the scheduler (`runFlow`): limits, cache, quality gates, sub-flows, events, the
 *   flow run's record in the ledger;
 * - `catalog-online.ts`: the mirror's catalog completed from the service where a sync left it
 *   short (model details, flow graphs), cached back into the mirror.
 *
 * This file is what the app and the CLI import.
 */
export {
  credits,
  DEFAULT_CONCURRENCY,
  FlowRunError,
  isFlowRunError,
  runFlow,
  runnerFor,
  type FlowRunErrorCode,
  type FlowRunners,
  type FlowRunResult,
  type RunFlowOptions,
} from './engine'
export {
  onlineCatalog,
  type CompletionReport,
  type OnlineCatalog,
  type OnlineCatalogOptions,
} from './catalog-online'
export {
  checkFlowInputs,
  memoryCatalog,
  mirrorCatalog,
  nodeCacheKey,
  parseFlowDocument,
  planFlow,
  validateFlow,
  type FlowCatalog,
  type FlowPlan,
  type FlowProblem,
} from './validate'
export { mirrorDurations, mirrorModels, RemoteRunner, type RemoteRunnerOptions } from './remote'
export { BuiltinRunner, isMediaRef, type BuiltinRunnerOptions } from './builtins'
export type { FlowDocument, MediaRef, NodeOutcome, NodeRunner, PortValue } from './types'
export type {
  FailurePolicy,
  FlowRunEvent,
  FlowRunRecord,
  FlowRunState,
  FlowRunTotals,
  NodeRunRecord,
  NodeRunState,
} from '../../src-shared/domain/flow-run'

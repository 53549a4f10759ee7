import type { SandboxArea } from '../handlers/types'
import type { SandboxServices } from '../services'
import { Batches } from './batches'
import { catalogHandlers, modelsBySlug, writeModelCatalog } from './catalog'
import { RunEngine } from './engine'
import { flowTargetHandler, workflowTargetHandler } from './graph-targets'
import { runHandlers } from './handlers'

export { RunEngine, runNotFound, MIN_WORK_MS, NOMINAL_LATENCY_MS } from './engine'
export { imageFetcher } from './images'
export { modelTargetHandler, normalizedOutput, runModelStep, type ModelStep } from './model-target'
export { presentBatch, type StoredBatch } from './batches'
export { presentNodeRun, presentRun, withUrls } from './present'
export {
  seedHistory,
  type HistoryContext,
  type HistorySeeder,
  type HistorySummary,
  type SeededRun,
} from './history'
export type {
  DispatchRequest,
  DispatchResult,
  NodeWork,
  RunInternals,
  RunObserver,
  RunJob,
  RunTarget,
  RunWork,
  StoredRun,
  TargetFields,
  TargetHandler,
} from './types'
export { isTerminal, TERMINAL_STATUSES } from './types'

const engines = new WeakMap<SandboxServices, RunEngine>()

/**
 * The one run engine of a sandbox. Other areas (batches, flow and workflow runs) dispatch and
 * follow runs through it, and add their own kinds of target with `registerTarget`.
 */
export function runEngine(services: SandboxServices): RunEngine {
  let engine = engines.get(services)
  if (!engine) {
    engine = new RunEngine(services)
    engines.set(services, engine)
  }
  return engine
}

/**
 * Models (catalog records, stats), runs (dispatch, life cycle, logs, node runs) of models, flows
 * and workflow-engine workflows, and batches. See `batches.ts` for the batch rules,
 * `flow-graph.ts` and `workflow-graph.ts` for how the sandbox executes flows and workflows.
 */
export function createRunsArea(services: SandboxServices): SandboxArea {
  writeModelCatalog(services.store)
  const engine = runEngine(services)
  engine.registerTarget('flow', flowTargetHandler(services))
  engine.registerTarget('wfengine_workflow', workflowTargetHandler(services))
  const batches = new Batches(services, engine)
  const bySlug = modelsBySlug(services)
  return {
    handlers: {
      ...catalogHandlers,
      ...bySlug.handlers,
      ...runHandlers(services, engine, batches),
    },
    ...(bySlug.routes ? { routes: bySlug.routes } : {}),
    stop: () => {
      batches.stop()
      engine.stop()
    },
  }
}

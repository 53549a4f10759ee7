import type { SandboxArea, SandboxServices } from '../services'
import { catalogHandlers, writeModelCatalog } from './catalog'
import { RunEngine } from './engine'
import { runHandlers } from './handlers'

export { RunEngine, runNotFound, MIN_WORK_MS, NOMINAL_LATENCY_MS } from './engine'
export { imageFetcher } from './images'
export { modelTargetHandler, normalizedOutput } from './model-target'
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

/** Models (catalog records, stats) and runs (dispatch, life cycle, logs, node runs). */
export function createRunsArea(services: SandboxServices): SandboxArea {
  writeModelCatalog(services.store)
  const engine = runEngine(services)
  return {
    handlers: { ...catalogHandlers, ...runHandlers(services, engine) },
    stop: () => {
      engine.stop()
    },
  }
}

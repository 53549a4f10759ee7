import { writeGlobal } from '../seed'
import type { SandboxArea } from '../handlers/types'
import type { SandboxServices } from '../services'
import { BUILTIN_NODES } from './builtins'
import { flowHandlers } from './flows'
import { COLLECTIONS } from './records'
import { buildSampleWorkflows, buildSolutions } from './samples'
import { solutionHandlers } from './solutions'
import { buildFlowTemplates } from './templates'
import { workflowHandlers } from './workflows'

export { BUILTIN_NODES, findBuiltinNode } from './builtins'
export type { StoredNode } from './graph'
export type { StoredFlow } from './present'
export { COLLECTIONS as AUTHORING_COLLECTIONS } from './records'

/** Writes what every organization sees: built-in nodes, flow templates, samples, solutions. */
function seedGlobals(services: SandboxServices): void {
  const { store } = services
  const workflows = buildSampleWorkflows()
  const solutions = buildSolutions()
  const byParent =
    (field: string) =>
    (record: Record<string, unknown>): string | null =>
      typeof record[field] === 'string' ? record[field] : null
  writeGlobal(store, COLLECTIONS.builtinNodes, BUILTIN_NODES)
  writeGlobal(store, COLLECTIONS.workflows, workflows)
  writeGlobal(
    store,
    COLLECTIONS.workflowInputs,
    workflows.flatMap((workflow) => workflow.inputs),
    byParent('wfengine_workflow_id'),
  )
  writeGlobal(
    store,
    COLLECTIONS.workflowOutputs,
    workflows.flatMap((workflow) => workflow.outputs),
    byParent('wfengine_workflow_id'),
  )
  writeGlobal(store, COLLECTIONS.flowTemplates, buildFlowTemplates(workflows))
  writeGlobal(store, COLLECTIONS.solutions, solutions.solutions)
  writeGlobal(store, COLLECTIONS.solutionFlows, solutions.flowLinks, byParent('solution_id'))
  writeGlobal(store, COLLECTIONS.solutionModels, solutions.modelLinks, byParent('solution_id'))
  writeGlobal(
    store,
    COLLECTIONS.solutionWorkflows,
    solutions.workflowLinks,
    byParent('solution_id'),
  )
}

/**
 * Flows (with their nodes, inputs and outputs), flow templates, workflow-engine workflows,
 * built-in nodes and solutions. Flow and workflow runs belong to the run engine.
 */
export function createAuthoringArea(services: SandboxServices): SandboxArea {
  seedGlobals(services)
  return {
    handlers: {
      ...flowHandlers(services),
      ...workflowHandlers(services),
      ...solutionHandlers(services),
    },
  }
}

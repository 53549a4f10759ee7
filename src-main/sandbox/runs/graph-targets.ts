import type { Workflow } from '../../../src-shared/api'
import { AUTHORING_COLLECTIONS, type StoredFlow } from '../authoring'
import { decimalToMicro } from '../models'
import type { SandboxServices } from '../services'
import { runFlowGraph } from './flow-graph'
import { workOf, type StepContext } from './steps'
import type { RunJob, RunTarget, RunWork, TargetHandler } from './types'
import { estimateWorkflow, runWorkflowGraph } from './workflow-graph'

export const FLOW_NOT_FOUND = 'FLOW_NOT_FOUND'
export const WORKFLOW_NOT_FOUND = 'WORKFLOW_NOT_FOUND'

const contextOf = (services: SandboxServices, job: RunJob, flowStack: string[]): StepContext => ({
  services,
  orgId: job.orgId,
  runId: job.runId,
  seed: job.seed,
  signal: job.signal,
  fetchImage: job.fetchImage,
  flowStack,
})

/** The work of a target that disappeared between dispatch and execution. */
const gone = (code: string, message: string): RunWork => ({
  ok: false,
  failure_code: code,
  failure_stage: 'preprocess',
  failure_message: message,
  workMs: 0,
  logs: [{ level_code: 'error', message }],
  nodes: [],
})

/** The organization's flow, or a 404 FLOW_NOT_FOUND. */
export function requireFlow(services: SandboxServices, orgId: string, flowId: string): StoredFlow {
  return services.store.require<StoredFlow>(
    AUTHORING_COLLECTIONS.flows,
    flowId,
    orgId,
    'The flow',
    {
      notFoundCode: FLOW_NOT_FOUND,
    },
  )
}

/** The organization's workflow or a global sample, or a 404 WORKFLOW_NOT_FOUND. */
export function requireWorkflow(
  services: SandboxServices,
  orgId: string,
  workflowId: string,
): Workflow {
  return services.store.require<Workflow>(
    AUTHORING_COLLECTIONS.workflows,
    workflowId,
    orgId,
    'The workflow',
    { includeGlobal: true, notFoundCode: WORKFLOW_NOT_FOUND },
  )
}

const flowIdOf = (target: RunTarget): string => {
  if (target.type !== 'flow') throw new Error(`not a flow target: ${target.type}`)
  return target.flow_id
}

const workflowIdOf = (target: RunTarget): string => {
  if (target.type !== 'wfengine_workflow') throw new Error(`not a workflow target: ${target.type}`)
  return target.wfengine_workflow_id
}

/**
 * Runs of the organization's flows, executed by the sandbox (see `runFlowGraph`). The hold is the
 * flow's estimated_cost; the run costs the sum of its nodes. The graph is read when the run
 * executes, so a flow edited right after dispatch runs as edited.
 */
export function flowTargetHandler(services: SandboxServices): TargetHandler {
  return {
    resolve: (orgId, target) => {
      const flow = requireFlow(services, orgId, flowIdOf(target))
      return {
        model_id: null,
        model_slug: null,
        flow_id: flow.id,
        wfengine_workflow_id: null,
        parentId: flow.id,
      }
    },

    estimate: (orgId, target) => {
      const estimated = requireFlow(services, orgId, flowIdOf(target)).estimated_cost
      return estimated === null ? 0 : decimalToMicro(estimated)
    },

    execute: async (job) => {
      const flowId = flowIdOf(job.target)
      const flow = services.store.get<StoredFlow>(AUTHORING_COLLECTIONS.flows, flowId, job.orgId)
      if (!flow) {
        return gone(FLOW_NOT_FOUND, 'The flow was deleted before the run could start.')
      }
      return workOf(await runFlowGraph(contextOf(services, job, [flow.id]), flow, job.input))
    },
  }
}

/** Runs of workflow-engine workflows (the organization's and the samples), see `runWorkflowGraph`. */
export function workflowTargetHandler(services: SandboxServices): TargetHandler {
  return {
    resolve: (orgId, target) => {
      const workflow = requireWorkflow(services, orgId, workflowIdOf(target))
      return {
        model_id: null,
        model_slug: null,
        flow_id: null,
        wfengine_workflow_id: workflow.id,
        parentId: workflow.id,
      }
    },

    estimate: (orgId, target, input) =>
      estimateWorkflow(requireWorkflow(services, orgId, workflowIdOf(target)), input),

    execute: async (job) => {
      const workflow = services.store.get<Workflow>(
        AUTHORING_COLLECTIONS.workflows,
        workflowIdOf(job.target),
        job.orgId,
        { includeGlobal: true },
      )
      if (!workflow) {
        return gone(WORKFLOW_NOT_FOUND, 'The workflow was deleted before the run could start.')
      }
      return workOf(await runWorkflowGraph(contextOf(services, job, []), workflow, job.input))
    },
  }
}

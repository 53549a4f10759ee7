import type { Workflow } from '../../src-shared/api'
import type { Mirror } from '../db'
import type { FlowDocument } from '../executor'
import { oneNodeFlow } from '../flows/one-node'
import { isServiceError, type ServiceClient } from '../service'

export interface WorkflowLookupContext {
  client: ServiceClient
  mirror: Mirror
  orgId: string
  signal?: AbortSignal
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function fromMirror({ mirror, orgId }: WorkflowLookupContext, ref: string): Workflow | null {
  const scope = { orgId }
  if (UUID.test(ref)) return mirror.workflows.get(scope, ref)
  for (let after: string | null = null; ;) {
    const page = mirror.workflows.list(scope, { limit: 500, after })
    const found = page.items.find((workflow) => workflow.slug === ref)
    if (found) return found
    if (!page.next) return null
    after = page.next
  }
}

/**
 * A workflow of the organization by id or slug: the mirror's, else the service's (then kept in
 * the mirror, where a run's checks look for it). Null when neither has it, or offline.
 */
export async function findWorkflow(
  context: WorkflowLookupContext,
  ref: string,
): Promise<Workflow | null> {
  const stored = fromMirror(context, ref)
  if (stored && stored.deleted_at === null) return stored
  const { client, orgId, signal } = context
  const headers = { 'X-Organization-Id': orgId }
  try {
    const workflow = UUID.test(ref)
      ? await client.get('/v1/comfyui-workflows/{comfyui_workflow_id}', {
          params: { path: { comfyui_workflow_id: ref } },
          headers,
          ...(signal ? { signal } : {}),
        })
      : await client.get('/v1/comfyui-workflows/lookup', {
          params: { query: { slug: ref } },
          headers,
          ...(signal ? { signal } : {}),
        })
    context.mirror.workflows.upsertPage([workflow], { orgId })
    return workflow
  } catch (error) {
    if (
      isServiceError(error) &&
      (error.status === 0 || error.status === 404 || error.status === 422)
    ) {
      return null
    }
    throw error
  }
}

/**
 * The workflow as a flow of one node whose flow inputs and outputs are the workflow's own, so
 * that `atelier run <workflow>` runs it as any flow runs: checked, cached, recorded.
 */
export function workflowAsFlow(workflow: Workflow): FlowDocument {
  return oneNodeFlow({
    key: `workflow:${workflow.id}`,
    name: workflow.name,
    slug: workflow.slug,
    description: workflow.description,
    node: {
      label: workflow.name,
      slug: workflow.slug,
      type_code: 'wfengine_workflow',
      wfengine_workflow_id: workflow.id,
    },
    inputs: workflow.inputs,
    outputs: workflow.outputs,
  })
}

/** The workflow named by id or slug as a one-node flow; null when it is no workflow of ours. */
export async function workflowFlowOf(
  context: WorkflowLookupContext,
  ref: string,
): Promise<FlowDocument | null> {
  const workflow = await findWorkflow(context, ref)
  return workflow ? workflowAsFlow(workflow) : null
}

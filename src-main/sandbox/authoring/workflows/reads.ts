import type { Workflow } from '../../../../src-shared/api'
import { notFound } from '../../errors'
import type { Handlers } from '../../handlers/types'
import type { ListParams } from '../../list'
import { COLLECTIONS } from '../records'
import { WORKFLOW_NOT_FOUND, type WorkflowAccess } from './access'

/**
 * The operations that read workflows and their ports. They see the organization's workflows and
 * the global samples alike, as both can be run and copied.
 */
export function workflowReads(access: WorkflowAccess): Handlers {
  const { services, records, requireVisible } = access
  const { store, contract } = services

  const portsList = (
    context: { query: ListParams; auth: { orgId: string } },
    collection: string,
    schema: string,
    parentId: string,
  ) => {
    if (parentId !== 'any') requireVisible(parentId, context.auth.orgId)
    return store.list(
      { collection, orgId: context.auth.orgId, includeGlobal: true, parentId },
      context.query,
      { fields: contract.scalarFields(schema) },
    ) as never
  }

  return {
    listWorkflows: ({ query, auth }) =>
      store.list<Workflow>(
        { collection: COLLECTIONS.workflows, orgId: auth.orgId, includeGlobal: true },
        query,
        { fields: contract.scalarFields('Workflow') },
      ),

    getWorkflow: ({ params, auth }) => requireVisible(params.comfyui_workflow_id, auth.orgId),

    lookupWorkflow: ({ query, auth }) => {
      // The organization's own workflow first; a sample with the same slug comes second.
      const workflow =
        records.bySlug<Workflow>(COLLECTIONS.workflows, auth.orgId, query.slug) ??
        records.bySlug<Workflow>(COLLECTIONS.workflows, null, query.slug)
      if (!workflow) {
        throw notFound(`The workflow with slug ${JSON.stringify(query.slug)}`, WORKFLOW_NOT_FOUND)
      }
      return workflow
    },

    listWorkflowInputs: (context) =>
      portsList(
        context,
        COLLECTIONS.workflowInputs,
        'WorkflowInput',
        context.params.comfyui_workflow_id,
      ),

    listWorkflowOutputs: (context) =>
      portsList(
        context,
        COLLECTIONS.workflowOutputs,
        'WorkflowOutput',
        context.params.comfyui_workflow_id,
      ),
  }
}

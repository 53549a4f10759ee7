import type {
  Workflow,
  WorkflowCreate,
  WorkflowInputCreate,
  WorkflowOutputCreate,
  WorkflowUpdate,
} from '../../../../src-shared/api'
import type { Handlers } from '../../handlers/types'
import { COLLECTIONS } from '../records'
import { chooseSlug } from '../slug'
import type { WorkflowAccess } from './access'
import { asCreate, buildPorts, writePorts } from './ports'

/**
 * The operations that change a workflow of the organization: create, update and delete. Each
 * runs in one transaction, so the workflow and its port collections never disagree.
 */
export function workflowWrites(access: WorkflowAccess): Handlers {
  const { services, records, requireOwn } = access
  const { store } = services

  const slugFor = (orgId: string, asked: string | undefined, name: string, except?: string) =>
    chooseSlug({
      asked,
      name,
      what: 'workflow',
      taken: (slug) => {
        const holder = records.bySlug<Workflow>(COLLECTIONS.workflows, orgId, slug)
        return holder !== undefined && holder.id !== except
      },
    })

  const create = (body: WorkflowCreate, orgId: string): Workflow =>
    store.transaction(() => {
      const id = store.newId()
      const slug = slugFor(orgId, body.slug, body.name)
      const ports = buildPorts(
        access,
        id,
        body.workflow_json,
        body.inputs ?? [],
        body.outputs ?? [],
        orgId,
      )
      const now = store.now()
      const workflow: Workflow = {
        id,
        org_id: orgId,
        slug,
        name: body.name,
        description: body.description ?? null,
        workflow_json: body.workflow_json,
        version: body.version ?? null,
        is_public: body.is_public ?? false,
        status_code: body.status_code ?? 'active',
        created_by: null,
        environment: body.environment ?? null,
        models: body.models ?? null,
        custom_nodes: body.custom_nodes ?? null,
        graph: body.graph ?? null,
        resources: body.resources ?? null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
        deleted_by: null,
        category_code: body.category_code ?? null,
        inputs: ports.inputs,
        outputs: ports.outputs,
      }
      store.insert(COLLECTIONS.workflows, orgId, workflow)
      writePorts(access, orgId, workflow)
      return workflow
    })

  const update = (id: string, body: WorkflowUpdate, orgId: string): Workflow =>
    store.transaction(() => {
      const before = requireOwn(id, orgId)
      const slug =
        body.slug === undefined || body.slug === before.slug
          ? before.slug
          : slugFor(orgId, body.slug, before.name, before.id)
      const { inputs, outputs, ...fields } = body
      // Lists left out are kept, and checked again against a new workflow_json.
      const ports = buildPorts(
        access,
        before.id,
        body.workflow_json ?? before.workflow_json,
        inputs ?? before.inputs.map((input) => asCreate(input) as WorkflowInputCreate),
        outputs ?? before.outputs.map((output) => asCreate(output) as WorkflowOutputCreate),
        orgId,
        before,
      )
      const updated = store.update<Workflow>(
        COLLECTIONS.workflows,
        before.id,
        orgId,
        (current) => ({
          ...current,
          ...fields,
          slug,
          inputs: ports.inputs,
          outputs: ports.outputs,
        }),
      )
      writePorts(access, orgId, updated, before)
      return updated
    })

  return {
    createWorkflow: ({ body, auth }) => create(body, auth.orgId),

    updateWorkflow: ({ params, body, auth }) =>
      update(params.comfyui_workflow_id, body, auth.orgId),

    deleteWorkflow: ({ params, auth, status }) => {
      store.transaction(() => {
        const workflow = requireOwn(params.comfyui_workflow_id, auth.orgId)
        store.remove(COLLECTIONS.workflows, workflow.id, auth.orgId)
        records.remove(
          COLLECTIONS.workflowInputs,
          auth.orgId,
          workflow.inputs.map((input) => input.id),
        )
        records.remove(
          COLLECTIONS.workflowOutputs,
          auth.orgId,
          workflow.outputs.map((output) => output.id),
        )
      })
      status(204)
      return undefined
    },
  }
}

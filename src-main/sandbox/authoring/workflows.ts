import type {
  Workflow,
  WorkflowCreate,
  WorkflowInputCreate,
  WorkflowOutputCreate,
  WorkflowUpdate,
} from '../../../src-shared/api'
import { SandboxError, invalid, notFound, type FieldProblem } from '../errors'
import type { Handlers } from '../handlers/types'
import type { ListParams } from '../list'
import type { SandboxServices } from '../services'
import type { StoredRecord } from './graph'
import { AuthoringRecords, COLLECTIONS } from './records'
import { chooseSlug } from './slug'
import { buildWorkflowPorts } from './workflow-ports'

const WORKFLOW_NOT_FOUND = 'WORKFLOW_NOT_FOUND'

/** A stored input or output as the creation body would give it, to rebuild it unchanged. */
function asCreate(record: StoredRecord): Record<string, unknown> {
  const dropped = new Set(['wfengine_workflow_id', 'created_at', 'updated_at'])
  return Object.fromEntries(
    Object.entries(record).filter(([key, value]) => value !== null && !dropped.has(key)),
  )
}

export function workflowHandlers(services: SandboxServices): Handlers {
  const { store, contract } = services
  const records = new AuthoringRecords(store)

  /** The organization's workflow or a global sample; 404 otherwise. */
  const requireVisible = (id: string, orgId: string): Workflow =>
    store.require<Workflow>(COLLECTIONS.workflows, id, orgId, 'The workflow', {
      includeGlobal: true,
      notFoundCode: WORKFLOW_NOT_FOUND,
    })

  /** The organization's own workflow: samples are there to read and copy, not to change. */
  const requireOwn = (id: string, orgId: string): Workflow => {
    const workflow = requireVisible(id, orgId)
    if (workflow.org_id === null) {
      throw new SandboxError(
        403,
        'PERMISSION_DENIED',
        `${JSON.stringify(workflow.name)} is a sample workflow shared by every organization and cannot be changed; create your own copy with POST /v1/comfyui-workflows.`,
      )
    }
    return workflow
  }

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

  const buildPorts = (
    workflowId: string,
    workflowJson: Record<string, unknown>,
    inputs: readonly WorkflowInputCreate[],
    outputs: readonly WorkflowOutputCreate[],
    orgId: string,
    before?: Workflow,
  ) => {
    const existing = new Map<string, StoredRecord>()
    for (const input of before?.inputs ?? []) existing.set(`input:${input.id}`, input)
    for (const output of before?.outputs ?? []) existing.set(`output:${output.id}`, output)
    const ports = buildWorkflowPorts(
      { inputs, outputs },
      { workflowId, now: store.now(), newId: () => store.newId(), existing, workflowJson },
    )
    if (ports.problems.length > 0) {
      throw invalid(
        `The workflow's inputs and outputs have problems: ${ports.problems
          .slice(0, 3)
          .map((p) => p.message)
          .join(' ')}`,
        ports.problems,
      )
    }
    const taken: FieldProblem[] = []
    const check = (collection: string, id: string, path: string) => {
      if (existing.has(`${path.startsWith('inputs') ? 'input' : 'output'}:${id}`)) return
      const holder = records.holder(collection, id)
      if (!holder || (holder.org_id === orgId && holder.deleted_at !== null)) return
      taken.push({
        field: `${path}.id`,
        code: 'taken',
        message: `${path}.id is already the id of another workflow's ${path.startsWith('inputs') ? 'input' : 'output'}; give it a new id.`,
      })
    }
    ports.inputs.forEach((input, i) => {
      check(COLLECTIONS.workflowInputs, input.id, `inputs.${i}`)
    })
    ports.outputs.forEach((output, i) => {
      check(COLLECTIONS.workflowOutputs, output.id, `outputs.${i}`)
    })
    if (taken.length > 0) {
      throw new SandboxError(409, 'ID_TAKEN', taken[0]?.message ?? 'An id is taken.', taken)
    }
    return ports
  }

  /** Brings the input and output collections in step with the workflow. */
  const writePorts = (orgId: string, workflow: Workflow, before?: Workflow) => {
    const sync = <T extends StoredRecord>(
      collection: string,
      now: readonly T[],
      previous: readonly T[],
    ) => {
      const old = new Map(previous.map((record) => [record.id, record]))
      for (const record of now) {
        const was = old.get(record.id)
        if (was && JSON.stringify(was) === JSON.stringify(record)) continue
        records.put(collection, orgId, record, workflow.id)
      }
      const kept = new Set(now.map((record) => record.id))
      records.remove(
        collection,
        orgId,
        previous.filter((record) => !kept.has(record.id)).map((record) => record.id),
      )
    }
    sync(COLLECTIONS.workflowInputs, workflow.inputs, before?.inputs ?? [])
    sync(COLLECTIONS.workflowOutputs, workflow.outputs, before?.outputs ?? [])
  }

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

  const create = (body: WorkflowCreate, orgId: string): Workflow =>
    store.transaction(() => {
      const id = store.newId()
      const slug = slugFor(orgId, body.slug, body.name)
      const ports = buildPorts(id, body.workflow_json, body.inputs ?? [], body.outputs ?? [], orgId)
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
      writePorts(orgId, workflow)
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
      writePorts(orgId, updated, before)
      return updated
    })

  return {
    createWorkflow: ({ body, auth }) => create(body, auth.orgId),

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

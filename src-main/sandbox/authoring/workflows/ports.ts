import type {
  Workflow,
  WorkflowInputCreate,
  WorkflowOutputCreate,
} from '../../../../src-shared/api'
import { SandboxError, invalid, type FieldProblem } from '../../errors'
import type { StoredRecord } from '../graph'
import { COLLECTIONS } from '../records'
import { buildWorkflowPorts, type BuiltPorts } from '../workflow-ports'
import type { WorkflowAccess } from './access'

// A workflow's inputs and outputs are stored twice: whole on the workflow and record by record in
// their own collections (what the port lists answer). This module checks them and keeps the two
// in step, so the write handlers say what they do, not how the ports are kept.

/** A stored input or output as the creation body would give it, to rebuild it unchanged. */
export function asCreate(record: StoredRecord): Record<string, unknown> {
  const dropped = new Set(['wfengine_workflow_id', 'created_at', 'updated_at'])
  return Object.fromEntries(
    Object.entries(record).filter(([key, value]) => value !== null && !dropped.has(key)),
  )
}

/** The workflow's ports from a request, or 422 with their problems, or 409 for ids taken. */
export function buildPorts(
  access: WorkflowAccess,
  workflowId: string,
  workflowJson: Record<string, unknown>,
  inputs: readonly WorkflowInputCreate[],
  outputs: readonly WorkflowOutputCreate[],
  orgId: string,
  before?: Workflow,
): BuiltPorts {
  const { store } = access.services
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
    const holder = access.records.holder(collection, id)
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
export function writePorts(
  access: WorkflowAccess,
  orgId: string,
  workflow: Workflow,
  before?: Workflow,
): void {
  const sync = <T extends StoredRecord>(
    collection: string,
    now: readonly T[],
    previous: readonly T[],
  ) => {
    const old = new Map(previous.map((record) => [record.id, record]))
    for (const record of now) {
      const was = old.get(record.id)
      if (was && JSON.stringify(was) === JSON.stringify(record)) continue
      access.records.put(collection, orgId, record, workflow.id)
    }
    const kept = new Set(now.map((record) => record.id))
    access.records.remove(
      collection,
      orgId,
      previous.filter((record) => !kept.has(record.id)).map((record) => record.id),
    )
  }
  sync(COLLECTIONS.workflowInputs, workflow.inputs, before?.inputs ?? [])
  sync(COLLECTIONS.workflowOutputs, workflow.outputs, before?.outputs ?? [])
}

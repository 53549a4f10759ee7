import type { Workflow } from '../../../../src-shared/api'
import { SandboxError } from '../../errors'
import type { SandboxServices } from '../../services'
import { AuthoringRecords, COLLECTIONS } from '../records'

export const WORKFLOW_NOT_FOUND = 'WORKFLOW_NOT_FOUND'

/**
 * What every group of workflow handlers looks workflows up with, built once per sandbox: reads
 * see the global samples too, writes only the organization's own workflows.
 */
export interface WorkflowAccess {
  services: SandboxServices
  records: AuthoringRecords
  /** The organization's workflow or a global sample; 404 otherwise. */
  requireVisible: (id: string, orgId: string) => Workflow
  /** The organization's own workflow: samples are there to read and copy, not to change. */
  requireOwn: (id: string, orgId: string) => Workflow
}

export function workflowAccess(services: SandboxServices): WorkflowAccess {
  const { store } = services
  const records = new AuthoringRecords(store)

  const requireVisible = (id: string, orgId: string): Workflow =>
    store.require<Workflow>(COLLECTIONS.workflows, id, orgId, 'The workflow', {
      includeGlobal: true,
      notFoundCode: WORKFLOW_NOT_FOUND,
    })

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

  return { services, records, requireVisible, requireOwn }
}

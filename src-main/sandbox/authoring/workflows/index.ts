import type { Handlers } from '../../handlers/types'
import type { SandboxServices } from '../../services'
import { workflowAccess } from './access'
import { workflowReads } from './reads'
import { workflowWrites } from './writes'

/**
 * Every workflow-engine workflow operation's handler. The groups share one `WorkflowAccess`;
 * see `ports.ts` for how a workflow's inputs and outputs stay in step with their collections.
 */
export function workflowHandlers(services: SandboxServices): Handlers {
  const access = workflowAccess(services)
  return {
    ...workflowReads(access),
    ...workflowWrites(access),
  }
}

import type {
  ImportedWorkflowSummary,
  WorkflowImportArgs,
} from '../../src-shared/ipc/contracts/workflows'
import { importWorkflowFile, type WorkflowImportContext } from './import'

/** What the app's window asks of workflows. */
export interface WorkflowImports {
  import: (request: WorkflowImportArgs) => Promise<ImportedWorkflowSummary>
}

/** The window's imports, through the core's client and mirror, its views told at once. */
export function workflowImports(context: WorkflowImportContext): WorkflowImports {
  return {
    import: async ({ file, name }) => {
      const { workflow, notExposed } = await importWorkflowFile(context, {
        bytes: new Uint8Array(Buffer.from(file.base64, 'base64')),
        fileName: file.name,
        name,
      })
      const port = (p: {
        name: string
        display_name: string | null
        variable_type_code: string
      }) => ({
        name: p.name,
        displayName: p.display_name,
        variableType: p.variable_type_code,
      })
      return {
        id: workflow.id,
        slug: workflow.slug,
        name: workflow.name,
        inputs: workflow.inputs.map(port),
        outputs: workflow.outputs.map(port),
        notExposed,
      }
    },
  }
}

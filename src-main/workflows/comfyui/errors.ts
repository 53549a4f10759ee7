import { CodedError } from '../../errors/coded'

export type WorkflowImportCode =
  'NOT_A_WORKFLOW' | 'NO_WORKFLOW_IN_PICTURE' | 'WORKFLOW_NOT_CREATED' | 'OFFLINE'

/** Why a file could not become a workflow; the IPC layer and the CLI pass it on as it is. */
export class WorkflowImportError extends CodedError<WorkflowImportCode> {
  constructor(code: WorkflowImportCode, message: string, options?: ErrorOptions) {
    super(code, message, undefined, options)
    this.name = 'WorkflowImportError'
  }
}

export const isWorkflowImportError = (error: unknown): error is WorkflowImportError =>
  error instanceof WorkflowImportError

/** What a file must be, said the same way wherever an import is refused. */
export const WHAT_A_WORKFLOW_IS =
  "a ComfyUI workflow: a JSON file saved with 'Save (API)' or 'Save', or a PNG/WebP saved by ComfyUI"

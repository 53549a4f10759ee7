import { z } from 'zod'
import { channel } from '../channel'

/** A ComfyUI file the window read: base64 keeps the bytes exact over IPC. */
export const workflowImportSchema = z.strictObject({
  file: z.strictObject({
    name: z.string().trim().min(1, 'needs the file name').max(1000),
    // 50 MB of bytes: a workflow, or a picture carrying one, is far smaller.
    base64: z
      .string()
      .min(1, 'The file is empty; choose a ComfyUI workflow or a picture ComfyUI saved.')
      .max(70 * 1024 * 1024, 'The file is larger than 50 MB; choose a workflow file.'),
  }),
  /** The workflow's name; the file's name in words when left out. */
  name: z.string().trim().min(1).max(200).optional(),
})
export type WorkflowImportArgs = z.output<typeof workflowImportSchema>

interface ImportedPort {
  name: string
  displayName: string | null
  variableType: string
}

/** A workflow made from a ComfyUI file, as the window tells it. */
export interface ImportedWorkflowSummary {
  id: string
  slug: string
  name: string
  inputs: ImportedPort[]
  outputs: ImportedPort[]
  /** Custom nodes kept in the workflow as they are, with nothing of them offered. */
  notExposed: { nodeId: string; classType: string }[]
}

/** The workflows channels of the IPC contract (issue 20), spread into `ipcContract`. */
export const workflowsContract = {
  /**
   * A ComfyUI file (JSON in either form, or a PNG/WebP ComfyUI saved) made a workflow of the
   * organization, in the mirror at once so the palette offers it. NOT_A_WORKFLOW,
   * NO_WORKFLOW_IN_PICTURE for the file; OFFLINE, WORKFLOW_NOT_CREATED for the service.
   */
  'workflows.import': channel<ImportedWorkflowSummary>()(workflowImportSchema),
} as const

/**
 * ComfyUI workflows, imported as they are (issue 20): a workflow file (either of ComfyUI's JSON
 * forms, or a picture ComfyUI saved) becomes a workflow-engine workflow of the organization with
 * the inputs and outputs a person would choose, and can then be run as a one-node flow.
 */
export {
  isWorkflowImportError,
  WorkflowImportError,
  WHAT_A_WORKFLOW_IS,
  type WorkflowImportCode,
} from './comfyui/errors'
export { exposeComfyWorkflow, type ExposedWorkflow, type NotExposedNode } from './comfyui/expose'
export { looksLikeComfyWorkflow, parseComfyFile } from './comfyui/file'
export type { ComfyApiNode, ComfyApiWorkflow, ComfyFile } from './comfyui/parse'
export {
  importSummary,
  importWorkflowFile,
  nameFromFileName,
  type ImportedWorkflow,
  type WorkflowImportContext,
  type WorkflowImportRequest,
} from './import'
export { findWorkflow, workflowAsFlow, workflowFlowOf, type WorkflowLookupContext } from './as-flow'
export { workflowImports, type WorkflowImports } from './app'

import { mediaTypeOf, readImageTextChunks } from '../../provenance'
import { WorkflowImportError } from './errors'
import { notAWorkflow, parseJsonWorkflow, workflowFromText, type ComfyFile } from './parse'

/** The pictures ComfyUI saves its graph into. */
const PICTURES = new Set(['image/png', 'image/webp'])

/** The picture's text by key; a picture whose text cannot be read carries no workflow. */
function pictureTexts(bytes: Uint8Array): Record<string, string> {
  try {
    return readImageTextChunks(bytes)
  } catch {
    return {}
  }
}

/**
 * The workflow a file carries, in the API form, with the editor form when the file had it:
 * a JSON file in either form, or a PNG/WebP saved by ComfyUI. NOT_A_WORKFLOW for anything else,
 * NO_WORKFLOW_IN_PICTURE for a picture without ComfyUI's text.
 */
export function parseComfyFile(bytes: Uint8Array, fileName: string): ComfyFile {
  const type = mediaTypeOf(bytes)
  if (type !== null && PICTURES.has(type)) {
    const found = workflowFromText(pictureTexts(bytes))
    if (found) return found
    throw new WorkflowImportError(
      'NO_WORKFLOW_IN_PICTURE',
      `This picture carries no workflow (${fileName}). Choose a PNG or WebP that ComfyUI saved, or the workflow's JSON file.`,
    )
  }
  if (bytes.length === 0) throw notAWorkflow(fileName, 'it is empty')
  if (type !== null) throw notAWorkflow(fileName, `it is a ${type} file`)
  return parseJsonWorkflow(bytes, fileName)
}

/** Whether the bytes are a ComfyUI workflow, or a picture carrying one (for drop handlers). */
export function looksLikeComfyWorkflow(bytes: Uint8Array): boolean {
  try {
    parseComfyFile(bytes, 'file')
    return true
  } catch {
    return false
  }
}

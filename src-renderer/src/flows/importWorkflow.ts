import { plural } from '../../../src-shared/domain/plural'
import type { ImportedWorkflowSummary } from '../../../src-shared/ipc/contracts/workflows'
import { errorText } from '../shell/errorWords'
import { connectedApi, fileAsBase64 } from '../shell/remix'
import { useAppStore } from '../store'

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Whether a chosen file is a ComfyUI workflow rather than a flow file: a picture (ComfyUI saves
 * its graph inside), or JSON in ComfyUI's API form (`{"3": {"class_type": …}}`) or editor form
 * (`{nodes: [{type, …}], links}`). A flow file has nodes too, but with `type_code`, not `type`.
 */
export function isComfyFile(file: File, text: string): boolean {
  if (/\.(png|webp)$/i.test(file.name) || /^image\/(png|webp)$/.test(file.type)) return true
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return false
  }
  if (!isRecord(json)) return false
  const values = Object.values(json)
  if (values.length > 0 && values.every((node) => isRecord(node) && 'class_type' in node)) {
    return true
  }
  return (
    Array.isArray(json.nodes) &&
    Array.isArray(json.links) &&
    json.nodes.some((node) => isRecord(node) && typeof node.type === 'string')
  )
}

/** "6 inputs, 1 output; 1 custom node not exposed" */
export function importedWords(workflow: ImportedWorkflowSummary): string {
  const ports = `${plural(workflow.inputs.length, 'input')}, ${plural(workflow.outputs.length, 'output')}`
  const custom = workflow.notExposed.length
  return custom === 0 ? ports : `${ports}; ${plural(custom, 'custom node')} not exposed`
}

/**
 * Imports a ComfyUI file as a workflow of the organization and says how it went in a toast;
 * the palette is read again, so the editor offers the workflow under Workflows.
 */
export async function importComfyFile(file: File): Promise<boolean> {
  const state = useAppStore.getState()
  const api = connectedApi()
  if (!api) return false
  const result = await api.workflows.import({
    file: { name: file.name, base64: await fileAsBase64(file) },
  })
  if (!result.ok) {
    state.pushToast({
      tone: 'error',
      title: `“${file.name}” was not imported`,
      message: errorText(result.error),
    })
    return false
  }
  const workflow = result.value
  state.pushToast({
    tone: 'success',
    title: `Imported “${workflow.name}” — ${importedWords(workflow)}`,
    message: 'It is in the palette under Workflows.',
  })
  void state.loadPalette(true)
  return true
}

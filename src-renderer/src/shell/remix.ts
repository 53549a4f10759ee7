import type { RemixAs, RemixSource } from '../../../src-shared/domain/remix'
import type { IpcError } from '../../../src-shared/ipc/result'
import { useAppStore } from '../store'
import { explainError } from './errorWords'

/**
 * Remix from the window (issue 20): asks the main process for the flow that made a picture and
 * opens it in the editor, or imports a dropped ComfyUI workflow; every outcome is a toast in
 * plain words.
 */

/** The remix's refusals, said for the person; anything else as the shell says errors. */
const REFUSALS: Record<string, string> = {
  NO_PROVENANCE: 'Nothing to open',
  PROVENANCE_DAMAGED: 'The picture’s record is damaged',
  PROVENANCE_FOREIGN: 'The picture’s record cannot be read',
  PROVENANCE_MALFORMED_FILE: 'The picture cannot be read',
  REMIX_NOT_LOCAL: 'Not one of your flows',
}

export function tellRemixProblem(error: IpcError): void {
  const { pushToast } = useAppStore.getState()
  const title = REFUSALS[error.code]
  if (title !== undefined) {
    pushToast({ tone: 'error', title, message: error.message })
    return
  }
  const plain = explainError(error)
  pushToast({ tone: 'error', title: plain.title, message: plain.detail })
}

/** The window's bridge to Atelier; without one, a toast says so and null is answered. */
export function connectedApi(): typeof window.atelier {
  const api = window.atelier
  if (!api) {
    useAppStore.getState().pushToast({
      tone: 'error',
      title: 'Not connected',
      message: 'This window is not connected to Atelier; reopen it.',
    })
  }
  return api
}

/** Opens the remix in the editor; answers whether it opened (or a workflow was imported). */
export async function openRemix(source: RemixSource, as: RemixAs = 'new'): Promise<boolean> {
  const api = connectedApi()
  const state = useAppStore.getState()
  if (!api) return false
  const result = await api.remix.open({ source, as })
  if (!result.ok) {
    tellRemixProblem(result.error)
    return false
  }
  const answer = result.value
  if ('workflow' in answer) {
    state.pushToast({
      tone: 'success',
      title: `Imported the ComfyUI workflow “${answer.workflow.name}”`,
      message: 'It is in the palette under Workflows.',
    })
    void state.loadPalette(true)
    return true
  }
  state.closeOverlay()
  state.goTo('flows')
  const opened = await state.openFlow(answer.flow.id)
  void state.loadFlows()
  if (!opened) return false
  const what =
    as === 'version'
      ? `Opened the remix as a new version of “${answer.flow.name}”`
      : `Opened “${answer.flow.name}”`
  state.pushToast({
    tone: answer.reading === 'changed' || answer.note ? 'warning' : 'success',
    title: what,
    message:
      answer.note ?? 'The flow as it ran, with its inputs and its seed: run it to make it again.',
    ...(answer.note ? { durationMs: null } : {}),
  })
  return true
}

/** A dropped file's bytes as base64, for `remix.open`. */
export async function fileAsBase64(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  let binary = ''
  // In chunks: one call with millions of arguments overflows the stack.
  for (let at = 0; at < bytes.length; at += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  }
  return btoa(binary)
}

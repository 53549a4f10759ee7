import type { IpcError, IpcResult } from '../../../src-shared/ipc/result'
import { explainError } from '../shell/errorWords'
import type { AppState } from './index'

/**
 * Calls whose failure is told as a toast: what a click on the assets page or in the uploads
 * panel asked for has no other place to say why it did not happen.
 */
export function toastedCalls(get: () => AppState) {
  const fail = (error: IpcError) => {
    const plain = explainError(error)
    get().pushToast({ tone: 'error', title: plain.title, message: plain.detail })
  }

  /** Runs a call and tells its failure; answers the value or null. */
  const attempt = async <T>(call: Promise<IpcResult<T>>): Promise<T | null> => {
    const result = await call
    if (result.ok) return result.value
    fail(result.error)
    return null
  }

  /** The same for a call that answers nothing: whether it went through. */
  const succeeded = async (call: Promise<IpcResult<unknown>>): Promise<boolean> => {
    const result = await call
    if (!result.ok) fail(result.error)
    return result.ok
  }

  return { fail, attempt, succeeded }
}

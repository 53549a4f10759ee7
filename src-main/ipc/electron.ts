import { ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron'
import {
  IPC_CHANNELS,
  IPC_EVENT_PREFIX,
  ipcFail,
  type IpcEvents,
  type IpcResult,
} from '../../src-shared/ipc'
import { isTrustedSender } from '../app/policy'
import type { IpcCallContext } from './dispatch'

/** Runs one call of the contract: `dispatchIpc` over the handlers, wherever they run. */
export type IpcDispatch = (
  channel: string,
  args: unknown,
  context: IpcCallContext,
) => Promise<IpcResult<unknown>>

/**
 * The Electron transport: every channel of the contract, from the app's own main frame only,
 * goes to `dispatch` (the services thread's `dispatchIpc`, see src-main/services-thread).
 */
export function registerIpc(dispatch: IpcDispatch, appUrl: string): void {
  for (const channel of IPC_CHANNELS) {
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, args: unknown) => {
      const frame = event.senderFrame
      const trusted =
        frame !== null &&
        isTrustedSender({ url: frame.url, isMainFrame: frame === frame.top }, appUrl)
      if (!trusted) {
        return ipcFail({
          code: 'FORBIDDEN_SENDER',
          message: 'This call did not come from the Atelier window and was refused.',
        })
      }
      return dispatch(channel, args, { shell: 'electron' })
    })
  }
}

export function pushEvent<E extends keyof IpcEvents>(
  window: BrowserWindow,
  event: E,
  payload: IpcEvents[E],
): void {
  window.webContents.send(IPC_EVENT_PREFIX + event, payload)
}

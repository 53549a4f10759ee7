import { ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron'
import { IPC_CHANNELS, IPC_EVENT_PREFIX, ipcFail, type IpcEvents } from '../../src-shared/ipc'
import { isTrustedSender } from '../app/policy'
import { dispatchIpc, type IpcHandlers } from './dispatch'

/** The Electron transport: every channel of the contract goes through `dispatchIpc`. */
export function registerIpc(handlers: IpcHandlers, appUrl: string): void {
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
      return dispatchIpc(handlers, channel, args, { shell: 'electron' }, (name, error) => {
        console.error(`IPC ${name} failed:`, error instanceof Error ? error.message : error)
      })
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

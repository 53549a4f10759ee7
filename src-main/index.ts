// Electron lifecycle and wiring only: every service lives in its own folder and runs under Node in tests.
import { app, BrowserWindow, shell } from 'electron'
import { appUrl, createMainWindow } from './app/window'
import { isSafeExternalUrl } from './app/policy'
import { createHandlers } from './ipc'
import { registerIpc } from './ipc/electron'

if (!app.requestSingleInstanceLock()) {
  app.quit()
} else {
  app.on('second-instance', () => {
    const [window] = BrowserWindow.getAllWindows()
    if (window) {
      if (window.isMinimized()) window.restore()
      window.focus()
    }
  })

  void app.whenReady().then(() => {
    registerIpc(
      createHandlers({
        platform: process.platform,
        openExternal: async (url) => {
          if (isSafeExternalUrl(url)) await shell.openExternal(url)
        },
      }),
      appUrl(),
    )
    createMainWindow()
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) createMainWindow()
    })
  })

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })
}

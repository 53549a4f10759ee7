// Electron lifecycle and wiring only: every service lives in its own folder and runs under Node in tests.
import { join } from 'node:path'
import { app, BrowserWindow, shell } from 'electron'
import { startLocalSandbox, type Backend } from './app/backend'
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

  let backend: Backend | null = null

  void app.whenReady().then(async () => {
    try {
      backend = await startLocalSandbox(join(app.getPath('userData'), 'sandbox'))
    } catch (error) {
      console.error('The local sandbox could not start:', error)
    }
    registerIpc(
      createHandlers({
        platform: process.platform,
        backend: () => backend?.info ?? null,
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

  app.on('will-quit', () => {
    void backend?.close()
  })
}

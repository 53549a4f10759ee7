// Electron lifecycle and wiring only: every service lives in its own folder and runs under Node in tests.
import { app, BrowserWindow, dialog, shell } from 'electron'
import { appUrl, createMainWindow } from './app/window'
import { isSafeExternalUrl } from './app/policy'
import { createHandlers } from './ipc'
import { pushEvent, registerIpc } from './ipc/electron'
import { openLogger, resolveLogLevel } from './log'
import { CoreHost, createSettingsService } from './settings'

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

  const home = app.getPath('userData')
  const { level, problem } = resolveLogLevel(undefined)
  const logger = openLogger({ home, level, bindings: { process: 'app' } })
  if (problem) logger.warn(problem)
  // The host owns the backend and the core: switching profile in Settings reopens the core.
  // A current profile that cannot be used falls back to the sandbox, with a notice.
  const host = new CoreHost({ home, logger, fallbackToSandbox: true })
  const settings = createSettingsService({ host, logger })

  const showWindow = () => {
    const window = createMainWindow()
    const unsubscribe = host.onEvent((event, payload) => {
      if (!window.isDestroyed()) pushEvent(window, event, payload)
    })
    // Notices raised before the page could listen (a mirror rebuilt at start) are told again.
    window.webContents.on('did-finish-load', () => {
      for (const notice of host.notices) pushEvent(window, 'app.notice', notice)
    })
    window.on('closed', unsubscribe)
  }

  void app.whenReady().then(async () => {
    // Never throws with the fallback: what failed is told through `core()` and the notices.
    await host.open().catch((error: unknown) => {
      logger.error('the local service or data could not start', { err: error })
    })
    registerIpc(
      createHandlers({
        platform: process.platform,
        backend: () => host.backend()?.info ?? null,
        openExternal: async (url) => {
          if (isSafeExternalUrl(url)) await shell.openExternal(url)
        },
        core: () => host.core(),
        settings,
        chooseFolder: async () => {
          const [window] = BrowserWindow.getAllWindows()
          const options: Electron.OpenDialogOptions = {
            title: 'Choose a folder to upload',
            properties: ['openDirectory'],
          }
          const chosen = window
            ? await dialog.showOpenDialog(window, options)
            : await dialog.showOpenDialog(options)
          return chosen.canceled ? null : (chosen.filePaths[0] ?? null)
        },
      }),
      appUrl(),
    )
    showWindow()
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) showWindow()
    })
  })

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })

  // Quitting waits for the sync to stop and the databases to close, then goes on.
  let stopped = false
  app.on('will-quit', (event) => {
    if (stopped) return
    event.preventDefault()
    void (async () => {
      await host.close().catch(() => undefined)
      logger.close()
      stopped = true
      app.quit()
    })()
  })
}

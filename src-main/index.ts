// Electron lifecycle and wiring only: every service lives in its own folder and runs under Node in tests.
import { join } from 'node:path'
import { app, BrowserWindow, shell } from 'electron'
import { startLocalSandbox, type Backend } from './app/backend'
import { appUrl, createMainWindow } from './app/window'
import { isSafeExternalUrl } from './app/policy'
import { openCore, type Core } from './core'
import { isDbError } from './db'
import { createHandlers, type Unavailable } from './ipc'
import { pushEvent, registerIpc } from './ipc/electron'
import { openLogger, resolveLogLevel } from './log'

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
  let backend: Backend | null = null
  let core: Core | null = null
  let unavailable: Unavailable | null = null

  const showWindow = () => {
    const window = createMainWindow()
    const unsubscribe = core?.onEvent((event, payload) => {
      if (!window.isDestroyed()) pushEvent(window, event, payload)
    })
    // Notices raised before the page could listen (a mirror rebuilt at start) are told again.
    window.webContents.on('did-finish-load', () => {
      for (const notice of core?.notices ?? []) pushEvent(window, 'app.notice', notice)
    })
    window.on('closed', () => unsubscribe?.())
  }

  void app.whenReady().then(async () => {
    try {
      backend = await startLocalSandbox(join(home, 'sandbox'))
      core = openCore({ home, backend, logger, afterSync: [] })
    } catch (error) {
      logger.error('the local service or data could not start', { err: error })
      unavailable = isDbError(error)
        ? { code: error.code, message: error.message }
        : {
            code: 'UNAVAILABLE',
            message: 'Atelier could not start its local service; the log says why.',
          }
    }
    registerIpc(
      createHandlers({
        platform: process.platform,
        backend: () => backend?.info ?? null,
        openExternal: async (url) => {
          if (isSafeExternalUrl(url)) await shell.openExternal(url)
        },
        core: () => core ?? unavailable,
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
      await core?.close().catch(() => undefined)
      await backend?.close().catch(() => undefined)
      logger.close()
      stopped = true
      app.quit()
    })()
  })
}

// Electron lifecycle and wiring only: every service lives in its own folder and runs under Node in
// tests. The services themselves run in a thread of their own (src-main/services-thread), so this
// thread, which draws nothing but passes every window call along, never stutters.
import { app, BrowserWindow, dialog, shell } from 'electron'
import { appUrl, createMainWindow } from './app/window'
import { isSafeExternalUrl } from './app/policy'
import { pushEvent, registerIpc } from './ipc/electron'
import { openLogger, resolveLogLevel, type Logger } from './log'
import { startServices, type AppServices } from './services-thread'

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
  // Opened in `start`, not here: a home where the log cannot be made (no rights, a file in the
  // way) then gets the dialog below, not a crash of this script before there is any dialog.
  let appLogger: Logger | null = null
  // Set while the services open, so that quitting then still waits for them and closes them.
  let services: Promise<AppServices> | null = null

  /** The window opens while the services start: its page loads meanwhile, and its calls wait. */
  const showWindow = (opening: Promise<AppServices>) => {
    const window = createMainWindow()
    let unsubscribe = () => {}
    let loaded = false
    window.webContents.once('did-finish-load', () => {
      loaded = true
    })
    window.on('closed', () => {
      unsubscribe()
    })
    opening.then(
      (opened) => {
        if (window.isDestroyed()) return
        unsubscribe = opened.onEvent((event, payload) => {
          if (!window.isDestroyed()) pushEvent(window, event, payload)
        })
        // Notices raised before the page could listen (a mirror rebuilt at start) are told
        // again: now if the page is already up, and at every load of it.
        const tell = () => {
          for (const notice of opened.notices) pushEvent(window, 'app.notice', notice)
        }
        if (loaded) tell()
        window.webContents.on('did-finish-load', tell)
      },
      // `start` shows the dialog and quits.
      () => undefined,
    )
  }

  const start = async () => {
    const logger = openLogger({ home, level, bindings: { process: 'app' } })
    appLogger = logger
    if (problem) logger.warn(problem)
    // The host inside falls back to the sandbox (with a notice) when the current profile
    // cannot be used, so this only fails when the services cannot open at all.
    const opening = startServices({
      home,
      logLevel: level,
      fallbackToSandbox: true,
      openExternal: async (url) => {
        if (isSafeExternalUrl(url)) await shell.openExternal(url)
      },
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
    })
    services = opening
    registerIpc(
      async (channel, args, context) => (await opening).dispatch(channel, args, context),
      appUrl(),
    )
    showWindow(opening)
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) showWindow(opening)
    })
    const opened = await opening
    if (opened.fallback)
      logger.warn('the services run on the main thread', { why: opened.fallback })
  }

  void app.whenReady().then(() =>
    start().catch((error: unknown) => {
      appLogger?.error('the local services could not start', { err: error })
      dialog.showErrorBox(
        'Atelier could not start',
        `Its local services could not open: ${error instanceof Error ? error.message : String(error)} The log in ${home} says more.`,
      )
      app.quit()
    }),
  )

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })

  // Quitting waits for the sync to stop and the databases to close, then goes on.
  let stopped = false
  app.on('will-quit', (event) => {
    if (stopped) return
    event.preventDefault()
    void (async () => {
      await services?.then((opened) => opened.close()).catch(() => undefined)
      appLogger?.close()
      stopped = true
      app.quit()
    })()
  })
}

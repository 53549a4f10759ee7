import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BrowserWindow, session, shell } from 'electron'
import { contentSecurityPolicy, isAllowedNavigation, isSafeExternalUrl } from './policy'

/** The URL the window loads: the Vite dev server in development, the built file otherwise. */
export function appUrl(): string {
  const devUrl = process.env.ELECTRON_RENDERER_URL
  if (devUrl) return devUrl
  return pathToFileURL(join(import.meta.dirname, '../renderer/index.html')).href
}

function installSessionPolicy(url: string): void {
  const devOrigin = process.env.ELECTRON_RENDERER_URL ? new URL(url).origin : undefined
  const csp = contentSecurityPolicy(devOrigin ? { dev: { origin: devOrigin } } : {})
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] },
    })
  })
  // Atelier needs no camera, microphone, notifications or geolocation from the web layer.
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, grant) => {
    grant(false)
  })
}

export function createMainWindow(): BrowserWindow {
  const url = appUrl()
  installSessionPolicy(url)
  const window = new BrowserWindow({
    width: 1360,
    height: 860,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'Atelier',
    backgroundColor: '#16161a',
    webPreferences: {
      preload: join(import.meta.dirname, '../preload/index.cjs'),
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
      spellcheck: false,
    },
  })
  window.once('ready-to-show', () => {
    window.show()
  })
  window.webContents.setWindowOpenHandler(({ url: target }) => {
    // New windows are never opened; web links go to the user's browser instead.
    if (isSafeExternalUrl(target)) void shell.openExternal(target)
    return { action: 'deny' }
  })
  window.webContents.on('will-navigate', (event, target) => {
    if (!isAllowedNavigation(target, url)) event.preventDefault()
  })
  window.webContents.on('will-attach-webview', (event) => {
    event.preventDefault()
  })
  void window.loadURL(url)
  return window
}

// The stand-in for Electron, for the child process of test/integration/electron-shell.test.ts.
//
// Electron cannot run on the test machines, so the built shell (out/main/index.js and
// out/preload/index.cjs) runs under plain Node against this module instead; it is the only fake.
// It behaves as Electron documents it where the shell could tell the difference — a second
// `ipcMain.handle` on a channel throws, IPC arguments and answers are structured clones, a
// BrowserWindow cannot be made before `ready`, `app.quit` closes the windows and emits a
// preventable `will-quit`, a sandboxed preload gets a `require` that knows only `electron` and a
// few polyfills, `contextBridge` needs context isolation and copies what it exposes — so a shell
// that depends on something Electron would not do fails here too.
//
// Everything it is asked to do is reported through `configure({ record })` as a record
// (`kind` + plain-data `detail`); the launcher forwards records to the test. The test's own
// controls (`ready`, `invokeAs`, `navigate`, …) are in `control`, which electron.mjs does not
// export, so the bundle cannot come to depend on them; the few hooks they need on Electron's
// objects start with `_`, as no public Electron API does.

import * as nodeEvents from 'node:events'
import { EventEmitter } from 'node:events'
import { File } from 'node:buffer'
import { existsSync, readFileSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import * as nodeTimers from 'node:timers'
import * as nodeUrl from 'node:url'
import { fileURLToPath, pathToFileURL } from 'node:url'
import vm from 'node:vm'

const harness = {
  userData: '',
  singleInstanceLock: true,
  record: (_kind, _detail) => undefined,
  exit: (code) => process.exit(code),
  /** The page's own scripts: they run after the preload and before `did-finish-load`. */
  pageScript: (_window, _mainWorld) => undefined,
}

/** Set by the launcher before the bundle is imported. */
export function configure(options) {
  Object.assign(harness, options)
}

function record(kind, detail = {}) {
  harness.record(kind, detail)
}

/** Electron's events carry `preventDefault`; the shell's `will-quit` and guards rely on it. */
function electronEvent(fields = {}) {
  return {
    ...fields,
    defaultPrevented: false,
    preventDefault() {
      this.defaultPrevented = true
    },
  }
}

/** A message crossing between Electron's processes: the structured clone, or Electron's error. */
function acrossProcesses(value) {
  try {
    return structuredClone(value)
  } catch {
    throw new Error('An object could not be cloned.')
  }
}

/** What crossing a process boundary takes: never a synchronous call. */
const crossing = () => new Promise((resolve) => setImmediate(resolve))

// ---------------------------------------------------------------------------------------------
// app

const windows = []
let exiting = false

class App extends EventEmitter {
  isPackaged = false
  #ready = false
  #quitting = false
  #resolveReady = () => undefined
  #whenReady = new Promise((resolve) => {
    this.#resolveReady = resolve
  })

  requestSingleInstanceLock() {
    record('app.requestSingleInstanceLock', { granted: harness.singleInstanceLock })
    return harness.singleInstanceLock
  }

  getPath(name) {
    if (name === 'userData') return harness.userData
    // Electron knows more names; the shell should need no other (the test would say which).
    throw new Error(`Failed to get '${name}' path (the stand-in knows only userData)`)
  }

  isReady() {
    return this.#ready
  }

  whenReady() {
    return this.#whenReady
  }

  quit() {
    record('app.quit', { windows: BrowserWindow.getAllWindows().length })
    // Electron quits asynchronously: the caller's code goes on first.
    setImmediate(() => {
      this.#quit()
    })
  }

  exit(code = 0) {
    record('app.exit', { code })
    endProcess(code)
  }

  #quit() {
    if (exiting) return
    const beforeQuit = electronEvent()
    this.emit('before-quit', beforeQuit)
    if (beforeQuit.defaultPrevented) {
      record('app.before-quit', { prevented: true })
      return
    }
    this.#quitting = true
    for (const window of BrowserWindow.getAllWindows()) window.close()
    if (BrowserWindow.getAllWindows().length > 0) {
      // A window refused to close: Electron gives up quitting.
      this.#quitting = false
      record('app.quit-cancelled', { reason: 'a window did not close' })
      return
    }
    const willQuit = electronEvent()
    this.emit('will-quit', willQuit)
    record('app.will-quit', { prevented: willQuit.defaultPrevented })
    if (willQuit.defaultPrevented) return
    this.emit('quit', electronEvent(), 0)
    endProcess(0)
  }

  // The launcher's, once the main script has run (as Electron emits `ready` after it).
  _becomeReady() {
    if (this.#ready || exiting) return
    this.#ready = true
    record('app.ready')
    this.emit('ready', electronEvent(), {})
    this.#resolveReady()
  }

  // When no one listens, Electron's default on the last window closed is to quit.
  _lastWindowClosed() {
    if (this.#quitting) return
    if (this.listenerCount('window-all-closed') === 0) this.quit()
    else this.emit('window-all-closed')
  }
}

function endProcess(code) {
  if (exiting) return
  exiting = true
  harness.exit(code)
}

export const app = new App()

// ---------------------------------------------------------------------------------------------
// session

const sessionHooks = { headersReceived: null, permissionRequest: null }

export const session = {
  defaultSession: {
    webRequest: {
      onHeadersReceived(filterOrListener, maybeListener) {
        sessionHooks.headersReceived = maybeListener ?? filterOrListener
        record('session.onHeadersReceived')
      },
    },
    setPermissionRequestHandler(handler) {
      sessionHooks.permissionRequest = handler
      record('session.setPermissionRequestHandler')
    },
  },
}

// ---------------------------------------------------------------------------------------------
// ipcMain

const handlers = new Map()

class IpcMain extends EventEmitter {
  handle(channel, listener) {
    if (handlers.has(channel)) {
      throw new Error(`Attempted to register a second handler for '${channel}'`)
    }
    handlers.set(channel, listener)
    record('ipcMain.handle', { channel })
  }

  handleOnce(channel, listener) {
    this.handle(channel, (...args) => {
      handlers.delete(channel)
      return listener(...args)
    })
  }

  removeHandler(channel) {
    handlers.delete(channel)
  }
}

export const ipcMain = new IpcMain()

/** `ipcRenderer.invoke` as it reaches main: the handler, with the sender's frame. */
async function invokeHandler(channel, args, sender, senderFrame) {
  const cloned = acrossProcesses(args)
  await crossing()
  const handler = handlers.get(channel)
  if (!handler) {
    throw new Error(
      `Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`,
    )
  }
  const event = { type: 'frame', sender, senderFrame, frameId: 1, processId: 1 }
  let result
  try {
    result = await handler(event, ...cloned)
  } catch (error) {
    throw new Error(`Error invoking remote method '${channel}': ${String(error)}`, { cause: error })
  }
  await crossing()
  return acrossProcesses(result)
}

// ---------------------------------------------------------------------------------------------
// dialog, shell

export const dialog = {
  showErrorBox(title, content) {
    record('dialog.showErrorBox', { title, content })
  },
  showOpenDialog(windowOrOptions, maybeOptions) {
    const options = maybeOptions ?? windowOrOptions
    record('dialog.showOpenDialog', { withWindow: maybeOptions !== undefined, options })
    return Promise.resolve({ canceled: true, filePaths: [] })
  },
}

export const shell = {
  openExternal(url) {
    record('shell.openExternal', { url })
    return Promise.resolve()
  },
}

// ---------------------------------------------------------------------------------------------
// BrowserWindow, webContents, frames

let nextId = 1

/** A WebFrameMain: `top` is the same object for the main frame, as Electron's is. */
function webFrame(url, top = null) {
  const frame = { url, parent: top }
  frame.top = top ?? frame
  return frame
}

class WebContents extends EventEmitter {
  #window
  #url = ''
  #destroyed = false
  #openHandler = null
  /** The page loaded now: its renderer (preload world, ipcRenderer listeners). */
  page = null

  constructor(window) {
    super()
    this.id = window.id
    this.#window = window
    this.mainFrame = webFrame('')
  }

  getURL() {
    return this.#url
  }

  isDestroyed() {
    return this.#destroyed
  }

  setWindowOpenHandler(handler) {
    this.#openHandler = handler
    record('webContents.setWindowOpenHandler', { window: this.id })
  }

  send(channel, ...args) {
    if (this.#destroyed) throw new Error('Object has been destroyed')
    const cloned = acrossProcesses(args)
    record('webContents.send', { window: this.id, channel, args: cloned })
    const page = this.page
    setImmediate(() => {
      page?.deliver(channel, cloned)
    })
  }

  async loadURL(url) {
    if (this.#destroyed) throw new Error('Object has been destroyed')
    this.#url = url
    // A new document: a new main frame, a new renderer world.
    this.mainFrame = webFrame(url)
    this.page = null
    record('webContents.loadURL', { window: this.id, url })
    await crossing()
    if (url.startsWith('file:') && !existsSync(fileURLToPath(url))) {
      this.emit('did-fail-load', electronEvent(), -6, 'ERR_FILE_NOT_FOUND', url, true)
      throw new Error(`ERR_FILE_NOT_FOUND (-6) loading '${url}'`)
    }
    this.page = new Page(this, this.#window.options.webPreferences ?? {})
    this.page.runPreload()
    harness.pageScript(this.id, this.page.mainWorld)
    this.emit('dom-ready', electronEvent())
    record('webContents.did-finish-load', { window: this.id, url })
    this.emit('did-finish-load', electronEvent())
    this.#window.emit('ready-to-show', electronEvent())
  }

  _destroy() {
    this.#destroyed = true
    this.page = null
  }

  // The test's: a navigation the page itself starts (a link, `location = …`).
  _navigate(url) {
    const event = electronEvent({ url, isMainFrame: true, isSameDocument: false })
    this.emit('will-navigate', event, url, false, true)
    if (!event.defaultPrevented) void this.loadURL(url)
    return { prevented: event.defaultPrevented }
  }

  // The test's: `window.open(url)` or a target=_blank link in the page.
  _openWindow(url) {
    const details = { url, frameName: '', features: '', disposition: 'new-window' }
    const answer = this.#openHandler ? this.#openHandler(details) : { action: 'allow' }
    return { action: answer.action }
  }
}

export class BrowserWindow extends EventEmitter {
  #destroyed = false
  #visible
  #minimized = false
  #focused = false

  static getAllWindows() {
    return windows.filter((window) => !window.isDestroyed())
  }

  static fromWebContents(webContents) {
    return windows.find((window) => window.webContents === webContents) ?? null
  }

  constructor(options = {}) {
    super()
    if (!app.isReady()) throw new Error('Cannot create BrowserWindow before app is ready')
    this.id = nextId++
    this.options = options
    this.#visible = options.show !== false
    this.webContents = new WebContents(this)
    windows.push(this)
    record('window.created', { window: this.id, options: acrossProcesses(options) })
  }

  loadURL(url) {
    return this.webContents.loadURL(url)
  }

  loadFile(path) {
    return this.webContents.loadURL(pathToFileURL(path).href)
  }

  isDestroyed() {
    return this.#destroyed
  }

  isVisible() {
    return this.#visible
  }

  isMinimized() {
    return this.#minimized
  }

  isFocused() {
    return this.#focused
  }

  show() {
    this.#visible = true
    this.#minimized = false
    record('window.show', { window: this.id })
    this.emit('show')
  }

  focus() {
    this.#focused = true
    record('window.focus', { window: this.id, minimized: this.#minimized })
    this.emit('focus')
  }

  restore() {
    this.#minimized = false
    record('window.restore', { window: this.id })
    this.emit('restore')
  }

  minimize() {
    this.#minimized = true
    this.#focused = false
    record('window.minimize', { window: this.id })
    this.emit('minimize')
  }

  close() {
    if (this.#destroyed) return
    const event = electronEvent()
    this.emit('close', event)
    if (event.defaultPrevented) return
    this.destroy()
  }

  destroy() {
    if (this.#destroyed) return
    this.#destroyed = true
    this.webContents._destroy()
    record('window.closed', { window: this.id })
    this.emit('closed')
    if (BrowserWindow.getAllWindows().length === 0) app._lastWindowClosed()
  }
}

// ---------------------------------------------------------------------------------------------
// The renderer side: one Page per loaded document, with its preload's isolated world.

/** Node modules a sandboxed preload may require besides `electron` (Electron's polyfills). */
const SANDBOX_POLYFILLS = { events: nodeEvents, timers: nodeTimers, url: nodeUrl }

class Page {
  #webContents
  #prefs
  #listeners = new EventEmitter()
  /** What `contextBridge` put on the page's `window`. */
  mainWorld = {}

  constructor(webContents, prefs) {
    this.#webContents = webContents
    this.#prefs = prefs
  }

  deliver(channel, args) {
    this.#listeners.emit(channel, { sender: this.#ipcRenderer, ports: [] }, ...args)
  }

  #ipcRenderer = {
    invoke: (channel, ...args) =>
      invokeHandler(channel, args, this.#webContents, this.#webContents.mainFrame),
    on: (channel, listener) => {
      this.#listeners.on(channel, listener)
      return this.#ipcRenderer
    },
    once: (channel, listener) => {
      this.#listeners.once(channel, listener)
      return this.#ipcRenderer
    },
    removeListener: (channel, listener) => {
      this.#listeners.removeListener(channel, listener)
      return this.#ipcRenderer
    },
    off: (channel, listener) => this.#ipcRenderer.removeListener(channel, listener),
    removeAllListeners: (channel) => {
      this.#listeners.removeAllListeners(channel)
      return this.#ipcRenderer
    },
    listenerCount: (channel) => this.#listeners.listenerCount(channel),
  }

  #contextBridge = {
    exposeInMainWorld: (key, api) => {
      if (this.#prefs.contextIsolation === false) {
        throw new Error('contextBridge API can only be used when contextIsolation is enabled')
      }
      if (Object.hasOwn(this.mainWorld, key)) {
        throw new Error('Cannot bind an API on top of an existing property on the window object')
      }
      this.mainWorld[key] = overTheBridge(api)
      record('contextBridge.exposeInMainWorld', { window: this.#webContents.id, key })
    },
  }

  #webUtils = {
    getPathForFile: (file) => {
      if (!(file instanceof File)) throw new TypeError('Expected a File')
      // A File the page made itself, not one the person dropped: Chromium knows no path for it.
      return ''
    },
  }

  /** The renderer's `electron`: no app, no BrowserWindow, no ipcMain. */
  #electron = {
    contextBridge: this.#contextBridge,
    ipcRenderer: this.#ipcRenderer,
    webUtils: this.#webUtils,
  }

  listenerCount(channel) {
    return this.#listeners.listenerCount(channel)
  }

  runPreload() {
    const preload = this.#prefs.preload
    if (preload === undefined) return
    if (!isAbsolute(preload)) {
      record('preload.ignored', { preload, reason: 'not an absolute path' })
      return
    }
    // A sandboxed preload runs in a world of its own with a `require` that is not Node's;
    // the same wrapper and arguments as Electron's sandboxed renderer.
    const sandboxedRequire = (name) => {
      if (name === 'electron') return this.#electron
      const polyfill = SANDBOX_POLYFILLS[name]
      if (polyfill) return polyfill
      throw new Error(`module not found: ${name}`)
    }
    const world = vm.createContext({ console })
    const source = readFileSync(preload, 'utf8')
    try {
      const wrapper = vm.runInContext(
        `(function (require, process, Buffer, global, setImmediate, clearImmediate, exports, module) {${source}\n})`,
        world,
        { filename: preload },
      )
      const module = { exports: {} }
      const sandboxedProcess = {
        type: 'renderer',
        sandboxed: true,
        contextIsolated: this.#prefs.contextIsolation !== false,
        platform: process.platform,
        arch: process.arch,
        versions: { ...process.versions },
        env: {},
      }
      wrapper.call(
        module.exports,
        sandboxedRequire,
        sandboxedProcess,
        Buffer,
        world,
        setImmediate,
        clearImmediate,
        module.exports,
        module,
      )
      record('preload.ran', { window: this.#webContents.id, preload })
    } catch (error) {
      // Electron reports it in the console and the page goes on without the preload's API.
      record('preload.failed', { window: this.#webContents.id, preload, error: String(error) })
    }
  }
}

/**
 * What crosses `contextBridge`: functions become proxies that copy their arguments and results,
 * objects are copied key by key without their prototype, promises settle with copies.
 */
function overTheBridge(value) {
  if (typeof value === 'function') {
    return (...args) => overTheBridge(value(...args.map(overTheBridge)))
  }
  if (value === null || typeof value !== 'object') return value
  if (value instanceof Promise || typeof value.then === 'function') {
    return Promise.resolve(value).then(overTheBridge, (error) => {
      throw overTheBridge(error)
    })
  }
  if (value instanceof Error) return new Error(value.message)
  if (Array.isArray(value)) return value.map(overTheBridge)
  if (value instanceof File || value instanceof Date || value instanceof Uint8Array) return value
  const copy = {}
  for (const [key, item] of Object.entries(value)) copy[key] = overTheBridge(item)
  return copy
}

// ---------------------------------------------------------------------------------------------
// The test's controls, through the launcher: what Electron, the person or another process does.

export const control = {
  ready: () => {
    app._becomeReady()
  },
  windows: () => windows,
  window: (id) => {
    const window = windows.find((candidate) => candidate.id === id)
    if (!window) throw new Error(`no window ${id}`)
    return window
  },
  handlerChannels: () => [...handlers.keys()],
  ipcMainListenerChannels: () => ipcMain.eventNames().map(String),
  /** A call reaching main from a frame of the test's choosing (another page, an iframe). */
  invokeAs: (channel, args, { window, url, subFrameOfApp = false }) => {
    const webContents = control.window(window).webContents
    const frame = subFrameOfApp ? webFrame(url, webContents.mainFrame) : webFrame(url)
    return invokeHandler(channel, [args], webContents, frame)
  },
  /** The page's `window.<key>`, as the renderer sees it. */
  mainWorld: (id) => control.window(id).webContents.page?.mainWorld ?? {},
  pageListenerCount: (id, channel) =>
    control.window(id).webContents.page?.listenerCount(channel) ?? 0,
  secondInstance: (argv, workingDirectory) => {
    app.emit('second-instance', electronEvent(), argv, workingDirectory, {})
  },
  responseHeaders: (details) =>
    new Promise((resolve, reject) => {
      const hook = sessionHooks.headersReceived
      if (!hook) {
        reject(new Error('no onHeadersReceived hook was installed'))
        return
      }
      hook(details, (answer) => {
        resolve(answer.responseHeaders ?? details.responseHeaders)
      })
    }),
  permission: (permission) =>
    new Promise((resolve, reject) => {
      const hook = sessionHooks.permissionRequest
      if (!hook) {
        reject(new Error('no permission request handler was installed'))
        return
      }
      hook(null, permission, resolve, {})
    }),
}

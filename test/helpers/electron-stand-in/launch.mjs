// The child process of test/integration/electron-shell.test.ts: plain Node (no tsx, no vite)
// playing Electron's main process for the BUILT shell. It maps `electron` to the stand-in
// (hooks.mjs), imports out/main/index.js as Electron would import an ESM main, emits `ready`
// once that has run, and then does what the test asks over the IPC channel of `fork`.
//
// A child, not the test's own process: the shell quits (app.quit ends the process, as
// Electron's does) and starts a worker thread of services, neither of which may touch vitest.
//
// Environment: ATELIER_STAND_IN_MAIN (the built main bundle), ATELIER_STAND_IN_USER_DATA
// (app.getPath('userData')), ATELIER_STAND_IN_LOCK (`refused`: another instance holds it),
// ATELIER_STAND_IN_PAGE_EVENTS (comma-separated: the events the page subscribes to as it loads,
// as the renderer's own scripts do before `did-finish-load`).

import { register } from 'node:module'
import { File } from 'node:buffer'
import { pathToFileURL } from 'node:url'

register('./hooks.mjs', import.meta.url)

const { configure, control, app, dialog } = await import('./runtime.mjs')

const send = (message) =>
  new Promise((resolve) => {
    if (!process.connected) {
      resolve()
      return
    }
    process.send(message, () => {
      resolve()
    })
  })

// Records leave in order; the process ends only once they have all been sent, so the test
// sees every step up to the exit.
let sending = Promise.resolve()
const record = (kind, detail = {}) => {
  const message = { type: 'record', kind, detail }
  sending = sending.then(() => send(message))
}

const pageEvents = (process.env.ATELIER_STAND_IN_PAGE_EVENTS ?? '').split(',').filter(Boolean)

configure({
  userData: process.env.ATELIER_STAND_IN_USER_DATA ?? '',
  singleInstanceLock: process.env.ATELIER_STAND_IN_LOCK !== 'refused',
  record,
  exit: (code) => {
    void sending.then(() => process.exit(code))
  },
  // Subscription 0: what the page heard while it loaded.
  pageScript: (window, mainWorld) => {
    for (const event of pageEvents) {
      mainWorld.atelier?.on(event, (payload) => {
        record('page.event', { window, subscription: 0, event, payload })
      })
    }
  },
})

// Every worker thread the main thread starts: the services must run in one of their own.
process.on('worker', (worker) => {
  const { threadId } = worker
  record('worker.started', { threadId })
  worker.once('exit', (code) => {
    record('worker.exited', { threadId, code })
  })
})

// Electron shows an uncaught exception of the main process in a dialog; the test fails on
// either record, whatever dialog the shell meant to show.
process.on('uncaughtException', (error) => {
  record('process.uncaughtException', { error: String(error), stack: error.stack })
  dialog.showErrorBox(
    'A JavaScript error occurred in the main process',
    `Uncaught Exception:\n${error.stack}`,
  )
})
process.on('unhandledRejection', (reason) => {
  record('process.unhandledRejection', { error: String(reason) })
})

const subscriptions = new Map()
let nextSubscription = 1

function atelierOf(window) {
  const api = control.mainWorld(window).atelier
  if (!api) throw new Error(`window ${window} has no window.atelier (did the preload run?)`)
  return api
}

const commands = {
  /** A call as the page makes it: `window.atelier.<domain>.<verb>(args)`. */
  call: ({ window, path, args }) => {
    const [domain, verb] = path.split('.')
    const fn = atelierOf(window)[domain]?.[verb]
    if (typeof fn !== 'function') throw new Error(`window.atelier.${path} is not a function`)
    return fn(args)
  },
  /** `window.atelier.on(event, …)`: every payload heard becomes a `page.event` record. */
  subscribe: ({ window, event }) => {
    const id = nextSubscription++
    const off = atelierOf(window).on(event, (payload) => {
      record('page.event', { window, subscription: id, event, payload })
    })
    subscriptions.set(id, off)
    return id
  },
  unsubscribe: ({ subscription }) => {
    subscriptions.get(subscription)?.()
    subscriptions.delete(subscription)
    return null
  },
  pageListenerCount: ({ window, channel }) => control.pageListenerCount(window, channel),
  pathOf: ({ window }) => {
    const files = control.mainWorld(window).atelierFiles
    return {
      madeByThePage: files.pathOf(new File(['x'], 'made.txt')),
      notAFile: files.pathOf('/etc/passwd'),
    }
  },
  invokeAs: ({ channel, args, window, url, subFrameOfApp }) =>
    control.invokeAs(channel, args, { window, url, subFrameOfApp }),
  state: () => ({
    ready: app.isReady(),
    handlers: control.handlerChannels(),
    ipcMainListeners: control.ipcMainListenerChannels(),
    windows: control.windows().map((window) => ({
      id: window.id,
      destroyed: window.isDestroyed(),
      url: window.isDestroyed() ? null : window.webContents.getURL(),
      visible: window.isVisible(),
      minimized: window.isMinimized(),
      mainWorld: Object.keys(control.mainWorld(window.id)),
    })),
  }),
  navigate: ({ window, url }) => control.window(window).webContents._navigate(url),
  openWindow: ({ window, url }) => control.window(window).webContents._openWindow(url),
  responseHeaders: ({ details }) => control.responseHeaders(details),
  permission: ({ permission }) => control.permission(permission),
  minimize: ({ window }) => {
    control.window(window).minimize()
    return null
  },
  secondInstance: ({ argv, workingDirectory }) => {
    control.secondInstance(argv, workingDirectory)
    return null
  },
  closeWindow: ({ window }) => {
    control.window(window).close()
    return null
  },
  quit: () => {
    app.quit()
    return null
  },
}

process.on('message', (message) => {
  const { id, command, payload } = message
  void (async () => {
    try {
      const run = commands[command]
      if (!run) throw new Error(`unknown command ${command}`)
      const value = await run(payload ?? {})
      record('reply', { id, ok: true, value })
    } catch (error) {
      record('reply', { id, ok: false, error: String(error) })
    }
  })()
})

try {
  await import(pathToFileURL(process.env.ATELIER_STAND_IN_MAIN ?? '').href)
  record('main.loaded')
} catch (error) {
  // What Electron does when the main script throws while it loads: it says so, and the app
  // stays up without a window.
  record('main.load-failed', { error: String(error), stack: error.stack })
  dialog.showErrorBox(
    'A JavaScript error occurred in the main process',
    `Uncaught Exception:\n${error.stack}`,
  )
}

// Electron emits `ready` after the main script has run (unless it already asked to quit).
setImmediate(() => {
  control.ready()
})

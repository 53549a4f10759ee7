import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'

/**
 * The Electron window's hardening, proven on the code that builds it. The Electron runtime
 * cannot run on this machine, so `electron` is a recording fake here (the only fake in these
 * tests): `createMainWindow` and `registerIpc` run for real and the fake keeps what they asked
 * Electron to do — the window's preferences, its navigation and new-window handlers, the CSP
 * header, the IPC handlers — which the tests then drive as Electron would.
 */

type Listener = (...args: unknown[]) => unknown

const fake = vi.hoisted(() => {
  const state = {
    windows: [] as { options: Record<string, unknown>; listeners: Map<string, Listener> }[],
    openHandler: null as null | ((details: { url: string }) => { action: string }),
    headersHook: null as null | Listener,
    permissionHook: null as null | Listener,
    opened: [] as string[],
    ipcHandlers: new Map<string, Listener>(),
  }
  class BrowserWindow {
    readonly listeners = new Map<string, Listener>()
    readonly webContents = {
      setWindowOpenHandler: (handler: (details: { url: string }) => { action: string }) => {
        state.openHandler = handler
      },
      on: (event: string, listener: Listener) => {
        this.listeners.set(event, listener)
      },
    }
    constructor(options: Record<string, unknown>) {
      state.windows.push({ options, listeners: this.listeners })
    }
    once() {
      return this
    }
    loadURL() {
      return Promise.resolve()
    }
  }
  const electron = {
    BrowserWindow,
    session: {
      defaultSession: {
        webRequest: {
          onHeadersReceived: (hook: Listener) => {
            state.headersHook = hook
          },
        },
        setPermissionRequestHandler: (hook: Listener) => {
          state.permissionHook = hook
        },
      },
    },
    shell: {
      openExternal: (url: string) => {
        state.opened.push(url)
        return Promise.resolve()
      },
    },
    ipcMain: {
      handle: (channel: string, listener: Listener) => {
        state.ipcHandlers.set(channel, listener)
      },
    },
  }
  return { state, electron }
})

vi.mock('electron', () => ({ ...fake.electron, default: fake.electron }))

const { appUrl, createMainWindow } = await import('../../src-main/app/window')
const { registerIpc } = await import('../../src-main/ipc/electron')
const { createHandlers, dispatchIpc } = await import('../../src-main/ipc')
const { IPC_CHANNELS } = await import('../../src-shared/ipc')

function openWindow() {
  createMainWindow()
  const window = fake.state.windows.at(-1)
  if (!window) throw new Error('createMainWindow made no BrowserWindow')
  return window
}

function navigate(target: string): boolean {
  const listener = openWindow().listeners.get('will-navigate')
  if (!listener) throw new Error('the window has no will-navigate guard')
  let prevented = false
  listener({ preventDefault: () => (prevented = true) }, target)
  return prevented
}

beforeEach(() => {
  fake.state.windows.length = 0
  fake.state.opened.length = 0
  fake.state.openHandler = null
})

describe('the desktop window', () => {
  it('is sandboxed, context-isolated, without Node in the page and without webviews', () => {
    const prefs = openWindow().options.webPreferences as Record<string, unknown>
    expect(prefs).toMatchObject({
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
    })
    expect(prefs).not.toHaveProperty('nodeIntegrationInSubFrames', true)
    expect(prefs).not.toHaveProperty('nodeIntegrationInWorker', true)
    expect(prefs).not.toHaveProperty('allowRunningInsecureContent', true)
  })

  it('is the only BrowserWindow the main process makes', () => {
    const root = join(import.meta.dirname, '..', '..', 'src-main')
    const makers: string[] = []
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name)
        if (statSync(path).isDirectory()) walk(path)
        else if (/\.tsx?$/.test(name) && /new BrowserWindow\(/.test(readFileSync(path, 'utf8'))) {
          makers.push(path.slice(root.length + 1))
        }
      }
    }
    walk(root)
    expect(makers).toEqual(['app/window.ts'])
  })

  it.each([
    ['another origin', 'https://evil.example/'],
    ['a file', 'file:///etc/passwd'],
    ['a script URL', 'javascript:alert(1)'],
    ['a data URL', 'data:text/html,<script>alert(1)</script>'],
    ['a custom scheme', 'atelier-evil://x'],
  ])('refuses navigation to %s', (_what, target) => {
    expect(navigate(target)).toBe(true)
  })

  it('lets the app reload itself', () => {
    expect(navigate(appUrl())).toBe(false)
  })

  it('denies every new window and sends only web links to the browser', () => {
    openWindow()
    const handler = fake.state.openHandler
    if (!handler) throw new Error('the window has no window-open handler')
    for (const url of [
      'https://example.com/docs',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'smb://host/share',
    ]) {
      expect(handler({ url })).toEqual({ action: 'deny' })
    }
    expect(fake.state.opened).toEqual(['https://example.com/docs'])
  })

  it('refuses webviews and every permission request', () => {
    const window = openWindow()
    let prevented = false
    window.listeners.get('will-attach-webview')?.({ preventDefault: () => (prevented = true) })
    expect(prevented).toBe(true)
    const answers: boolean[] = []
    fake.state.permissionHook?.(null, 'media', (granted: boolean) => answers.push(granted))
    fake.state.permissionHook?.(null, 'notifications', (granted: boolean) => answers.push(granted))
    expect(answers).toEqual([false, false])
  })

  it('sends a CSP with no inline or remote scripts on every response', () => {
    openWindow()
    let headers: Record<string, string[]> = {}
    fake.state.headersHook?.(
      { responseHeaders: { 'Content-Type': ['text/html'] } },
      (answer: { responseHeaders: Record<string, string[]> }) => (headers = answer.responseHeaders),
    )
    const [csp = ''] = headers['Content-Security-Policy'] ?? []
    expect(csp).toMatch(/script-src 'self'(;|$)/)
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/)
    expect(headers['Content-Type']).toEqual(['text/html'])
  })
})

describe('IPC in the desktop window', () => {
  const app = 'file:///opt/Atelier/resources/app.asar/out/renderer/index.html'
  const handlers = createHandlers({
    platform: 'linux',
    backend: () => null,
    openExternal: (url) => {
      fake.state.opened.push(url)
      return Promise.resolve()
    },
  })
  registerIpc((channel, args, context) => dispatchIpc(handlers, channel, args, context), app)

  function call(channel: string, args: unknown, frame: { url: string; top?: unknown } | null) {
    const listener = fake.state.ipcHandlers.get(channel)
    if (!listener) throw new Error(`${channel} has no handler`)
    const senderFrame = frame === null ? null : { ...frame, top: undefined as unknown }
    if (senderFrame) senderFrame.top = frame?.top ?? senderFrame
    return listener({ senderFrame }, args) as Promise<{ ok: boolean; error?: { code: string } }>
  }

  it('has a handler for every channel of the contract', () => {
    expect([...fake.state.ipcHandlers.keys()].sort()).toEqual([...IPC_CHANNELS].sort())
  })

  it('answers the app main frame', async () => {
    expect(await call('app.getInfo', undefined, { url: app })).toMatchObject({ ok: true })
  })

  it.each([
    ['a sub-frame of the app', { url: app, top: { url: app } }],
    ['a page of another origin', { url: 'https://evil.example/' }],
    ['another file', { url: 'file:///tmp/evil.html' }],
    ['a sender without a frame', null],
  ])('refuses a call from %s', async (_what, frame) => {
    const answer = await call('app.getInfo', undefined, frame)
    expect(answer).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } })
  })

  it.each(['file:///etc/passwd', 'javascript:alert(1)', 'smb://host/share'])(
    'openExternal refuses %s before it reaches the shell',
    async (url) => {
      const answer = await call('app.openExternal', { url }, { url: app })
      expect(answer).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
      expect(fake.state.opened).toEqual([])
    },
  )

  it('openExternal opens an https link', async () => {
    const answer = await call('app.openExternal', { url: 'https://example.com/' }, { url: app })
    expect(answer).toMatchObject({ ok: true })
    expect(fake.state.opened).toEqual(['https://example.com/'])
  })
})

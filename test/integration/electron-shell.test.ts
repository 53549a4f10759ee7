import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IPC_CHANNELS } from '../../src-shared/ipc'
import { StandInShell } from '../helpers/electron-stand-in/shell'

/**
 * The desktop shell as built (`out/main/index.js` and the sandboxed preload
 * `out/preload/index.cjs`), booted for real in a child process. Electron cannot run on this
 * machine, so a stand-in for the `electron` module (test/helpers/electron-stand-in) is the only
 * fake: the bundle's lifecycle, window, IPC and services thread, and the preload's bridge, are
 * ours and unchanged. The unit tests prove the pieces; this proves the bundle wires them.
 */

const root = join(import.meta.dirname, '..', '..')
const built = {
  main: join(root, 'out', 'main', 'index.js'),
  preload: join(root, 'out', 'preload', 'index.cjs'),
  renderer: join(root, 'out', 'renderer', 'index.html'),
}
const appUrl = pathToFileURL(built.renderer).href

beforeAll(() => {
  const missing = Object.values(built).filter((file) => !existsSync(file))
  if (missing.length > 0) {
    throw new Error(
      `The built app is missing (${missing.join(', ')}). Build it with \`npx electron-vite build\`; test/global-setup.ts does so once per test run.`,
    )
  }
})

const temps: string[] = []
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true })
})

/** A temp folder as HOME, and the app's home (userData) inside it. */
function tempHome(): { home: string; userData: string } {
  const home = mkdtempSync(join(tmpdir(), 'atelier-electron-shell-'))
  temps.push(home)
  return { home, userData: join(home, 'userData') }
}

/** Nothing went wrong in the main process that Electron would have shown on its own. */
function expectNoCrash(shell: StandInShell): void {
  for (const kind of [
    'main.load-failed',
    'process.uncaughtException',
    'process.unhandledRejection',
    'preload.failed',
  ]) {
    expect(shell.of(kind), `${kind}\n${shell.describe()}`).toEqual([])
  }
}

/** The SQLite write-ahead files under `dir`: SQLite removes them when the last connection closes. */
function sqliteSideFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(sqlite|db)-(wal|shm)$/.test(file))
    .sort()
}

interface IpcAnswer {
  ok: boolean
  value?: unknown
  error?: { code: string; message: string }
}

describe('the built shell, running', () => {
  let shell: StandInShell
  let userData: string

  // One boot for the checks that leave the app running: opening the sandbox takes seconds.
  beforeAll(async () => {
    const dirs = tempHome()
    userData = dirs.userData
    mkdirSync(userData)
    // A settings file the app cannot read: the services start with a warning for the window,
    // raised before any page could listen to it.
    writeFileSync(join(userData, 'settings.json'), '{ this is not JSON')
    shell = StandInShell.boot({
      main: built.main,
      ...dirs,
      pageEvents: ['app.notice', 'sync.status'],
    })
    await shell.waitFor('webContents.did-finish-load')
  }, 30_000)

  afterAll(async () => {
    await shell.stop()
  })

  it('makes one hardened window and loads the built app in it', async () => {
    const windows = shell.of('window.created')
    expect(windows).toHaveLength(1)
    const options = windows[0]?.options as Record<string, unknown>
    const prefs = options.webPreferences as Record<string, unknown>
    expect(prefs).toMatchObject({
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
      // The preload Electron will load is the one built beside the bundle.
      preload: built.preload,
    })
    for (const loosening of [
      'nodeIntegrationInSubFrames',
      'nodeIntegrationInWorker',
      'allowRunningInsecureContent',
      'experimentalFeatures',
      'enableBlinkFeatures',
    ]) {
      expect(prefs).not.toHaveProperty(loosening)
    }
    // Hidden until the page is ready, so no blank frame shows.
    expect(options.show).toBe(false)
    await shell.waitFor('window.show')
    expect(shell.indexOf('window.show')).toBeGreaterThan(shell.indexOf('webContents.loadURL'))

    expect(shell.of('webContents.loadURL')).toEqual([{ window: 1, url: appUrl }])
    const state = await shell.request<{ windows: { url: string; visible: boolean }[] }>('state')
    expect(state.windows).toMatchObject([{ url: appUrl, visible: true }])
    expect(shell.of('preload.ran')).toEqual([{ window: 1, preload: built.preload }])
    expectNoCrash(shell)
  })

  it("guards the window's session, navigation and new windows", async () => {
    const headers = await shell.request<Record<string, string[]>>('responseHeaders', {
      details: { url: appUrl, responseHeaders: { 'Content-Type': ['text/html'] } },
    })
    const [csp = ''] = headers['Content-Security-Policy'] ?? []
    expect(csp).toMatch(/script-src 'self'(;|$)/)
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/)
    expect(headers['Content-Type']).toEqual(['text/html'])
    expect(await shell.request('permission', { permission: 'media' })).toBe(false)

    expect(await shell.request('navigate', { window: 1, url: 'https://evil.example/' })).toEqual({
      prevented: true,
    })
    for (const url of ['https://example.com/docs', 'file:///etc/passwd']) {
      expect(await shell.request('openWindow', { window: 1, url })).toEqual({ action: 'deny' })
    }
    // Web links go to the browser, anything else nowhere.
    await shell.waitFor('shell.openExternal')
    expect(shell.of('shell.openExternal')).toEqual([{ url: 'https://example.com/docs' }])
    const state = await shell.request<{ windows: { url: string }[] }>('state')
    expect(state.windows).toMatchObject([{ url: appUrl }])
    expectNoCrash(shell)
  })

  it("handles every channel, and only for the app's own main frame", async () => {
    const state = await shell.request<{ handlers: string[] }>('state')
    expect([...state.handlers].sort()).toEqual([...IPC_CHANNELS].sort())

    const from = (frame: { url: string; subFrameOfApp?: boolean }) =>
      shell.request<IpcAnswer>('invokeAs', { channel: 'app.getInfo', window: 1, ...frame })
    for (const frame of [
      { url: 'https://evil.example/' },
      { url: 'file:///tmp/evil.html' },
      { url: appUrl, subFrameOfApp: true },
    ]) {
      expect(await from(frame), JSON.stringify(frame)).toMatchObject({
        ok: false,
        error: { code: 'FORBIDDEN_SENDER' },
      })
    }
    expect(await from({ url: appUrl })).toMatchObject({ ok: true, value: { shell: 'electron' } })
    expectNoCrash(shell)
  })

  it("answers window.atelier from the services thread, on the sandbox in the app's home", async () => {
    const state = await shell.request<{ windows: { mainWorld: string[] }[] }>('state')
    // The page gets the two bridged APIs and nothing else (no ipcRenderer, no require).
    expect(state.windows[0]?.mainWorld.sort()).toEqual(['atelier', 'atelierFiles'])

    const info = await shell.request<IpcAnswer>('call', { window: 1, path: 'app.getInfo' })
    expect(info).toEqual({
      ok: true,
      value: expect.objectContaining({
        shell: 'electron',
        backend: expect.objectContaining({ kind: 'sandbox', label: 'Local sandbox' }),
      }),
    })
    // The services run in a thread of their own, still open, not on the main thread.
    expect(shell.of('worker.started')).toHaveLength(1)
    expect(shell.of('worker.exited')).toEqual([])
    const log = readFileSync(join(userData, 'logs', 'atelier.log'), 'utf8')
    expect(log).not.toContain('the services run on the main thread')
    expect(existsSync(join(userData, 'mirror.sqlite'))).toBe(true)
    expect(existsSync(join(userData, 'ledger.sqlite'))).toBe(true)

    // Validated in the thread, and what only main can do is asked of main: the link reaches
    // Electron's shell from the thread, a file URL never leaves it.
    const opened = () => shell.of('shell.openExternal').map((detail) => detail.url)
    const before = opened().length
    expect(
      await shell.request('call', {
        window: 1,
        path: 'app.openExternal',
        args: { url: 'file:///etc/passwd' },
      }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
    expect(
      await shell.request('call', {
        window: 1,
        path: 'app.openExternal',
        args: { url: 'https://example.com/help' },
      }),
    ).toEqual({ ok: true, value: null })
    expect(opened().slice(before)).toEqual(['https://example.com/help'])

    // The preload's file helper answers only for a File the person gave it.
    expect(await shell.request('pathOf', { window: 1 })).toEqual({
      madeByThePage: null,
      notAFile: null,
    })
    expectNoCrash(shell)
  })

  it("pushes the services' events to the page's subscriptions", async () => {
    // Raised at start, before the page listened: told again once it loaded.
    const notice = await shell.waitFor(
      'page.event',
      (detail) => detail.subscription === 0 && detail.event === 'app.notice',
    )
    expect(notice.detail.payload).toMatchObject({
      level: 'warning',
      message: expect.stringContaining('settings.json'),
    })
    expect(
      shell.indexOf('webContents.send', (detail) => detail.channel === 'event:app.notice'),
    ).toBeGreaterThan(shell.indexOf('webContents.did-finish-load'))

    // An event the services raise now, because of a call.
    const subscription = await shell.request<number>('subscribe', {
      window: 1,
      event: 'sync.status',
    })
    const heard = shell.waitFor('page.event', (detail) => detail.subscription === subscription)
    expect(await shell.request('call', { window: 1, path: 'sync.start' })).toMatchObject({
      ok: true,
    })
    const status = (await heard).detail.payload
    expect(status).toMatchObject({ state: expect.any(String) })
    expect(shell.of('webContents.send')).toContainEqual({
      window: 1,
      channel: 'event:sync.status',
      args: [status],
    })

    // Unsubscribing removes the preload's listener, so a closed view leaks none.
    const count = () =>
      shell.request<number>('pageListenerCount', { window: 1, channel: 'event:sync.status' })
    const listening = await count()
    await shell.request('unsubscribe', { subscription })
    expect(await count()).toBe(listening - 1)
    expectNoCrash(shell)
  })

  it('brings the window forward when a second instance starts, restoring it first', async () => {
    await shell.request('secondInstance', { argv: ['atelier'], workingDirectory: '/' })
    expect((await shell.waitFor('window.focus')).detail).toEqual({ window: 1, minimized: false })
    expect(shell.of('window.restore')).toEqual([])

    await shell.request('minimize', { window: 1 })
    await shell.request('secondInstance', { argv: ['atelier'], workingDirectory: '/' })
    await shell.waitFor('window.restore')
    const focused = shell.of('window.focus')
    expect(focused).toHaveLength(2)
    // Focused once restored, not while still minimized.
    expect(focused[1]).toEqual({ window: 1, minimized: false })
    expect(shell.indexOf('window.restore')).toBeLessThan(
      shell.records.findLastIndex((record) => record.kind === 'window.focus'),
    )
    expectNoCrash(shell)
  })
})

describe('the built shell, starting and stopping', () => {
  it('quits at once as a second instance, opening nothing', async () => {
    const dirs = tempHome()
    const shell = StandInShell.boot({ main: built.main, ...dirs, lockRefused: true })
    try {
      expect(await shell.exited).toEqual({ code: 0, signal: null })
      expect(shell.of('app.requestSingleInstanceLock')).toEqual([{ granted: false }])
      expect(shell.of('app.quit')).toHaveLength(1)
      for (const kind of ['worker.started', 'window.created', 'ipcMain.handle']) {
        expect(shell.of(kind), kind).toEqual([])
      }
      // Not even a log: the first instance owns the home.
      expect(existsSync(join(dirs.userData, 'logs'))).toBe(false)
      expectNoCrash(shell)
    } finally {
      await shell.stop()
    }
  })

  it.each([
    ['the last window is closed', 'closeWindow'],
    ['the app is quit', 'quit'],
  ])('closes the services and the databases before it exits, when %s', async (_how, command) => {
    const dirs = tempHome()
    const shell = StandInShell.boot({ main: built.main, ...dirs })
    try {
      await shell.waitFor('webContents.did-finish-load')
      // While the databases are open SQLite keeps these beside them; the check below can fail.
      // (The window loads while the services open: they are open a moment after.)
      await expect
        .poll(() => sqliteSideFiles(dirs.userData))
        .toEqual(expect.arrayContaining(['ledger.sqlite-wal', 'mirror.sqlite-wal']))

      await shell.request(command, { window: 1 })
      await shell.waitFor('app.will-quit', (detail) => detail.prevented === false)
      expect(await shell.exited).toEqual({ code: 0, signal: null })

      const step = (kind: string, match?: (detail: Record<string, unknown>) => boolean) =>
        shell.indexOf(kind, match)
      const held = step('app.will-quit', (detail) => detail.prevented === true)
      const threadEnded = step('worker.exited')
      const lastQuit = shell.records.findLastIndex((record) => record.kind === 'app.quit')
      const quit = step('app.will-quit', (detail) => detail.prevented === false)
      // will-quit held, the thread ended by itself (code 0: closed, not terminated), then
      // quit again, and only that quit went through.
      expect(held, shell.describe()).toBeGreaterThan(-1)
      expect(threadEnded).toBeGreaterThan(held)
      expect(shell.of('worker.exited')).toEqual([expect.objectContaining({ code: 0 })])
      expect(lastQuit).toBeGreaterThan(threadEnded)
      expect(quit).toBeGreaterThan(lastQuit)
      expect(shell.of('app.will-quit')).toHaveLength(2)

      expect(sqliteSideFiles(dirs.userData)).toEqual([])
      expectNoCrash(shell)
    } finally {
      await shell.stop()
    }
  })

  it.each([
    [
      'its home is a regular file',
      (userData: string) => {
        writeFileSync(userData, '')
      },
    ],
    [
      'a file stands where its log folder goes',
      (userData: string) => {
        mkdirSync(userData)
        writeFileSync(join(userData, 'logs'), '')
      },
    ],
  ])('says it could not start and quits when %s', async (_what, spoil) => {
    const dirs = tempHome()
    spoil(dirs.userData)
    const shell = StandInShell.boot({ main: built.main, ...dirs })
    try {
      // The first dialog, not the exit: a main script that crashed (Electron's own dialog)
      // never exits by itself.
      const { detail } = await shell.waitFor('dialog.showErrorBox')
      expect(detail, shell.describe()).toEqual({
        title: 'Atelier could not start',
        content: expect.stringMatching(
          /^Its local services could not open: .*(ENOTDIR|EEXIST).* The log in .* says more\.$/,
        ),
      })
      expect(detail.content).toContain(dirs.userData)
      expect(await shell.exited).toEqual({ code: 0, signal: null })
      expect(shell.of('dialog.showErrorBox')).toHaveLength(1)
      // The dialog first, then the quit; no window or thread was left behind.
      expect(shell.indexOf('app.quit')).toBeGreaterThan(shell.indexOf('dialog.showErrorBox'))
      expect(shell.of('window.created')).toEqual([])
      expect(shell.of('worker.started')).toEqual([])
      expectNoCrash(shell)
    } finally {
      await shell.stop()
    }
  })
})

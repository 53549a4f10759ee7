import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { sandboxBackend, type Backend } from '../../src-main/workspace'
import { openCore, type Core, type CoreOptions } from '../../src-main/core'
import { openLogger, type Logger } from '../../src-main/log'
import type { SandboxOptions } from '../../src-main/sandbox'
import { launchChromium } from './chromium'
import { bridgeToMainProcess } from './page-bridge'
import { serveBuiltRenderer, type ServedRenderer } from './renderer-build'
import { startTestSandbox, type TestSandbox } from './sandbox'

export interface AppOptions<S> {
  /** Part of the temp home's name, to tell a leftover home apart. */
  name: string
  /**
   * What the app talks to (a sandbox, and whatever else the test needs), started alongside the
   * renderer build and Chromium, as those take the longest. Gets the temp home.
   */
  service: (home: string) => Promise<S>
  /** Stops it, once the core and the browser are closed. */
  stopService: (service: S) => Promise<void>
}

export interface AppPageOptions {
  viewport?: { width: number; height: number }
  colorScheme?: 'light' | 'dark'
  /** For a test that saves what the page offers to download. */
  acceptDownloads?: boolean
  /**
   * Wait until the shell says `Synced just now` (the default), or only until it is drawn: a
   * test whose service is already gone would never see the first.
   */
  until?: 'synced' | 'drawn'
}

export interface AppPage {
  page: Page
  /** Uncaught errors of the page's code, for the test to expect none. */
  errors: string[]
  /** What the page logged as errors, to explain a failure the page itself shows no sign of. */
  consoleErrors: string[]
}

/**
 * The app as the e2e tests drive it: the shipped renderer bundle in Chromium, and behind the
 * page bridge the app's own core (its mirror, its sync) in a temp home, as the desktop app
 * opens it. Only the window itself is missing, which cannot run on this machine.
 */
export interface App<S> {
  readonly home: string
  readonly browser: Browser
  readonly renderer: ServedRenderer
  readonly service: S
  /** The core `openCore` opened; asking before is a mistake in the test. */
  readonly core: Core
  /** Opens the core on the backend, once the test has set up what it should find there. */
  openCore: (backend: Backend, options?: CoreChoices) => Core
  /** A page bridged to the core's handlers, showing the shell. */
  openPage: (options?: AppPageOptions) => Promise<AppPage>
  /** Closes the core, the browser, the renderer and the service, then removes the home. */
  close: () => Promise<void>
}

/** What a test may choose of the core it opens: fewer retries, timers that never fire, … */
export type CoreChoices = Pick<CoreOptions, 'client' | 'timers' | 'firstSyncAfterMs'>

export async function startApp<S>(options: AppOptions<S>): Promise<App<S>> {
  const home = mkdtempSync(join(tmpdir(), `atelier-e2e-${options.name}-`))
  const [renderer, browser, service] = await Promise.all([
    serveBuiltRenderer(),
    launchChromium(),
    options.service(home),
  ])
  let opened: { core: Core; logger: Logger; backend: Backend } | null = null
  const openedOrThrow = () => {
    if (opened === null) throw new Error('Open the core first (app.openCore).')
    return opened
  }

  return {
    home,
    browser,
    renderer,
    service,
    get core() {
      return openedOrThrow().core
    },
    openCore(backend, coreOptions = {}) {
      const logger = openLogger({ home })
      const core = openCore({ home, backend, logger, ...coreOptions })
      opened = { core, logger, backend }
      return core
    },
    async openPage({
      viewport = { width: 1280, height: 800 },
      colorScheme,
      acceptDownloads,
      until = 'synced',
    } = {}) {
      const { core, backend } = openedOrThrow()
      const page = await browser.newPage({ viewport, acceptDownloads })
      const errors: string[] = []
      const consoleErrors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text())
      })
      await bridgeToMainProcess(page, () => backend.info, { core })
      if (colorScheme) await page.emulateMedia({ colorScheme })
      await page.goto(renderer.url)
      const nav = page.getByRole('navigation', { name: 'Sections' })
      const shown =
        until === 'synced' ? nav.getByRole('status').filter({ hasText: 'Synced just now' }) : nav
      await shown.waitFor({ timeout: 60_000 })
      return { page, errors, consoleErrors }
    },
    async close() {
      if (opened) {
        await opened.core.close()
        opened.logger.close()
      }
      await browser.close()
      await renderer.close()
      await options.stopService(service)
      rmSync(home, { recursive: true, force: true })
    },
  }
}

export interface SandboxApp extends AppPage {
  app: App<TestSandbox>
  sandbox: TestSandbox
  core: Core
}

/**
 * The app on a fresh test sandbox with one page open, as most e2e tests start: the core opened
 * on the sandbox, the page showing the shell. `app.close()` undoes it all.
 */
export async function startSandboxApp(
  name: string,
  choices: { sandbox?: SandboxOptions; core?: CoreChoices; page?: AppPageOptions } = {},
): Promise<SandboxApp> {
  const app = await startApp({
    name,
    service: () => startTestSandbox(choices.sandbox),
    stopService: (sandbox) => sandbox.close(),
  })
  try {
    const core = app.openCore(sandboxBackend(app.service), choices.core)
    const shown = await app.openPage(choices.page)
    return { app, sandbox: app.service, core, ...shown }
  } catch (error) {
    // The test's afterAll has no app to close yet: leave no browser or sandbox behind.
    await app.close()
    throw error
  }
}

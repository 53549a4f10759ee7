import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { createServer, get, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { RENDERER_CACHE_DIR } from '../../src-main/web'
import type { AtelierApi, IpcResult } from '../../src-shared/ipc'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'
import { runAtelier } from '../helpers/cli'

const { available } = chromiumAvailability()
const root = join(import.meta.dirname, '..', '..')
const artifacts = join(root, 'test-results', 'screenshots')

interface Running {
  child: ChildProcessWithoutNullStreams
  /** The first line on stdout. */
  line: string
  stdout: () => string
  stderr: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Every `atelier web` a test started: killed at the end, whatever failed before. */
const started: ChildProcessWithoutNullStreams[] = []

/** The real `atelier web` binary in the background, once it has printed its line. */
function startWeb(args: string[], timeoutMs = 90_000): Promise<Running> {
  const child = spawn(process.execPath, [join(root, 'bin', 'atelier.mjs'), 'web', ...args], {
    cwd: root,
  })
  started.push(child)
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve({ code, signal })
    })
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`atelier web printed no line in ${timeoutMs} ms; stderr: ${stderr}`))
    }, timeoutMs)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const end = stdout.indexOf('\n')
      if (end >= 0) {
        clearTimeout(timer)
        resolve({
          child,
          line: stdout.slice(0, end),
          stdout: () => stdout,
          stderr: () => stderr,
          exited,
        })
      }
    })
    void exited.then(({ code }) => {
      clearTimeout(timer)
      reject(new Error(`atelier web exited (${code}) before printing its line; stderr: ${stderr}`))
    })
  })
}

/** Stops a run with a signal and answers how it ended, bounded in time. */
async function stop(running: Running, signal: NodeJS.Signals): Promise<number | null> {
  running.child.kill(signal)
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`atelier web did not stop within 10 s of ${signal}`))
    }, 10_000)
  })
  try {
    return (await Promise.race([running.exited, timeout])).code
  } finally {
    clearTimeout(timer)
  }
}

/** A GET with a Host header of our choosing (fetch always sends the URL's). */
function statusWithHost(url: string, host: string, cookie: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { host, cookie } }, (response) => {
      response.resume()
      resolve(response.statusCode)
    }).on('error', reject)
  })
}

/** Opens the bridge from Node, as any program on this machine could try. */
function openBridge(origin: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${origin.replace('http', 'ws')}/bridge`, { headers })
    socket.once('open', () => {
      resolve(socket)
    })
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`refused with ${response.statusCode}`))
    })
    socket.once('error', reject)
  })
}

/** The next message on a socket that is an answer (not a pushed event). */
function nextAnswer(socket: WebSocket): Promise<{ id: unknown; result: IpcResult<unknown> }> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { id?: unknown; result?: IpcResult<unknown> }
      if (!('result' in message)) return
      socket.off('message', onMessage)
      resolve(message as { id: unknown; result: IpcResult<unknown> })
    }
    socket.on('message', onMessage)
  })
}

/** What a page shows as going wrong: console errors, uncaught errors, failed or refused requests. */
function watchProblems(page: Page): string[] {
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
  page.on('requestfailed', (request) => {
    problems.push(`failed: ${request.url()} (${request.failure()?.errorText ?? 'no reason'})`)
  })
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`)
  })
  return problems
}

/** The scripts a page fetched, in order, each with its text. */
function watchScripts(page: Page): { url: string; text: Promise<string> }[] {
  const scripts: { url: string; text: Promise<string> }[] = []
  page.on('response', (response) => {
    if (new URL(response.url()).pathname.endsWith('.js')) {
      scripts.push({ url: response.url(), text: response.text() })
    }
  })
  return scripts
}

/** A class name only the flow editor's graph library (@xyflow) has in its code. */
const GRAPH_LIBRARY_MARK = 'react-flow__pane'

async function loadGraphLibrary(scripts: { text: Promise<string> }[]): Promise<boolean> {
  const texts = await Promise.all(scripts.map((script) => script.text))
  return texts.some((text) => text.includes(GRAPH_LIBRARY_MARK))
}

/** Answers a fetch from the page itself (its cookie, its CSP): the status and the type. */
function fetchInPage(page: Page, url: string): Promise<{ status: number; type: string | null }> {
  return page.evaluate(async (target) => {
    const response = await fetch(target)
    return { status: response.status, type: response.headers.get('content-type') }
  }, url)
}

describe.runIf(available)('the browser mode (`atelier web`) in Chromium', () => {
  let browser: Browser
  let context: BrowserContext
  let home: string
  let web: Running
  let origin: string
  let cookie: string
  let elsewhere: Server
  const errors: string[] = []

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true })
    home = mkdtempSync(join(tmpdir(), 'atelier-e2e-web-'))
    // A damaged mirror is rebuilt at start: its notice must reach the page that connects later.
    writeFileSync(join(home, 'mirror.sqlite'), 'this is not a database')
    elsewhere = createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>another site</p>')
    })
    ;[browser, web] = await Promise.all([
      launchChromium(),
      startWeb(['--port', '0', '--home', home]),
      new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve)),
    ])
    origin = new URL(web.line).origin
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  }, 120_000)

  afterAll(async () => {
    await context.close()
    await browser.close()
    for (const child of started) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
    await new Promise<void>((resolve) => {
      elsewhere.close(() => {
        resolve()
      })
    })
    rmSync(home, { recursive: true, force: true })
  })

  it('prints one line, the link with its token, and refuses every request without it', async () => {
    expect(web.line).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/)
    expect(web.stdout()).toBe(`${web.line}\n`)

    const bare = await fetch(`${origin}/`)
    expect(bare.status).toBe(403)
    expect(await bare.text()).toContain('needs the link `atelier web` printed')
    const wrong = await fetch(`${origin}/?token=${'A'.repeat(43)}`, { redirect: 'manual' })
    expect(wrong.status).toBe(403)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expect((await fetch(`${origin}/assets/`)).status).toBe(403)

    const right = await fetch(web.line, { redirect: 'manual' })
    expect(right.status).toBe(303)
    expect(right.headers.get('location')).toBe('/')
    const setCookie = right.headers.get('set-cookie') ?? ''
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Strict/)
    cookie = setCookie.split(';')[0] ?? ''

    const page = await fetch(`${origin}/`, { headers: { cookie } })
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(page.headers.get('cache-control')).toBe('no-store')
    const html = await page.text()
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1]
    expect((await fetch(`${origin}/${script ?? 'missing'}`, { headers: { cookie } })).status).toBe(
      200,
    )
    // The home's ledger sits three folders above the build: an encoded `..` never reaches it.
    // (The link comes while the services start: the ledger is there once they have.)
    await expect.poll(() => existsSync(join(home, 'ledger.sqlite'))).toBe(true)
    expect(statSync(join(home, 'ledger.sqlite')).isFile()).toBe(true)
    const traversal = await fetch(`${origin}/..%2f..%2f..%2fledger.sqlite`, { headers: { cookie } })
    expect(traversal.status).toBe(404)
    // A DNS name rebound to the loopback does not carry this server's Host.
    expect(await statusWithHost(`${origin}/`, 'attacker.example', cookie)).toBe(403)
  })

  it('opens the link in Chromium: the shell renders over the bridge, the token leaves the address bar', async () => {
    const page = await context.newPage()
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(web.line)
    expect(page.url()).toBe(`${origin}/`)

    const nav = page.getByRole('navigation', { name: 'Sections' })
    for (const name of ['Flows', 'Assets', 'Runs', 'Evaluations', 'Settings']) {
      await expect.poll(() => nav.getByRole('button', { name }).count()).toBe(1)
    }
    await expect.poll(() => nav.locator('.backend-badge').textContent()).toBe('Local sandbox')
    expect(await nav.textContent()).toMatch(/Atelier \d+\.\d+\.\d+ · web/)
    await expect.poll(() => nav.getByRole('status').textContent()).toBe('Synced just now')
    // The notice of the rebuilt mirror was raised before the page existed, and told to it.
    await expect
      .poll(() => page.getByRole('alert').filter({ hasText: 'was damaged' }).count())
      .toBe(1)
    await page.screenshot({ path: join(artifacts, 'web-mode.png') })
    expect(errors).toEqual([])
    await page.close()
  })

  it('loads with no console error, failed request or error answer, and the tab has its icon', async () => {
    const page = await context.newPage()
    const problems = watchProblems(page)
    await page.goto(`${origin}/`)
    const nav = page.getByRole('navigation', { name: 'Sections' })
    await expect.poll(() => nav.getByRole('status').textContent()).toBe('Synced just now')
    await expect.poll(() => page.getByRole('region', { name: 'Your flows' }).count()).toBe(1)
    // What the page fetches once it is idle (the flow editor's chunk, the icon) counts too.
    await page.waitForLoadState('networkidle')

    const href = await page.locator('link[rel="icon"]').getAttribute('href')
    expect(href).toMatch(/^\.\/assets\/icon-[\w-]+\.svg$/)
    const icon = await fetchInPage(page, new URL(href ?? '', page.url()).href)
    expect(icon).toEqual({ status: 200, type: 'image/svg+xml' })
    // Asked for by a browser on its own: the same icon, never a 404.
    const favicon = await fetchInPage(page, `${origin}/favicon.ico`)
    expect(favicon).toEqual({ status: 200, type: 'image/svg+xml' })
    expect(problems).toEqual([])
    await page.close()
  })

  it('shows the flow list without the flow editor, whose chunk comes when a flow opens, and works', async () => {
    const page = await context.newPage()
    // As in a browser without idle callbacks (Safari): the editor's chunk is then not fetched
    // ahead but when a flow opens, which this test is about.
    await page.addInitScript('delete window.requestIdleCallback')
    const problems = watchProblems(page)
    const scripts = watchScripts(page)
    await page.goto(`${origin}/`)
    expect(await page.evaluate(() => 'requestIdleCallback' in globalThis)).toBe(false)
    const name = page.getByRole('textbox', { name: 'New flow name' })
    await expect.poll(() => name.count()).toBe(1)
    await expect.poll(() => page.getByRole('region', { name: 'Your flows' }).count()).toBe(1)
    await page.waitForLoadState('networkidle')
    const startScreen = scripts.length
    expect(startScreen).toBeGreaterThan(0)
    expect(await loadGraphLibrary(scripts)).toBe(false)

    await name.fill('Poppies, lazily')
    await page.getByRole('button', { name: 'Create' }).click()
    const toolbar = page.getByRole('toolbar', { name: 'Flow editor' })
    await expect.poll(() => toolbar.count()).toBe(1)
    expect(await loadGraphLibrary(scripts.slice(startScreen))).toBe(true)
    // The editor works: a node from the palette shows on the canvas, and the layout runs.
    await page.getByTestId('palette-item-Text').click()
    await expect.poll(() => page.locator('.react-flow__node').count()).toBe(1)
    await page.getByTestId('auto-layout').click()
    await expect
      .poll(() => page.getByTestId('save-state').textContent(), { timeout: 15_000 })
      .toBe('Saved')
    expect(problems).toEqual([])
    await page.close()
  })

  it('runs no injected inline script, remote script or inline handler: the CSP blocks them', async () => {
    const page = await context.newPage()
    await page.goto(`${origin}/`)
    await expect.poll(() => page.getByRole('navigation', { name: 'Sections' }).count()).toBe(1)
    // Page code as text: the test project has no DOM types, and the page is what runs it.
    const outcome = await page.evaluate<{
      inlineRan: boolean
      handlerRan: boolean
      remote: string
      violations: string[]
    }>(`(async () => {
      const violations = []
      document.addEventListener('securitypolicyviolation', (event) => {
        violations.push(event.effectiveDirective + ' ' + event.blockedURI)
      })
      const inline = document.createElement('script')
      inline.textContent = 'window.__inlineRan = true'
      document.body.append(inline)
      const remote = document.createElement('script')
      remote.src = 'https://cdn.example.com/evil.js'
      const remoteDone = new Promise((resolve) => {
        remote.onerror = () => { resolve('blocked') }
        remote.onload = () => { resolve('loaded') }
      })
      document.body.append(remote)
      const handler = document.createElement('img')
      handler.setAttribute('onerror', 'window.__handlerRan = true')
      handler.src = 'data:,not-an-image'
      document.body.append(handler)
      const remoteResult = await remoteDone
      // Violation reports are queued as tasks: let them arrive before reading.
      await new Promise((resolve) => setTimeout(resolve, 200))
      return {
        inlineRan: window.__inlineRan === true,
        handlerRan: window.__handlerRan === true,
        remote: remoteResult,
        violations,
      }
    })()`)
    expect(outcome.inlineRan).toBe(false)
    expect(outcome.handlerRan).toBe(false)
    expect(outcome.remote).toBe('blocked')
    expect(outcome.violations).toEqual(
      expect.arrayContaining([
        'script-src-elem inline',
        'script-src-elem https://cdn.example.com/evil.js',
        'script-src-attr inline',
      ]),
    )
    await page.close()
  })

  it('answers the channels through the bridge, with the same validation as the desktop app', async () => {
    const page = await context.newPage()
    await page.goto(`${origin}/`)
    const info = await page.evaluate(async () => {
      const { atelier } = globalThis as unknown as { atelier: AtelierApi }
      return atelier.app.getInfo()
    })
    expect(info).toMatchObject({ ok: true, value: { shell: 'web', backend: { kind: 'sandbox' } } })

    const bad = await page.evaluate(async () => {
      const { atelier } = globalThis as unknown as { atelier: AtelierApi }
      return atelier.app.openExternal({ url: 'file:///etc/passwd' })
    })
    expect(bad.ok).toBe(false)
    if (!bad.ok) {
      expect(bad.error.code).toBe('INVALID_ARGUMENT')
      expect(bad.error.issues?.[0]?.path).toBe('url')
    }

    // Too big for the bridge: answered at once in the page, never sent.
    const huge = await page.evaluate(async () => {
      const { atelier } = globalThis as unknown as { atelier: AtelierApi }
      return atelier.search.query({ text: 'x'.repeat(1_100_000) })
    })
    expect(huge).toMatchObject({ ok: false, error: { code: 'MESSAGE_TOO_LARGE' } })

    // Events: the page's own listener sees the sync it starts, from `syncing` to its end.
    const { states, answer } = await page.evaluate(async () => {
      const { atelier } = globalThis as unknown as { atelier: AtelierApi }
      const seen: string[] = []
      const off = atelier.on('sync.status', (status) => seen.push(status.state))
      const result = await atelier.sync.start()
      off()
      return { states: seen, answer: result }
    })
    expect(answer).toMatchObject({ ok: true, value: { state: 'idle' } })
    expect(states).toContain('syncing')
    expect(states.at(-1)).toBe('idle')
    await page.close()
  })

  it('refuses the bridge without the cookie or from another origin, and survives bad messages', async () => {
    const ws = origin.replace('http', 'ws')
    await expect(openBridge(origin, { origin })).rejects.toThrow('refused with 403')
    await expect(openBridge(origin, { cookie, origin: 'http://attacker.example' })).rejects.toThrow(
      'refused with 403',
    )

    const socket = await openBridge(origin, { cookie, origin })
    socket.send('{ not json')
    expect(await nextAnswer(socket)).toMatchObject({
      id: null,
      result: { ok: false, error: { code: 'BAD_MESSAGE' } },
    })
    socket.send(JSON.stringify({ id: 7, channel: 'app.selfDestruct' }))
    expect(await nextAnswer(socket)).toMatchObject({
      id: 7,
      result: { ok: false, error: { code: 'UNKNOWN_CHANNEL' } },
    })
    socket.send(JSON.stringify({ id: 8, channel: 'search.query', args: { limit: 'all' } }))
    expect(await nextAnswer(socket)).toMatchObject({
      id: 8,
      result: { ok: false, error: { code: 'INVALID_ARGUMENT' } },
    })
    socket.send(JSON.stringify({ id: 9, channel: 'app.getInfo' }))
    expect(await nextAnswer(socket)).toMatchObject({ id: 9, result: { ok: true } })
    // Past the size limit, that socket is closed; the server goes on serving others.
    const closed = new Promise<number>((resolve) => socket.once('close', resolve))
    socket.send(JSON.stringify({ id: 10, channel: 'app.getInfo', args: 'x'.repeat(1_100_000) }))
    expect(await closed).toBe(1009)
    const again = await openBridge(origin, { cookie, origin })
    again.send(JSON.stringify({ id: 1, channel: 'app.getInfo' }))
    expect(await nextAnswer(again)).toMatchObject({ id: 1, result: { ok: true } })
    again.close()

    // A page of another site in the same browser: the cookie goes along (cookies ignore ports),
    // so the Origin check is what refuses it. The app's own page, the control, connects.
    const tryBridge = (page: Page) =>
      page.evaluate(
        (url) =>
          new Promise<string>((resolve) => {
            const Socket = (globalThis as unknown as { WebSocket: typeof WebSocket }).WebSocket
            const socket = new Socket(url)
            socket.onopen = () => {
              socket.close()
              resolve('open')
            }
            socket.onclose = () => {
              resolve('refused')
            }
          }),
        `${ws}/bridge`,
      )
    const own = await context.newPage()
    await own.goto(`${origin}/`)
    expect(await tryBridge(own)).toBe('open')
    const foreign = await context.newPage()
    const foreignOrigin = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`
    await foreign.goto(`${foreignOrigin}/`)
    expect(await tryBridge(foreign)).toBe('refused')
    const log = readFileSync(join(home, 'logs', 'atelier.log'), 'utf8')
    expect(log).toContain(foreignOrigin)
    expect(log).not.toContain(new URL(web.line).searchParams.get('token'))
    await Promise.all([own.close(), foreign.close()])
  })

  it('stops on SIGTERM with exit code 0; a second start serves the same build and prints JSON', async () => {
    const page = await context.newPage()
    await page.goto(`${origin}/`)
    await expect.poll(() => page.locator('.backend-badge').count()).toBe(1)
    expect(await stop(web, 'SIGTERM')).toBe(0)
    await expect(fetch(`${origin}/`)).rejects.toThrow()
    // The page's calls are answered, not left hanging, once Atelier is gone.
    const lost = await page.evaluate(async () => {
      const { atelier } = globalThis as unknown as { atelier: AtelierApi }
      return atelier.app.getInfo()
    })
    expect(lost).toMatchObject({ ok: false, error: { code: 'DISCONNECTED' } })
    await page.close()

    // The checkout's own build (out/renderer, which test/global-setup.ts keeps up to date) is
    // served as it is: neither start builds a renderer of its own under the home.
    const cache = join(home, RENDERER_CACHE_DIR)
    expect(existsSync(cache)).toBe(false)
    const second = await startWeb(['--port', '0', '--home', home, '--json'])
    const { url } = JSON.parse(second.line) as { url: string }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/)
    expect(url).not.toBe(web.line)
    expect(existsSync(cache)).toBe(false)
    expect(await stop(second, 'SIGINT')).toBe(0)

    const taken = (elsewhere.address() as AddressInfo).port
    const busy = await runAtelier(['web', '--port', String(taken), '--home', home])
    expect(busy.code).toBe(1)
    expect(busy.stderr).toContain(`Port ${taken} is taken by another program`)
    expect(busy.stdout).toBe('')

    // The link is out while the services start; a profile they cannot open still ends the
    // command with the profile's own message and exit code, and the databases closed.
    const unknown = await runAtelier(['web', '--profile', 'nope', '--home', home])
    expect(unknown.stderr).toContain('There is no profile named nope.')
    expect(unknown.code).toBe(2)

    const usage = await runAtelier(['web', '--port', 'eighty', '--home', home])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--port must be a whole number from 0 to 65535')
  }, 60_000)
})

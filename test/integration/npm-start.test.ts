import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailability, launchChromium } from '../helpers/chromium'

// Without Chromium (outside CI only: there it is an error), everything but the page is checked.
const { available: withChromium } = chromiumAvailability()
const repo = join(import.meta.dirname, '..', '..')

const NOTICE =
  /^The desktop window is not available here \(the Electron runtime could not be downloaded[^\n]*\); opening Atelier in your browser instead\.$/m
const LINK = /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/m

/**
 * A fresh copy of the project, as a clone has it: the tracked files and the untracked ones git
 * does not ignore (so no `out/` build and no renderer cache). A real clone would need `npm ci`,
 * which takes minutes and the network; its packages are the repository's instead. Each entry of
 * `node_modules` is a link to the repository's, except `electron`, which is copied without its
 * `dist/` and `path.txt`: the copy has no runtime even where the repository has one, and a
 * download that went wrong could only write into the copy.
 */
function freshCopy(into: string): void {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: repo,
    encoding: 'utf8',
  })
  for (const file of files.split('\0')) {
    // Listed but deleted in the working tree: a clone of this state would not have it either.
    if (file === '' || !existsSync(join(repo, file))) continue
    mkdirSync(dirname(join(into, file)), { recursive: true })
    cpSync(join(repo, file), join(into, file))
  }
  const modules = join(repo, 'node_modules')
  mkdirSync(join(into, 'node_modules'))
  for (const entry of readdirSync(modules)) {
    if (entry === 'electron') continue
    symlinkSync(join(modules, entry), join(into, 'node_modules', entry))
  }
  const electron = join(modules, 'electron')
  cpSync(electron, join(into, 'node_modules', 'electron'), {
    recursive: true,
    filter: (path) => path !== join(electron, 'dist') && path !== join(electron, 'path.txt'),
  })
}

/** A port nothing listens on: taken from the system, then let go. Connecting is refused at once. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => {
        resolve(port)
      })
    })
  })
}

interface Started {
  child: ChildProcessWithoutNullStreams
  stdout: () => string
  stderr: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Resolves with the first match of `pattern` in stdout; rejects if the process ends first. */
  waitForStdout: (pattern: RegExp, timeoutMs: number) => Promise<string>
}

/** Every process group a test started: killed at the end, whatever failed before. */
const groups: number[] = []

/**
 * `npm start` in the copy, as npm runs it (`node scripts/start.mjs`, from the project's folder,
 * with the arguments after `--`). In a process group of its own, as a terminal gives it, so that
 * a Ctrl-C can be sent the way a terminal sends it: to the whole group.
 */
function npmStart(project: string, args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, [join(project, 'scripts', 'start.mjs'), ...args], {
    cwd: project,
    env,
    detached: true,
  })
  if (child.pid !== undefined) groups.push(child.pid)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve({ code, signal })
    })
  })
  const waitForStdout = (pattern: RegExp, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        finish()
        reject(new Error(`npm start printed no ${pattern} in ${timeoutMs} ms; stderr: ${stderr}`))
      }, timeoutMs)
      const check = () => {
        const found = pattern.exec(stdout)?.[0]
        if (found !== undefined) {
          finish()
          resolve(found)
        }
      }
      const ended = (code: number | null) => {
        finish()
        reject(new Error(`npm start ended (${code}) before printing ${pattern}; stderr: ${stderr}`))
      }
      const finish = () => {
        clearTimeout(timer)
        child.stdout.off('data', check)
        child.off('exit', ended)
      }
      child.stdout.on('data', check)
      child.once('exit', ended)
      check()
    })
  return { child, stdout: () => stdout, stderr: () => stderr, exited, waitForStdout }
}

/** How a process ended after a stop, bounded in time. */
async function endOf(started: Started, what: string): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`npm start did not end within 20 s of ${what}; stderr: ${started.stderr()}`))
    }, 20_000)
  })
  try {
    return (await Promise.race([started.exited, timeout])).code
  } finally {
    clearTimeout(timer)
  }
}

/** SQLite's files of an open database (`-wal`, `-shm`, `-journal`) anywhere in the home. */
function openDatabaseFiles(home: string): string[] {
  return readdirSync(home, { recursive: true, encoding: 'utf8' })
    .filter((path) => /\.(sqlite|db)-(wal|shm|journal)$/.test(path))
    .map((path) => path.split(sep).join('/'))
    .sort()
}

describe('`npm start` where the Electron runtime cannot be fetched', () => {
  let work: string
  let project: string
  let home: string
  let env: NodeJS.ProcessEnv
  let browser: Browser | undefined

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'atelier-npm-start-'))
    project = join(work, 'atelier')
    home = join(work, 'home')
    freshCopy(project)
    const port = await closedPort()
    // The environment of a user's shell, without what steers Electron's download elsewhere
    // (npm_config_electron_*, ELECTRON_*, a runtime of one's own) or this test run's own.
    env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !/electron/i.test(key) && !/^(VITEST|NODE_ENV$|ATELIER_)/.test(key),
      ),
    )
    Object.assign(env, {
      // Refused at once: the download fails the way it does offline, in a fraction of a second.
      ELECTRON_MIRROR: `http://127.0.0.1:${port}/`,
      // An empty cache: a runtime downloaded earlier on this machine is not found there either.
      electron_config_cache: join(work, 'electron-cache'),
      ELECTRON_GET_NO_PROGRESS: '1',
      // No browser window from a test; the test opens the link in its own Chromium.
      BROWSER: 'none',
      CI: 'true',
    })
  })

  afterAll(async () => {
    await browser?.close()
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL')
      } catch {
        // Already gone, as it should be.
      }
    }
    rmSync(work, { recursive: true, force: true })
  })

  it('says so in one line, serves the browser mode, and stops on Ctrl-C with its databases closed', async () => {
    // `npm start -- --home DIR`: the arguments go on to `atelier web`.
    const started = npmStart(project, ['--home', home], env)
    const chromium = withChromium
      ? launchChromium().then((launched) => (browser = launched))
      : undefined
    // A cold home builds the renderer first (several seconds), unless a prebuilt one is used.
    const link = await started.waitForStdout(LINK, 150_000)

    expect(started.stderr().match(new RegExp(NOTICE.source, 'gm'))).toHaveLength(1)
    expect(started.stderr()).toContain('Fetching the Electron runtime')
    // Nothing of Electron was downloaded, into the copy or anywhere else it looks.
    expect(existsSync(join(project, 'node_modules', 'electron', 'dist'))).toBe(false)
    // Stdout is the link alone: the one line scripts wait for.
    expect(started.stdout()).toBe(`${link}\n`)
    // BROWSER=none: no opener was started (here one would have said it could not open one).
    expect(started.stderr()).not.toContain('No browser was opened')

    const origin = new URL(link).origin
    const page = chromium ? await (await chromium).newPage() : undefined
    if (page) {
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(link)
      expect(page.url()).toBe(`${origin}/`)
      const nav = page.getByRole('navigation', { name: 'Sections' })
      await expect
        .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 })
        .toBe('Flows')
      // No profile in a new home: the local sandbox, as the desktop app would use.
      await expect.poll(() => nav.locator('.backend-badge').textContent()).toBe('Local sandbox')
      expect(errors).toEqual([])
    } else {
      // The link works: its token is traded for the session, and the app's page is served.
      const traded = await fetch(link, { redirect: 'manual' })
      expect(traded.status).toBe(303)
      const cookie = (traded.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
      const index = await fetch(`${origin}/`, { headers: { cookie } })
      expect(index.status).toBe(200)
      expect(await index.text()).toContain('<div id="root"')
    }

    // The databases are open now, in WAL mode: their -wal files exist while a connection is
    // open, and go only when the last one is closed (a process killed by a signal leaves them).
    // (The link is out while the services start: they may open them a moment after the page.)
    await expect
      .poll(() => openDatabaseFiles(home))
      .toEqual(expect.arrayContaining(['ledger.sqlite-wal', 'mirror.sqlite-wal']))

    // Ctrl-C in a terminal: SIGINT to the whole group, start.mjs and `atelier web` alike (and
    // start.mjs passes it on, so `atelier web` gets it twice).
    process.kill(-(started.child.pid ?? 0), 'SIGINT')
    expect(await endOf(started, 'SIGINT')).toBe(0)
    expect(openDatabaseFiles(home)).toEqual([])
    // And closed by the app, not only at the process's exit (better-sqlite3 closes what is left
    // open when a process exits normally): the core says so in the log as it closes.
    const log = readFileSync(join(home, 'logs', 'atelier.log'), 'utf8')
    expect(log).toMatch(/"component":"core","msg":"closed"/)
    await expect(fetch(`${origin}/`)).rejects.toThrow()
    expect(started.stdout()).toBe(`${link}\n`)
    await page?.close()
  }, 180_000)

  it('goes straight to the browser mode with `--web`, and stops on SIGTERM', async () => {
    const started = npmStart(project, ['--web', '--home', home], env)
    const link = await started.waitForStdout(LINK, 150_000)
    expect(started.stderr()).not.toContain('Fetching the Electron runtime')
    expect(started.stderr()).not.toMatch(NOTICE)
    const traded = await fetch(link, { redirect: 'manual' })
    expect(traded.status).toBe(303)
    // The link is out while the services start: their databases are open a moment after.
    await expect
      .poll(() => openDatabaseFiles(home))
      .toEqual(expect.arrayContaining(['ledger.sqlite-wal', 'mirror.sqlite-wal']))

    // A service manager's stop: SIGTERM to start.mjs alone, which passes it on.
    started.child.kill('SIGTERM')
    expect(await endOf(started, 'SIGTERM')).toBe(0)
    expect(openDatabaseFiles(home)).toEqual([])
    const closings = readFileSync(join(home, 'logs', 'atelier.log'), 'utf8').match(
      /"component":"core","msg":"closed"/g,
    )
    // This run's closing, after the first test's.
    expect(closings).toHaveLength(2)
    expect(started.stdout()).toBe(`${link}\n`)
  }, 180_000)
})

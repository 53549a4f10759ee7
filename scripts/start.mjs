// `npm start`: always runs Atelier. In its desktop window when the Electron runtime is there (or
// can be fetched), starts, and has its build of the database module; otherwise in the browser
// mode (`atelier web --open`: the link is printed and opened in the system browser), after one
// line that says why. `npm start -- --web` asks for the browser mode straight away.
//
// The other arguments after `--` go to whichever runs: `atelier web` in the browser mode
// (`--home DIR`, `--port N`, `--profile NAME`, `--log-level LEVEL`), `electron-vite preview` for
// the window.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)

/** An installed package's folder, or nothing (a package that `npm install` did not put there). */
function packageDir(name) {
  try {
    return dirname(require.resolve(`${name}/package.json`))
  } catch {
    return undefined
  }
}
const electronDir = packageDir('electron')

/** A download not finished by then is given up: a black-holed network never answers. */
const FETCH_TIMEOUT_MS = 2 * 60_000
/** The Electron build of the database module: fetched, or compiled where it cannot be. */
const NATIVE_TIMEOUT_MS = 5 * 60_000
/** Loading the runtime's binary, with nothing to do, takes well under a second. */
const PROBE_TIMEOUT_MS = 30_000

const args = process.argv.slice(2)
const forceWeb = args.includes('--web')
const forwarded = args.filter((arg) => arg !== '--web')

/** The program running now, which a stop signal is passed on to. */
let current
/** The stop signal received, if any. */
let stopping
/** How a process stopped by a signal ends, by the shells' convention: 128 + its number. */
const STOPPED = { SIGINT: 130, SIGTERM: 143 }

// A Ctrl-C reaches this process and the program it runs (the terminal signals its whole group,
// and npm passes it on too); a SIGTERM may reach this process only. Either is passed on, and this
// process ends as the program does: the browser mode closes its databases first, and takes the
// same stop arriving twice as one.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping ??= signal
    if (current) current.kill(signal)
    else process.exit(STOPPED[signal])
  })
}

/**
 * Runs a program and answers how it ended; killed after `timeoutMs`. Stopped while it ran, and
 * not the last step, this process ends there: nothing more is started.
 */
function run(
  command,
  commandArgs,
  { timeoutMs, capture = false, env = process.env, last = false } = {},
) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, {
      cwd: root,
      env,
      stdio: capture ? ['ignore', 'inherit', 'pipe'] : 'inherit',
    })
    current = child
    let stderr = ''
    child.stderr?.on('data', (chunk) => (stderr += chunk.toString()))
    let timedOut = false
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true
            child.kill('SIGKILL')
          }, timeoutMs)
    let settled = false
    const done = (code, signal, error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      current = undefined
      if (stopping && !last) process.exit(STOPPED[stopping])
      resolve({ code, signal, error, timedOut, stderr })
    }
    child.once('error', (error) => done(null, null, error))
    child.once('exit', (code, signal) => done(code, signal, undefined))
  })
}

/** Where the executable sits in the runtime's folder, as Electron's own installer says. */
function platformPath() {
  const pathFile = join(electronDir, 'path.txt')
  if (existsSync(pathFile)) return readFileSync(pathFile, 'utf8').trim()
  if (process.platform === 'darwin') return 'Electron.app/Contents/MacOS/Electron'
  return process.platform === 'win32' ? 'electron.exe' : 'electron'
}

function electronBinary() {
  // Electron's own launcher honours this variable (a folder holding a runtime); so do we.
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH
  if (!override && !existsSync(join(electronDir, 'path.txt'))) return undefined
  const binary = join(override || join(electronDir, 'dist'), platformPath())
  return existsSync(binary) ? binary : undefined
}

/** The first line of the error a program printed, without its class: "fetch failed". */
function firstError(stderr) {
  const line = stderr
    .split('\n')
    .map((text) => text.trim())
    .find((text) => text !== '' && !text.startsWith('at '))
  if (line === undefined) return undefined
  const message = line.replace(/^[A-Za-z]*Error:\s*/, '')
  return message.length > 120 ? `${message.slice(0, 119)}…` : message
}

/** Fetches the runtime with Electron's own installer. Answers why it could not, else nothing. */
async function fetchElectron() {
  const minutes = FETCH_TIMEOUT_MS / 60_000
  console.error(
    `Fetching the Electron runtime (first start only; given up after ${minutes} minutes)…`,
  )
  const fetched = await run(process.execPath, [join(electronDir, 'install.js')], {
    timeoutMs: FETCH_TIMEOUT_MS,
    capture: true,
  })
  if (fetched.timedOut)
    return `the Electron runtime could not be downloaded within ${minutes} minutes`
  if (fetched.code === 0 && electronBinary() !== undefined) return undefined
  const why = fetched.error?.message ?? firstError(fetched.stderr)
  return `the Electron runtime could not be downloaded${why ? `: ${why}` : ''}`
}

/**
 * Why the runtime cannot open a window here, else nothing. What fails at once: a binary that
 * does not load (missing system libraries, another architecture) and, on Linux and the BSDs,
 * no display to show a window on.
 */
async function electronCannotStart(binary) {
  const probe = await run(binary, ['-e', 'process.exit(0)'], {
    timeoutMs: PROBE_TIMEOUT_MS,
    capture: true,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  })
  if (probe.code !== 0) {
    const why = probe.timedOut
      ? `it did not answer within ${PROBE_TIMEOUT_MS / 1000} s`
      : (probe.error?.message ?? firstError(probe.stderr) ?? `exit code ${probe.code}`)
    return `the Electron runtime does not start: ${why}`
  }
  const usesX11OrWayland = !['darwin', 'win32'].includes(process.platform)
  if (usesX11OrWayland && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return 'there is no display to open it on: neither DISPLAY nor WAYLAND_DISPLAY is set'
  }
  return undefined
}

/** The Electron build of the database module (scripts/electron-native.mjs, fetched once). */
async function nativeModuleMissing() {
  const script = join(root, 'scripts', 'electron-native.mjs')
  if (!existsSync(script)) {
    return 'scripts/electron-native.mjs, which prepares the database module for Electron, is missing'
  }
  // It says what went wrong in a line of its own; ours says what happens next.
  const native = await run(process.execPath, [script], { timeoutMs: NATIVE_TIMEOUT_MS })
  if (native.timedOut) {
    return `the database module for Electron was not ready within ${NATIVE_TIMEOUT_MS / 60_000} minutes`
  }
  return native.code === 0 ? undefined : 'the database module for Electron could not be prepared'
}

/** Why the desktop window cannot run here, else nothing (and the runtime is ready). */
async function desktopUnavailable() {
  if (electronDir === undefined || packageDir('electron-vite') === undefined) {
    return 'the electron and electron-vite packages are not installed (npm install)'
  }
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH
  let binary = electronBinary()
  if (binary === undefined && override) {
    return `there is no Electron runtime in ELECTRON_OVERRIDE_DIST_PATH=${override}`
  }
  if (binary === undefined) {
    const notFetched = await fetchElectron()
    if (notFetched !== undefined) return notFetched
    binary = electronBinary()
  }
  return (await electronCannotStart(binary)) ?? (await nativeModuleMissing())
}

/** Ends this process as the program it ran ended. */
function exitAs({ code, error }) {
  if (error) console.error(`npm start: ${error.message}`)
  process.exit(code ?? 1)
}

const why = forceWeb ? undefined : await desktopUnavailable()
if (forceWeb || why !== undefined) {
  if (why !== undefined) {
    console.error(
      `The desktop window is not available here (${why}); opening Atelier in your browser instead.`,
    )
  }
  // Prints the link on stdout and opens it in the system browser (not with BROWSER=none).
  const web = [join(root, 'bin', 'atelier.mjs'), 'web', '--open', ...forwarded]
  exitAs(await run(process.execPath, web, { last: true }))
} else {
  const cli = join(packageDir('electron-vite'), 'bin', 'electron-vite.js')
  exitAs(await run(process.execPath, [cli, 'preview', ...forwarded], { last: true }))
}

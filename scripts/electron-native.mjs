// `npm run native:electron`: get better-sqlite3 built for the Electron in node_modules, once, into
// a folder of its own (src-main/native/sqlite-binding.ts loads it from there under Electron).
// node_modules/better-sqlite3/build, the Node build that the `atelier` command and the tests
// load, is never touched. First the prebuilt binary (prebuild-install, as better-sqlite3's own
// install does, so npm_config_better_sqlite3_binary_host and ..._binary_host_mirror select a
// mirror), else a compile of a copy of the sources against Electron's headers (node-gyp).
//
// Already there: exits 0 and prints nothing. Failed: one line on stderr, exit 1.
//
// Options: --force fetches again over a binary that is there.
// Environment (besides the mirror variables above):
//   ATELIER_NATIVE_DIR            the folder instead of node_modules/.atelier-native (tests use
//                                 it; the app only ever looks in node_modules/.atelier-native)
//   ATELIER_ELECTRON_HEADERS_URL  Electron's headers for the compile, instead of
//                                 https://electronjs.org/headers
import { spawnSync } from 'node:child_process'
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(import.meta.dirname, '..')
const require = createRequire(join(root, 'package.json'))

const MODULE = 'better-sqlite3'
const BINARY = 'better_sqlite3.node'
const DEFAULT_HEADERS = 'https://electronjs.org/headers'
const FIX = 'npm run native:electron'

class Failure extends Error {}

function read(file) {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/** Electron's version and the NODE_MODULE_VERSION it loads, from node_modules/electron. */
function electronFacts() {
  let dir
  try {
    dir = dirname(require.resolve('electron/package.json'))
  } catch {
    throw new Failure('Electron is not installed in node_modules; run `npm install` first.')
  }
  const version = JSON.parse(read(join(dir, 'package.json')) ?? '{}').version
  let abi = read(join(dir, 'abi_version'))?.trim()
  if (!abi) {
    try {
      abi = String(require('node-abi').getAbi(version, 'electron'))
    } catch {
      throw new Failure(
        `The NODE_MODULE_VERSION of Electron ${version} is unknown here (no node_modules/electron/abi_version); run \`npm install\` again.`,
      )
    }
  }
  return { version, abi }
}

/** The same place as electronSqliteBinary() in src-main/native/sqlite-binding.ts. */
function targetOf(nativeDir, sqlite, electron, platform, arch) {
  const folder = `v${sqlite.version}-electron-abi${electron.abi}-${platform}-${arch}`
  return join(nativeDir, MODULE, folder, BINARY)
}

/** The URL prebuild-install asks (its util.js), to name it when it fails. */
function prebuiltUrl(env, sqlite, electron, platform, arch) {
  if (env.npm_config_download) return env.npm_config_download
  const glibc = process.report.getReport().header.glibcVersionRuntime
  let libc = env.LIBC || env.npm_config_libc || (platform === 'linux' && !glibc ? 'musl' : '')
  if (platform !== 'linux' || libc === 'glibc') libc = ''
  const name = `${MODULE}-v${sqlite.version}-electron-v${electron.abi}-${platform}${libc}-${arch}.tar.gz`
  const prefix = `npm_config_${MODULE.replace(/[^a-zA-Z0-9]/g, '_')}_binary_host`
  const mirror = env[prefix] || env[`${prefix}_mirror`]
  const host = mirror || 'https://github.com/WiseLibs/better-sqlite3/releases/download'
  return `${host.replace(/\/$/, '')}/v${sqlite.version}/${name}`
}

/** Runs `node <script> ...args` in `cwd` with its output appended to `log`; true when it worked. */
function run(script, args, { cwd, env, log, timeout }) {
  const fd = openSync(log, 'a')
  try {
    const result = spawnSync(process.execPath, [script, ...args], {
      cwd,
      env,
      stdio: ['ignore', fd, fd],
      timeout,
      windowsHide: true,
    })
    return result.status === 0
  } finally {
    closeSync(fd)
  }
}

/** The first (or the last) text that `pattern` captures in the lines of `text`. */
function match(text, pattern, which = 'last') {
  let found
  for (const line of text.split(/\r?\n/)) {
    const hit = pattern.exec(line)?.[1]?.trim()
    if (hit) {
      found = hit
      if (which === 'first') break
    }
  }
  return found
}

/**
 * `{ built }` when the binary may be Electron's: an addon that is not N-API exports its entry
 * point under its ABI (`node_register_module_v<ABI>`, NODE_MODULE_INIT), so a binary naming only
 * other ABIs is for another runtime (a mirror's wrong file, a compile against Node's headers).
 */
function checked(built, abi) {
  const bytes = readFileSync(built)
  if (bytes.length === 0) return { reason: 'the binary it gave is empty' }
  const named = new Set(bytes.toString('latin1').match(/node_register_module_v\d+/g) ?? [])
  if (named.size === 0 || named.has(`node_register_module_v${abi}`)) return { built }
  const abis = [...named].map((name) => name.slice('node_register_module_v'.length)).join(', ')
  return { reason: `the binary it gave is built for NODE_MODULE_VERSION ${abis}, not ${abi}` }
}

function prebuilt({ staging, sqlite, electron, platform, arch, env, log }) {
  const dir = join(staging, 'prebuilt')
  mkdirSync(dir)
  cpSync(join(sqlite.dir, 'package.json'), join(dir, 'package.json'))
  const bin = createRequire(join(sqlite.dir, 'package.json')).resolve('prebuild-install/bin.js')
  const args = ['--runtime', 'electron', '--target', electron.version]
  args.push('--arch', arch, '--platform', platform, '--path', dir, '--verbose')
  run(bin, args, { cwd: dir, env, log, timeout: 5 * 60_000 })
  const built = join(dir, 'build', 'Release', BINARY)
  if (existsSync(built)) return checked(built, electron.abi)
  const said = match(read(log) ?? '', /prebuild-install (?:warn|ERR!) install (.*)$/)
  return { reason: said ?? 'prebuild-install failed' }
}

function compiled({ staging, sqlite, electron, arch, env, log }) {
  const dir = join(staging, 'source')
  mkdirSync(dir)
  for (const part of ['package.json', 'binding.gyp', 'src', 'deps']) {
    cpSync(join(sqlite.dir, part), join(dir, part), { recursive: true })
  }
  let gyp
  try {
    gyp = require.resolve('node-gyp/bin/node-gyp.js')
  } catch {
    gyp = env.npm_config_node_gyp
  }
  if (!gyp) return { reason: 'node-gyp is not installed' }
  const headers = env.ATELIER_ELECTRON_HEADERS_URL || DEFAULT_HEADERS
  // node-gyp lets npm_config_* variables override its arguments: none may retarget the build
  // (npm's `nodedir`, set on machines without a network, would compile against Node's headers).
  const retarget = /^npm_(config|package_config_node_gyp)_(target|runtime|arch|dist_?url|nodedir)$/i
  const clean = Object.fromEntries(Object.entries(env).filter(([key]) => !retarget.test(key)))
  const args = ['rebuild', '--release', '--runtime=electron', `--target=${electron.version}`]
  args.push(`--arch=${arch}`, `--dist-url=${headers}`, '--jobs=max')
  run(gyp, args, { cwd: dir, env: clean, log, timeout: 30 * 60_000 })
  const built = join(dir, 'build', 'Release', BINARY)
  if (existsSync(built)) return checked(built, electron.abi)
  const text = read(log) ?? ''
  const fetchFailed =
    /\b(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNRESET|fetch failed|\b40[34]\b)/
  // The error's own message is the first line of its stack.
  const said =
    match(text, /gyp ERR! stack (?:\w*Error: )?(.*)$/, 'first') ??
    match(text, /gyp ERR! (?:configure|build) error(.*)$/)
  if (said !== undefined && fetchFailed.test(said)) {
    return { reason: `Electron's headers could not be fetched from ${headers}: ${said}` }
  }
  return { reason: said ? `node-gyp: ${said}` : 'node-gyp failed' }
}

/**
 * Makes sure the Electron build of better-sqlite3 is in place. Returns what was done:
 * 'present', 'prebuilt' or 'compiled'; throws an Error whose message is the one line to print.
 */
export function ensureElectronSqlite({
  env = process.env,
  force = false,
  say = (line) => console.log(line),
} = {}) {
  const electron = electronFacts()
  const sqliteDir = dirname(require.resolve(`${MODULE}/package.json`))
  const sqlite = {
    dir: sqliteDir,
    version: JSON.parse(read(join(sqliteDir, 'package.json'))).version,
  }
  const platform = process.platform
  const arch = process.arch
  const nativeDir = resolve(env.ATELIER_NATIVE_DIR || join(root, 'node_modules', '.atelier-native'))
  const target = targetOf(nativeDir, sqlite, electron, platform, arch)
  if (!force && existsSync(target)) return 'present'

  const base = join(nativeDir, MODULE)
  mkdirSync(base, { recursive: true })
  // Beside the target, on the same disk: the finished file arrives with one rename.
  const staging = mkdtempSync(join(base, '.staging-'))
  const log = join(staging, 'output.log')
  // What the tools said the last time they failed, kept for whoever wants the details.
  const kept = join(base, 'electron-native.log')
  const what = `${MODULE} ${sqlite.version} for Electron ${electron.version} (NODE_MODULE_VERSION ${electron.abi}, ${platform}-${arch})`
  try {
    const facts = { staging, sqlite, electron, platform, arch, env, log }
    let how = 'prebuilt'
    let result = prebuilt(facts)
    const prebuiltReason = result.reason
    if (result.built === undefined) {
      say(`No usable prebuilt ${what}; compiling it (a few minutes)...`)
      how = 'compiled'
      result = compiled(facts)
    }
    if (result.built === undefined) {
      const url = prebuiltUrl(env, sqlite, electron, platform, arch)
      renameSync(log, kept)
      throw new Failure(
        `Could not get ${what}: no usable prebuilt binary came from ${url} (${prebuiltReason}) and compiling it failed (${result.reason}). Connect to the internet, or set npm_config_better_sqlite3_binary_host to a mirror of better-sqlite3's releases, then run \`${FIX}\` again (details: ${kept}).`,
      )
    }
    mkdirSync(dirname(target), { recursive: true })
    renameSync(result.built, target)
    rmSync(kept, { force: true })
    say(`${what}: ${how}, in ${relative(process.cwd(), dirname(target)) || '.'}`)
    return how
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

function main() {
  try {
    ensureElectronSqlite({ force: process.argv.includes('--force') })
    return 0
  } catch (error) {
    const message =
      error instanceof Failure
        ? error.message
        : `Could not get ${MODULE} for Electron: ${error instanceof Error ? error.message : String(error)}. Run \`${FIX}\` again.`
    console.error(message.replace(/\s*\n\s*/g, ' '))
    return 1
  }
}

const invoked = process.argv[1] === undefined ? undefined : realpathSync(process.argv[1])
if (invoked === fileURLToPath(import.meta.url)) {
  process.exitCode = main()
}

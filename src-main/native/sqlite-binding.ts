import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { NativeModuleError, type NativeModuleErrorCode } from './errors'
import { findUp } from './find-up'

/**
 * Which better-sqlite3 binary a runtime loads.
 *
 * better-sqlite3 is not an N-API module: its binary is built for one NODE_MODULE_VERSION (ABI).
 * `npm install` builds node_modules/better-sqlite3 for the Node that ran it (ABI 115 on Node 20),
 * which is what the `atelier` command and the tests load. Electron loads another ABI (150 for
 * Electron 45), so a checkout keeps a second binary, built for Electron, in a folder of its own
 * beside the Node one (`npm run native:electron`, scripts/electron-native.mjs, fetches it):
 *
 *   node_modules/.atelier-native/better-sqlite3/v<version>-electron-abi<ABI>-<platform>-<arch>/better_sqlite3.node
 *
 * Inside node_modules, so that `npm ci` discards it with the Node build; named by better-sqlite3's
 * version, the ABI, the platform and the arch, so that an upgrade of either, or another machine
 * sharing the folder, never loads a stale one. A packaged app has none: its
 * node_modules/better-sqlite3 was rebuilt for Electron by `npm run dist`.
 */
export const ELECTRON_NATIVE_DIR = join('node_modules', '.atelier-native')

/** The module and the file name of its binary. */
const MODULE = 'better-sqlite3'
const BINARY = 'better_sqlite3.node'

/** The facts of the running process that decide the binary; each defaults to this process's. */
export interface RuntimeFacts {
  /** `process.versions`: `electron` is set only under Electron; `modules` is the ABI it loads. */
  versions?: RuntimeVersions
  /**
   * The checkout whose node_modules may hold the Electron build. By default the folders above
   * this module are searched (the sources, a build's chunks and a packaged app all work).
   */
  root?: string
  exists?: (path: string) => boolean
  platform?: string
  arch?: string
  /** better-sqlite3's version; by default, that of the package installed beside this module. */
  moduleVersion?: string
}

export interface RuntimeVersions {
  readonly node: string
  readonly modules: string
  readonly electron?: string | undefined
}

/** better-sqlite3's constructor option: a binary other than the default, or none. */
export interface SqliteBinding {
  nativeBinding?: string
}

/**
 * Where the Electron build of better-sqlite3 `version` for `abi` on `platform`-`arch` lives,
 * relative to the checkout (scripts/electron-native.mjs writes the same place).
 */
export function electronSqliteBinary(
  version: string,
  abi: string,
  platform: string,
  arch: string,
): string {
  const folder = `v${version}-electron-abi${abi}-${platform}-${arch}`
  return join(ELECTRON_NATIVE_DIR, MODULE, folder, BINARY)
}

function installedVersion(): string {
  const read = createRequire(import.meta.url)
  return (read(`${MODULE}/package.json`) as { version: string }).version
}

/**
 * The better-sqlite3 options that load the right binary for this runtime: under Node, none (the
 * default build is Node's); under Electron, the Electron build of the checkout when there is
 * one for this very ABI, platform and arch, else none (a packaged app's default build is
 * Electron's). Never reads anything but the one file's existence.
 */
export function sqliteBinding(facts: RuntimeFacts = {}): SqliteBinding {
  const versions = facts.versions ?? process.versions
  if (versions.electron === undefined) return {}
  const exists = facts.exists ?? existsSync
  const relative = electronSqliteBinary(
    facts.moduleVersion ?? installedVersion(),
    versions.modules,
    facts.platform ?? process.platform,
    facts.arch ?? process.arch,
  )
  let found: string | undefined
  if (facts.root === undefined) {
    found = findUp(import.meta.dirname, relative, exists)
  } else {
    const candidate = join(facts.root, relative)
    found = exists(candidate) ? candidate : undefined
  }
  return found === undefined ? {} : { nativeBinding: found }
}

/** Node's words when a binary of another ABI is loaded (node_binding.cc; Electron's are the same). */
const MISMATCH =
  /using\s+NODE_MODULE_VERSION (\d+)\.\s+This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/
const MODULE_PATH = /The module '([^']+)'/

/**
 * The clear error for a failure to load better-sqlite3's binary, or undefined when `error` is
 * something else (an SQLite error, a missing folder), which the caller rethrows unchanged.
 * `binary` is the file that was asked for, when it was not the default one.
 */
export function sqliteLoadError(
  error: unknown,
  facts: { versions?: RuntimeVersions; binary?: string | undefined } = {},
): NativeModuleError | undefined {
  if (!(error instanceof Error)) return undefined
  const versions = facts.versions ?? process.versions
  const code = (error as NodeJS.ErrnoException).code
  const text = error.message
  const mismatch = MISMATCH.exec(text)
  let kind: NativeModuleErrorCode
  if (mismatch !== null) kind = 'NATIVE_MODULE_ABI_MISMATCH'
  else if (
    text.startsWith('Could not locate the bindings file') ||
    (code === 'MODULE_NOT_FOUND' &&
      (text.includes(BINARY) || (facts.binary !== undefined && text.includes(facts.binary))))
  )
    kind = 'NATIVE_MODULE_MISSING'
  else if (code === 'ERR_DLOPEN_FAILED') kind = 'NATIVE_MODULE_UNUSABLE'
  else return undefined

  const electron = versions.electron
  const runtime = electron === undefined ? `Node.js ${versions.node}` : `Electron ${electron}`
  const needs = Number(mismatch?.[2] ?? versions.modules)
  const builtFor = mismatch === null ? undefined : Number(mismatch[1])
  const binary = facts.binary ?? MODULE_PATH.exec(text)?.[1]
  // The Electron build that is there but fails is fetched again only when asked to be.
  const command =
    electron === undefined
      ? `npm rebuild ${MODULE}`
      : facts.binary === undefined
        ? 'npm run native:electron'
        : 'npm run native:electron -- --force'
  const at = binary === undefined ? '' : ` (${binary})`
  const problem =
    kind === 'NATIVE_MODULE_ABI_MISMATCH'
      ? `its native binary${at} was built for NODE_MODULE_VERSION ${builtFor ?? '?'}, but this runtime, ${runtime}, needs NODE_MODULE_VERSION ${needs}.`
      : kind === 'NATIVE_MODULE_MISSING'
        ? `its native binary${at} is missing; this runtime, ${runtime}, needs one built for NODE_MODULE_VERSION ${needs}.`
        : `its native binary${at} is not a library this runtime can load (${reason(text, binary)}); this runtime, ${runtime}, needs one built for NODE_MODULE_VERSION ${needs}.`
  return new NativeModuleError(
    kind,
    `${MODULE}, the SQLite driver, cannot load: ${problem} To fix it, run \`${command}\` in the Atelier folder, then try again.`,
    { module: MODULE, builtFor, needs, runtime, command, binary },
    { cause: error },
  )
}

/** The loader's own reason, on one line and without the path the message already names. */
function reason(text: string, binary: string | undefined): string {
  let line = text.split('\n', 1)[0] ?? ''
  if (binary !== undefined && line.startsWith(`${binary}: `)) line = line.slice(binary.length + 2)
  return line.length > 160 ? `${line.slice(0, 157)}...` : line
}

/**
 * `new Database(file, options)` with the binary this runtime loads (see `sqliteBinding`).
 * better-sqlite3 loads its binary at the first construction, so this is where a load failure
 * shows: it becomes a `NativeModuleError` that says what to run; any other error is unchanged.
 */
export function openSqlite(
  file: string,
  options: Database.Options = {},
  facts: RuntimeFacts = {},
): Database.Database {
  const merged: Database.Options = { ...options, ...sqliteBinding(facts) }
  try {
    return new Database(file, merged)
  } catch (error) {
    throw (
      sqliteLoadError(error, { versions: facts.versions, binary: merged.nativeBinding }) ?? error
    )
  }
}

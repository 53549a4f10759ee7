import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  electronSqliteBinary,
  findUp,
  isNativeModuleError,
  NativeModuleError,
  openSqlite,
  sqliteBinding,
  sqliteLoadError,
} from '../../src-main/native'

const require = createRequire(import.meta.url)
const sqliteDir = dirname(require.resolve('better-sqlite3/package.json'))
const sqliteVersion = (require('better-sqlite3/package.json') as { version: string }).version
const nodeBuild = join(sqliteDir, 'build', 'Release', 'better_sqlite3.node')

const tmp = mkdtempSync(join(tmpdir(), 'atelier-sqlite-binding-'))
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

let folders = 0
function folder(): string {
  const dir = join(tmp, `case-${++folders}`)
  mkdirSync(dir, { recursive: true })
  return dir
}

function write(file: string, bytes: string | Buffer): string {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, bytes)
  return file
}

/** What Electron 45.4.1 reports in process.versions. */
const electron = { ...process.versions, electron: '45.4.1', modules: '150' }

/** The Electron build's place under `root`, for the installed better-sqlite3. */
function electronBinary(root: string, abi = '150'): string {
  return join(root, electronSqliteBinary(sqliteVersion, abi, process.platform, process.arch))
}

/** Runs `open` and returns what it threw. */
function thrown(open: () => unknown): unknown {
  try {
    open()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

/**
 * A copy of the Node build of better-sqlite3 that Node takes for a build of another ABI, as an
 * Electron build is: its module record says NODE_MODULE_VERSION `to`, and its entry point is
 * named for `to` (`node_register_module_v<to>`), so the loader finds none for its own ABI. Only
 * for a 64-bit little-endian ELF with its symbol table (a build that was not stripped); else
 * undefined.
 */
function asBuiltFor(bytes: Buffer, from: string, to: string): Buffer | undefined {
  const elf64le = bytes.readUInt32BE(0) === 0x7f454c46 && bytes[4] === 2 && bytes[5] === 1
  if (!elf64le || from.length !== to.length) return undefined
  const table = Number(bytes.readBigUInt64LE(0x28))
  const size = bytes.readUInt16LE(0x3a)
  const sections = Array.from({ length: bytes.readUInt16LE(0x3c) }, (_, index) => {
    const at = table + index * size
    return {
      type: bytes.readUInt32LE(at + 4),
      address: Number(bytes.readBigUInt64LE(at + 16)),
      offset: Number(bytes.readBigUInt64LE(at + 24)),
      size: Number(bytes.readBigUInt64LE(at + 32)),
      link: bytes.readUInt32LE(at + 40),
      entrySize: Number(bytes.readBigUInt64LE(at + 56)),
    }
  })
  const symbols = sections.find((section) => section.type === 2) // SHT_SYMTAB
  const names = symbols === undefined ? undefined : sections[symbols.link]
  if (symbols === undefined || names === undefined || symbols.entrySize === 0) return undefined
  for (let at = symbols.offset; at < symbols.offset + symbols.size; at += symbols.entrySize) {
    const nameAt = names.offset + bytes.readUInt32LE(at)
    // The record NODE_MODULE_INIT() registers: `static node::node_module _module`.
    if (bytes.toString('latin1', nameAt, bytes.indexOf(0, nameAt)) !== '_ZL7_module') continue
    const section = sections[bytes.readUInt16LE(at + 6)]
    if (section === undefined) return undefined
    const record = section.offset + Number(bytes.readBigUInt64LE(at + 8)) - section.address
    if (bytes.readInt32LE(record) !== Number(from)) return undefined
    const copy = Buffer.from(bytes)
    copy.writeInt32LE(Number(to), record)
    const entry = Buffer.from(`node_register_module_v${from}`)
    const renamed = Buffer.from(`node_register_module_v${to}`)
    for (let i = copy.indexOf(entry); i !== -1; i = copy.indexOf(entry, i + 1))
      renamed.copy(copy, i)
    return copy
  }
  return undefined
}

const otherAbi = process.versions.modules === '150' ? '151' : '150'
const foreignBuild = asBuiltFor(readFileSync(nodeBuild), process.versions.modules, otherAbi)

describe('sqliteBinding', () => {
  it('under Electron, picks the Electron build of the checkout when it is there', () => {
    const root = folder()
    expect(sqliteBinding({ versions: electron, root })).toEqual({})
    const binary = write(electronBinary(root), 'the Electron build')
    expect(sqliteBinding({ versions: electron, root })).toEqual({ nativeBinding: binary })
    expect(binary).toContain(
      join(
        'node_modules',
        '.atelier-native',
        'better-sqlite3',
        `v${sqliteVersion}-electron-abi150-`,
      ),
    )
  })

  it('under Electron, ignores a build for another ABI, platform or better-sqlite3 version', () => {
    const root = folder()
    write(electronBinary(root, '146'), 'the build for Electron 39')
    write(
      join(root, electronSqliteBinary(sqliteVersion, '150', 'another-os', process.arch)),
      'another platform',
    )
    write(
      join(root, electronSqliteBinary('0.0.1', '150', process.platform, process.arch)),
      'an older better-sqlite3',
    )
    // A packaged app: its own node_modules/better-sqlite3 is the Electron build.
    expect(sqliteBinding({ versions: electron, root })).toEqual({})
  })

  it('under Node, is always the default build, even beside an Electron build', () => {
    const root = folder()
    write(electronBinary(root, process.versions.modules), 'an Electron build of the same ABI')
    write(electronBinary(root), 'the Electron build')
    expect(sqliteBinding({ versions: process.versions, root })).toEqual({})
    expect(sqliteBinding()).toEqual({})
  })

  it('asks nothing of the disk under Node, and only the one file under Electron', () => {
    const asked: string[] = []
    const exists = (path: string) => {
      asked.push(path)
      return false
    }
    sqliteBinding({ versions: process.versions, root: '/checkout', exists })
    expect(asked).toEqual([])
    sqliteBinding({ versions: electron, root: '/checkout', exists })
    expect(asked).toEqual([electronBinary('/checkout')])
  })
})

describe('sqliteBinding without a root', () => {
  it('looks in the folders above its own module, the checkout among them', () => {
    const checkout = join(import.meta.dirname, '..', '..')
    const wanted = electronBinary(checkout)
    const asked: string[] = []
    const exists = (path: string) => {
      asked.push(path)
      return path === wanted
    }
    expect(sqliteBinding({ versions: electron, exists })).toEqual({ nativeBinding: wanted })
    // src-main/native, then src-main, then the checkout: the nearest first.
    expect(asked).toEqual([
      electronBinary(join(checkout, 'src-main', 'native')),
      electronBinary(join(checkout, 'src-main')),
      wanted,
    ])
  })
})

describe('findUp', () => {
  it('finds the nearest of the folders above, at most five levels up', () => {
    const root = folder()
    write(join(root, 'resources', 'openapi.yaml'), 'openapi: 3.1.0')
    const deep = join(root, 'out', 'main', 'chunks')
    expect(findUp(deep, join('resources', 'openapi.yaml'))).toBe(
      join(root, 'resources', 'openapi.yaml'),
    )
    write(join(root, 'out', 'resources', 'openapi.yaml'), 'a nearer one')
    expect(findUp(deep, join('resources', 'openapi.yaml'))).toBe(
      join(root, 'out', 'resources', 'openapi.yaml'),
    )
    expect(findUp(join(root, 'a', 'b', 'c', 'd', 'e'), join('resources', 'openapi.yaml'))).toBe(
      undefined,
    )
    expect(findUp(deep, 'nothing-here')).toBe(undefined)
  })
})

describe('a better-sqlite3 that cannot load', () => {
  it('says, under Electron, which ABI the default build has, which one Electron needs, and what to run', () => {
    // Node's words (node_binding.cc), which Electron's loader shares.
    const binary = '/checkout/node_modules/better-sqlite3/build/Release/better_sqlite3.node'
    const failure = Object.assign(
      new Error(
        `The module '${binary}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 150. Please try re-compiling or re-installing\nthe module (for instance, using \`npm rebuild\` or \`npm install\`).`,
      ),
      { code: 'ERR_DLOPEN_FAILED' },
    )
    const error = sqliteLoadError(failure, { versions: electron })
    expect(error).toBeInstanceOf(NativeModuleError)
    expect(error?.code).toBe('NATIVE_MODULE_ABI_MISMATCH')
    expect(error?.facts).toEqual({
      module: 'better-sqlite3',
      builtFor: 115,
      needs: 150,
      runtime: 'Electron 45.4.1',
      command: 'npm run native:electron',
      binary,
    })
    expect(error?.message).toBe(
      `better-sqlite3, the SQLite driver, cannot load: its native binary (${binary}) was built for NODE_MODULE_VERSION 115, but this runtime, Electron 45.4.1, needs NODE_MODULE_VERSION 150. To fix it, run \`npm run native:electron\` in the Atelier folder, then try again.`,
    )
    expect(error?.cause).toBe(failure)
    // What a log or the dialog gets: the message and the facts, no stack, no cause.
    expect(JSON.stringify(error)).not.toMatch(/stack|cause|\bat /)
  })

  it.skipIf(foreignBuild === undefined)(
    'says which ABI a real build of another ABI has, which one this Node needs, and what to run',
    () => {
      const binary = write(join(folder(), 'better_sqlite3.node'), foreignBuild ?? '')
      const error = thrown(() => openSqlite(':memory:', { nativeBinding: binary }))
      expect(isNativeModuleError(error)).toBe(true)
      const clear = error as NativeModuleError
      expect(clear.code).toBe('NATIVE_MODULE_ABI_MISMATCH')
      expect((clear.cause as Error).message).toContain(`NODE_MODULE_VERSION ${otherAbi}.`)
      expect(clear.message).toContain('better-sqlite3')
      expect(clear.message).toContain(`built for NODE_MODULE_VERSION ${otherAbi}`)
      expect(clear.message).toContain(
        `this runtime, Node.js ${process.versions.node}, needs NODE_MODULE_VERSION ${process.versions.modules}`,
      )
      expect(clear.message).toContain('run `npm rebuild better-sqlite3`')
      expect(clear.message).not.toContain('\n')
    },
  )

  it('turns a real load of a file that is no library into the clear error', () => {
    const binary = write(join(folder(), 'better_sqlite3.node'), 'not a shared library')
    const error = thrown(() => openSqlite(':memory:', { nativeBinding: binary }))
    expect(error).toBeInstanceOf(NativeModuleError)
    const clear = error as NativeModuleError
    expect((clear.cause as NodeJS.ErrnoException).code).toBe('ERR_DLOPEN_FAILED')
    expect(clear.code).toBe('NATIVE_MODULE_UNUSABLE')
    expect(clear.message).toMatch(
      /^better-sqlite3, the SQLite driver, cannot load: its native binary \(.+\) is not a library this runtime can load \(.+\); this runtime, Node\.js .+, needs one built for NODE_MODULE_VERSION \d+\. To fix it, run `npm rebuild better-sqlite3` in the Atelier folder, then try again\.$/,
    )
    expect(clear.message).toContain(binary)
  })

  it('under Electron, loads the Electron build it picked, and says how to fetch it again when it is bad', () => {
    const root = folder()
    const binary = write(electronBinary(root), 'a damaged download')
    const error = thrown(() => openSqlite(':memory:', {}, { versions: electron, root }))
    expect(error).toBeInstanceOf(NativeModuleError)
    const clear = error as NativeModuleError
    expect(clear.facts.binary).toBe(binary)
    expect(clear.message).toContain(
      'this runtime, Electron 45.4.1, needs one built for NODE_MODULE_VERSION 150',
    )
    expect(clear.message).toContain('run `npm run native:electron -- --force`')
  })

  it('says so when the binary is missing', () => {
    const binary = join(folder(), 'better_sqlite3.node')
    const error = thrown(() => openSqlite(':memory:', { nativeBinding: binary }))
    expect(error).toBeInstanceOf(NativeModuleError)
    expect((error as NativeModuleError).code).toBe('NATIVE_MODULE_MISSING')
    expect((error as NativeModuleError).message).toContain(
      `its native binary (${binary}) is missing`,
    )
  })

  it('leaves every other error as it was', () => {
    const missingFolder = join(folder(), 'no-such-folder', 'data.sqlite')
    const error = thrown(() => openSqlite(missingFolder))
    expect(error).toBeInstanceOf(TypeError)
    expect((error as Error).message).toBe(
      'Cannot open database because the directory does not exist',
    )
    expect(sqliteLoadError(new Error('SQLITE_BUSY: database is locked'))).toBe(undefined)
    expect(sqliteLoadError('not an error')).toBe(undefined)
  })
})

describe('openSqlite under Node', () => {
  it('loads the Node build and opens a database', () => {
    const db = openSqlite(join(folder(), 'data.sqlite'))
    try {
      expect(db.prepare('SELECT sqlite_version() AS version').get()).toEqual({
        version: expect.stringMatching(/^3\.\d+\.\d+$/),
      })
    } finally {
      db.close()
    }
  })
})

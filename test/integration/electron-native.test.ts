import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { electronSqliteBinary } from '../../src-main/native'

const root = join(import.meta.dirname, '..', '..')
const script = join(root, 'scripts', 'electron-native.mjs')
const sqliteDir = join(root, 'node_modules', 'better-sqlite3')
const sqliteVersion = (
  JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')) as { version: string }
).version
const nodeBuild = join(sqliteDir, 'build', 'Release', 'better_sqlite3.node')
const electronDir = join(root, 'node_modules', 'electron')
const electronVersion = (
  JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')) as { version: string }
).version
const abi = readFileSync(join(electronDir, 'abi_version'), 'utf8').trim()

const { platform, arch } = process
const header = process.report.getReport() as { header: { glibcVersionRuntime?: string } }
const libc = platform === 'linux' && header.header.glibcVersionRuntime === undefined ? 'musl' : ''
/** The path prebuild-install asks a mirror for (its util.js: `{host}/v{version}/{name}`). */
const asset = `/v${sqliteVersion}/better-sqlite3-v${sqliteVersion}-electron-v${abi}-${platform}${libc}-${arch}.tar.gz`

const tmp = mkdtempSync(join(tmpdir(), 'atelier-electron-native-'))
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

/** One ustar record: a 512-byte header, then the body padded to 512 bytes. */
function tarEntry(name: string, body: Buffer | null): Buffer {
  const head = Buffer.alloc(512)
  const field = (value: string, at: number, length: number) => {
    head.write(value, at, length, 'latin1')
  }
  const octal = (value: number, length: number) =>
    `${value.toString(8).padStart(length - 1, '0')}\0`
  field(name, 0, 100)
  field(octal(body === null ? 0o755 : 0o644, 8), 100, 8)
  field(octal(0, 8), 108, 8)
  field(octal(0, 8), 116, 8)
  field(octal(body?.length ?? 0, 12), 124, 12)
  field(octal(Math.floor(Date.now() / 1000), 12), 136, 12)
  field(' '.repeat(8), 148, 8)
  field(body === null ? '5' : '0', 156, 1)
  field('ustar\u000000', 257, 8)
  let sum = 0
  for (const byte of head) sum += byte
  field(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8)
  if (body === null) return head
  const padding = Buffer.alloc((512 - (body.length % 512)) % 512)
  return Buffer.concat([head, body, padding])
}

/** A .tar.gz laid out as better-sqlite3's release assets are. */
function prebuiltTarball(binary: Buffer): Buffer {
  return gzipSync(
    Buffer.concat([
      tarEntry('build/', null),
      tarEntry('build/Release/', null),
      tarEntry('build/Release/better_sqlite3.node', binary),
      Buffer.alloc(1024),
    ]),
  )
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}

/** This process's environment without anything that would redirect the script's downloads. */
function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) =>
        !/^(https?_proxy|all_proxy|no_proxy)$/i.test(key) &&
        !/^npm_config_(better_sqlite3_|build_from_source|download|cache|devdir|libc)/i.test(key) &&
        !key.startsWith('ATELIER_'),
    ),
  )
  return {
    ...env,
    // prebuild-install caches downloads in npm's cache, node-gyp headers in its devdir.
    npm_config_cache: join(tmp, 'npm-cache'),
    npm_config_devdir: join(tmp, 'node-gyp'),
    ...extra,
  }
}

function runScript(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd: root, env })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({ code, stdout, stderr })
    })
  })
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve((server.address() as AddressInfo).port)
    })
  })
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve()
    })
  })
}

/**
 * `bytes` with its entry point named for `to` instead of `from` (`node_register_module_v<ABI>`),
 * which is what the script looks at to tell an Electron build from another runtime's.
 */
function entryRenamed(bytes: Buffer, from: string, to: string): Buffer {
  const copy = Buffer.from(bytes)
  const entry = Buffer.from(`node_register_module_v${from}`)
  const renamed = Buffer.from(`node_register_module_v${to}`)
  for (let i = copy.indexOf(entry); i !== -1; i = copy.indexOf(entry, i + 1)) renamed.copy(copy, i)
  return copy
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const closed = createServer()
  const port = await listen(closed)
  await close(closed)
  return port
}

describe('scripts/electron-native.mjs', () => {
  const nodeBytes = readFileSync(nodeBuild)
  // The Node build, standing in for the Electron build that the real mirror holds.
  const served = entryRenamed(nodeBytes, process.versions.modules, abi)
  const requests: string[] = []
  const mirror = createServer((request, response) => {
    requests.push(request.url ?? '')
    if (request.url === asset || request.url === `/wrong-abi${asset}`) {
      const binary = request.url === asset ? served : nodeBytes
      response.writeHead(200, { 'content-type': 'application/gzip' })
      response.end(prebuiltTarball(binary))
    } else {
      response.writeHead(404).end()
    }
  })
  let host = ''

  beforeAll(async () => {
    host = `http://127.0.0.1:${await listen(mirror)}`
  })
  afterAll(() => close(mirror))

  it('fetches the prebuilt Electron binary once, into its own folder, leaving the Node build alone', async () => {
    const nativeDir = join(tmp, 'fetched')
    const env = environment({
      ATELIER_NATIVE_DIR: nativeDir,
      npm_config_better_sqlite3_binary_host: host,
    })
    const nodeBuildBefore = sha256(nodeBuild)

    const first = await runScript(env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(requests).toEqual([asset])
    const target = join(
      nativeDir,
      electronSqliteBinary(sqliteVersion, abi, platform, arch).replace(
        join('node_modules', '.atelier-native'),
        '',
      ),
    )
    expect(readFileSync(target).equals(served)).toBe(true)
    expect(first.stdout.trim().split('\n')).toHaveLength(1)
    // Nothing left behind: no staging folder, no log; only the one binary's folder.
    expect(readdirSync(join(nativeDir, 'better-sqlite3'))).toEqual([
      `v${sqliteVersion}-electron-abi${abi}-${platform}-${arch}`,
    ])
    expect(readdirSync(dirname(target))).toEqual(['better_sqlite3.node'])
    expect(sha256(nodeBuild)).toBe(nodeBuildBefore)

    const second = await runScript(env)
    expect(second).toEqual({ code: 0, stdout: '', stderr: '' })
    expect(requests).toHaveLength(1)
    expect(sha256(nodeBuild)).toBe(nodeBuildBefore)
  })

  it('fails with one clear line when neither the binary nor the headers can be fetched', async () => {
    const nowhere = `http://127.0.0.1:${await closedPort()}`
    const nativeDir = join(tmp, 'offline')
    const nodeBuildBefore = sha256(nodeBuild)

    const result = await runScript(
      environment({
        ATELIER_NATIVE_DIR: nativeDir,
        npm_config_better_sqlite3_binary_host: nowhere,
        ATELIER_ELECTRON_HEADERS_URL: nowhere,
      }),
    )

    expect(result.code).toBe(1)
    const lines = result.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    const [line] = lines
    expect(line).toContain(`better-sqlite3 ${sqliteVersion} for Electron ${electronVersion}`)
    expect(line).toContain(`no usable prebuilt binary came from ${nowhere}${asset}`)
    expect(line).toContain(`Electron's headers could not be fetched from ${nowhere}`)
    expect(line).toContain('run `npm run native:electron` again')
    expect(line).not.toMatch(/\bat .+:\d+:\d+/)
    expect(existsSync(join(nativeDir, 'better-sqlite3', 'electron-native.log'))).toBe(true)
    expect(readdirSync(join(nativeDir, 'better-sqlite3'))).toEqual(['electron-native.log'])
    expect(sha256(nodeBuild)).toBe(nodeBuildBefore)
  })

  it('refuses a prebuilt binary of another ABI', async () => {
    const nativeDir = join(tmp, 'wrong-abi')
    const result = await runScript(
      environment({
        ATELIER_NATIVE_DIR: nativeDir,
        npm_config_better_sqlite3_binary_host: `${host}/wrong-abi`,
        ATELIER_ELECTRON_HEADERS_URL: `http://127.0.0.1:${await closedPort()}`,
      }),
    )
    expect(result.code).toBe(1)
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(
      `(the binary it gave is built for NODE_MODULE_VERSION ${process.versions.modules}, not ${abi})`,
    )
    expect(readdirSync(join(nativeDir, 'better-sqlite3'))).toEqual(['electron-native.log'])
  })
})

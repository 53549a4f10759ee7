// `npm run dist [-- --linux | --mac | --win]`: installers for this platform (or the one named)
// with electron-builder: AppImage and deb, dmg, nsis.
//
// The app is staged in dist/.stage/app (the built `out/`, package.json and the production
// dependencies from the lockfile, install scripts off), and electron-builder packs that copy:
// better-sqlite3 is rebuilt there for Electron's ABI while the project keeps its Node build.
// Native modules cannot be cross-compiled, so each platform's installers are built on it.
//
// Where the Electron runtime or its headers cannot be downloaded, it says so plainly.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { builderConfig } from './dist/config.mjs'

const root = join(import.meta.dirname, '..')
// A nodedir in npm's config points node-gyp at Node's own headers: better-sqlite3 would then be
// built for Node's ABI and fail to load in Electron. The rebuild must fetch Electron's.
delete process.env.npm_config_nodedir
delete process.env.NPM_CONFIG_NODEDIR
const stage = join(root, 'dist', '.stage', 'app')

function step(label, command, args, cwd = root) {
  console.log(`• ${label}`)
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' })
  if (result.status !== 0) {
    console.error(`\n${label} failed (exit ${result.status ?? result.signal}).`)
    process.exit(1)
  }
}

const NETWORK =
  /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|getaddrinfo|socket hang up|status code 40[34]/i

function explain(error) {
  const text = String(error?.stack ?? error)
  if (NETWORK.test(text)) {
    const electron = JSON.parse(
      spawnSync(
        process.execPath,
        ['-p', "JSON.stringify(require('electron/package.json').version)"],
        {
          cwd: root,
          encoding: 'utf8',
        },
      ).stdout,
    )
    console.error(`
The installers could not be built: the Electron ${electron} runtime or its headers (for
rebuilding better-sqlite3) could not be downloaded — this machine may be offline, or its network
may block github.com and electronjs.org.

What you can do:
  • Build on a machine with internet access; both are fetched once and cached.
  • Put electron-v${electron}-<platform>-<arch>.zip in electron-builder's cache
    (ELECTRON_BUILDER_CACHE, or ~/.cache/electron on Linux) and the Electron headers in
    ~/.electron-gyp, then run \`npm run dist\` again.

What failed: ${text.split('\n')[0]}`)
  } else if (/failed to rebuild/.test(text)) {
    console.error(`
The installers could not be built: better-sqlite3 could not be rebuilt for Electron's ABI.
The lines above say why; most often Electron's headers could not be downloaded from
electronjs.org (this machine may be offline), or a compiler is missing.

What you can do:
  • Build on a machine with internet access (the headers are fetched once, into ~/.electron-gyp).
  • Install the build tools node-gyp needs: python3, make and a C++ compiler (build-essential on
    Debian and Ubuntu, the Xcode command line tools on macOS, Visual Studio Build Tools on Windows).

What failed: ${text.split('\n')[0]}`)
  } else {
    console.error(`\nThe installers could not be built:\n${text}`)
  }
  process.exit(1)
}

const platforms = process.argv.slice(2).filter((arg) => ['--linux', '--mac', '--win'].includes(arg))

step('Building the app (electron-vite)', process.execPath, [
  join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'),
  'build',
])

rmSync(stage, { recursive: true, force: true })
mkdirSync(stage, { recursive: true })
cpSync(join(root, 'out'), join(stage, 'out'), { recursive: true })
cpSync(join(root, 'package.json'), join(stage, 'package.json'))
// The sandbox reads the service contract at run time (it validates requests against it).
cpSync(join(root, 'resources', 'openapi.yaml'), join(stage, 'resources', 'openapi.yaml'))
cpSync(join(root, 'package-lock.json'), join(stage, 'package-lock.json'))
step(
  'Staging the production dependencies',
  'npm',
  ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'],
  stage,
)

const { build, Platform } = await import('electron-builder')
const targets =
  platforms.length === 0
    ? undefined
    : platforms
        .map(
          (flag) =>
            ({ '--linux': Platform.LINUX, '--mac': Platform.MAC, '--win': Platform.WINDOWS })[flag],
        )
        .reduce((all, platform) => new Map([...all, ...platform.createTarget()]), new Map())
try {
  const files = await build({ projectDir: root, targets, config: builderConfig(stage) })
  console.log(
    `\nInstallers:\n${files
      .filter((f) => !f.endsWith('.blockmap'))
      .map((f) => `  ${f}`)
      .join('\n')}`,
  )
} catch (error) {
  explain(error)
}

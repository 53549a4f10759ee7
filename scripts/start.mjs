// `npm start`: build the app and open it in Electron. Where the Electron runtime cannot be
// fetched (an offline machine, a locked-down network), say so plainly instead of a stack trace.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const electronDir = dirname(require.resolve('electron/package.json'))

function electronBinary() {
  // Electron's own launcher honours this variable; so do we.
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) return process.env.ELECTRON_OVERRIDE_DIST_PATH
  const pathFile = join(electronDir, 'path.txt')
  if (!existsSync(pathFile)) return undefined
  const binary = join(electronDir, 'dist', readFileSync(pathFile, 'utf8').trim())
  return existsSync(binary) ? binary : undefined
}

function fetchElectron() {
  console.log('Fetching the Electron runtime (first start only)…')
  const result = spawnSync(process.execPath, [join(electronDir, 'install.js')], {
    stdio: ['ignore', 'inherit', 'pipe'],
    timeout: 5 * 60_000,
    encoding: 'utf8',
  })
  return result.status === 0 && electronBinary() !== undefined
}

if (!electronBinary() && !fetchElectron()) {
  console.error(`
Atelier could not start its desktop window: the Electron runtime is not installed and could
not be downloaded (this machine may be offline, or its network may block the download).

What you can do:
  • Connect to the internet and run \`npm start\` again; the runtime is fetched once.
  • Point ELECTRON_OVERRIDE_DIST_PATH at an Electron ${require('electron/package.json').version} you already have.
  • Use Atelier from the command line meanwhile: npm run atelier -- --help
`)
  process.exit(1)
}

const cli = join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js')
const run = spawnSync(process.execPath, [cli, 'preview', ...process.argv.slice(2)], {
  stdio: 'inherit',
})
process.exit(run.status ?? 1)

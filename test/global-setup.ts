import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { isFreshBuild } from '../scripts/build/freshness.mjs'

const root = join(import.meta.dirname, '..')

/**
 * Builds the app into `out/` once per test run, before any test file starts, when it does not
 * match the sources: the UI tests serve `out/renderer`, the shell tests boot `out/main` and
 * `out/preload`, and the `atelier` command runs from `out/main/cli.js`. One build per run, never
 * one per file (each file building its own copy raced the others and cost minutes).
 */
export default function setup(): void {
  if ((['main', 'preload', 'renderer'] as const).every((part) => isFreshBuild(root, part))) return
  const started = Date.now()
  const built = spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'],
    { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } },
  )
  if (built.status !== 0) {
    throw new Error(`npm run build failed before the tests:\n${built.stdout}\n${built.stderr}`)
  }
  console.log(`Built out/ for this test run in ${((Date.now() - started) / 1000).toFixed(1)} s.`)
}

import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { isFreshBuild } from '../../scripts/build/freshness.mjs'
import { findUp } from '../native'
import { RENDERER_BUILD_OPTIONS } from '../../src-renderer/build-options.mjs'

/** The checkout: two folders above this module in the sources, three above a build's chunk. */
const ROOT = dirname(
  findUp(import.meta.dirname, 'package.json') ??
    join(import.meta.dirname, '..', '..', 'package.json'),
)

/** Everything the bundle is made of: its sources, the shared types and the installed packages. */
const INPUTS = ['src-renderer', 'src-shared', 'package-lock.json']

/** Bumped when the build options below change, so that an older build is not reused. */
const BUILD_RECIPE = 'web-renderer-1'

/** Where the builds are kept, under the home: one folder per distinct source. */
export const RENDERER_CACHE_DIR = join('cache', 'web-renderer')

async function filesUnder(path: string): Promise<string[]> {
  const info = await stat(path).catch(() => null)
  if (info === null) return []
  if (info.isFile()) return [path]
  const entries = await readdir(path, { withFileTypes: true, recursive: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

/** A digest of every input file's path and bytes: the same sources give the same folder. */
async function sourceDigest(): Promise<string> {
  const hash = createHash('sha256').update(BUILD_RECIPE)
  const files = (await Promise.all(INPUTS.map((input) => filesUnder(join(ROOT, input)))))
    .flat()
    .map((file) => ({ file, name: relative(ROOT, file).split('\\').join('/') }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const { file, name } of files) {
    hash.update(`\0${name}\0`).update(await readFile(file))
  }
  return hash.digest('hex').slice(0, 24)
}

/**
 * The renderer bundle for the browser mode, in `<home>/cache/web-renderer/<digest>`: built with
 * Vite the first time (a few seconds) and reused while no input changed. A build goes into a
 * temp folder renamed into place, so that a second `atelier web` starting at the same time never
 * serves half a bundle; older builds are removed once the new one is in place.
 */
export async function ensureRendererBuild(home: string): Promise<string> {
  const cache = join(home, RENDERER_CACHE_DIR)
  const outDir = join(cache, await sourceDigest())
  if (!existsSync(join(outDir, 'index.html'))) {
    await mkdir(cache, { recursive: true, mode: 0o700 })
    const temp = `${outDir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
    try {
      // Loaded here: Vite is only needed for a build, and only by this command.
      const [{ build }, { default: react }] = await Promise.all([
        import('vite'),
        import('@vitejs/plugin-react'),
      ])
      await build({
        root: join(ROOT, 'src-renderer'),
        base: './',
        configFile: false,
        mode: 'production',
        // Warnings go to stderr; stdout carries only the URL.
        logLevel: 'warn',
        plugins: [react()],
        // The same options as the desktop app's build (electron.vite.config.ts, renderer).
        build: { ...RENDERER_BUILD_OPTIONS, outDir: temp, emptyOutDir: true },
      })
      await rename(temp, outDir).catch((error: unknown) => {
        // Another process put the same build in place first: its copy is as good as ours.
        if (!existsSync(join(outDir, 'index.html'))) throw error
      })
    } finally {
      await rm(temp, { recursive: true, force: true })
    }
  }
  for (const entry of await readdir(cache)) {
    const path = join(cache, entry)
    if (path !== outDir && !entry.includes('.tmp-')) {
      await rm(path, { recursive: true, force: true }).catch(() => undefined)
    }
  }
  return outDir
}

/**
 * The renderer the browser mode serves: `out/renderer`, as `npm run build` (run by `npm install`)
 * made it, while it matches the sources — nothing to read or build at start — else a build of
 * its own under the home (a checkout that was never built, or was edited since).
 */
export async function rendererBundle(home: string): Promise<string> {
  if (isFreshBuild(ROOT, 'renderer')) return join(ROOT, 'out', 'renderer')
  return ensureRendererBuild(home)
}

#!/usr/bin/env node
// The `atelier` command. It runs from the build in `out/` (made by `npm run build`, which
// `npm install` runs) while that build matches the sources: starting takes a fraction of what
// compiling the TypeScript at every start took. A checkout that was never built, or was edited
// since its build, runs from the sources through tsx, so it always does what the sources say.
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { isFreshBuild } from '../scripts/build/freshness.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

if (process.env.ATELIER_FROM_SOURCES !== '1' && isFreshBuild(root, 'main')) {
  await import(pathToFileURL(join(root, 'out', 'main', 'cli.js')).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('../src-main/cli/main.ts')
}

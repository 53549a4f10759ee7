// A Vite/Rollup plugin that records which of our files a build was made from, for
// scripts/build/freshness.mjs to tell whether `out/` still matches the sources.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { STAMP_DIR } from './freshness.mjs'

/** Files every build depends on besides the modules it bundles: the installed packages. */
const ALWAYS = ['package-lock.json', 'package.json']

export function buildStamp({ root, part }) {
  let startedAtMs = 0
  return {
    name: 'atelier-build-stamp',
    buildStart() {
      // The start, not the end: a file saved while the build ran makes the build stale.
      startedAtMs = Date.now()
    },
    writeBundle() {
      const inputs = new Set(ALWAYS)
      for (const id of this.getModuleIds()) {
        const file = id.split('?')[0]
        if (!file.startsWith(root + sep) || file.includes(`${sep}node_modules${sep}`)) continue
        inputs.add(relative(root, file).split(sep).join('/'))
      }
      const dir = join(root, STAMP_DIR)
      mkdirSync(dir, { recursive: true })
      writeFileSync(
        join(dir, `${part}.json`),
        `${JSON.stringify({ startedAtMs, inputs: [...inputs].sort() }, null, 1)}\n`,
      )
    },
  }
}

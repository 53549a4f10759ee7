// Whether a build in `out/` still matches the sources it was made from. Plain JavaScript, so the
// `atelier` command can ask before anything is compiled: a fresh build starts in a fraction of
// the time the sources take through tsx.
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Where the build keeps, per part, the files it was made from (written by the build). */
export const STAMP_DIR = join('out', '.stamps')

/**
 * True when `<root>/out/.stamps/<part>.json` exists and no file it lists changed, went missing or
 * is newer than the build's start. A checkout that was never built, or edited since, is not
 * fresh; the caller then runs from the sources.
 */
export function isFreshBuild(root, part) {
  let stamp
  try {
    stamp = JSON.parse(readFileSync(join(root, STAMP_DIR, `${part}.json`), 'utf8'))
  } catch {
    return false
  }
  if (typeof stamp?.startedAtMs !== 'number' || !Array.isArray(stamp.inputs)) return false
  for (const input of stamp.inputs) {
    try {
      if (statSync(join(root, input)).mtimeMs > stamp.startedAtMs) return false
    } catch {
      return false
    }
  }
  return true
}

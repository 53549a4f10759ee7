import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * How far above the starting folder a look-up goes: far enough for the sources
 * (`src-main/<service>`: two levels below the checkout), a build (`out/main/chunks`: three) and
 * the packaged app (`resources/app.asar/out/main/chunks`), not so far that it wanders into
 * unrelated folders of the machine.
 */
const LEVELS = 5

/**
 * `relative` (a path such as `resources/openapi.yaml`) under `from` or under one of the folders
 * above it, the nearest first, or undefined when none of them holds it. For modules that must
 * find a file of the checkout or of the packaged app from wherever the bundler put their code
 * (`import.meta.dirname` differs between the sources and a bundle's chunks).
 */
export function findUp(
  from: string,
  relative: string,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  let dir = from
  for (let level = 0; level < LEVELS; level++) {
    const candidate = join(dir, relative)
    if (exists(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
  return undefined
}

import picomatch from 'picomatch'
import { UploadScanError } from './errors'

type Matcher = (relativePath: string) => boolean

/**
 * Case-insensitive, because camera and phone files come as `IMG_0001.JPG` as often as `.jpg`.
 * `windows: false`: relative paths always use '/', on every OS.
 */
const GLOB_OPTIONS: picomatch.PicomatchOptions = { nocase: true, windows: false }

function compile(patterns: readonly string[], option: 'include' | 'exclude'): Matcher | null {
  if (patterns.length === 0) return null
  const matchers = patterns.map((pattern): Matcher => {
    let match: Matcher
    try {
      match = picomatch(pattern, GLOB_OPTIONS)
    } catch (error) {
      throw new UploadScanError(
        'INVALID_PATTERN',
        `The ${option} pattern ${JSON.stringify(pattern)} is not a usable glob (${(error as Error).message}). Write it like "*.png" or "raw/**".`,
        undefined,
        undefined,
        { cause: error },
      )
    }
    // picomatch's own `basename` option applies to every pattern, slashes or not, so patterns
    // without a slash are sent the last segment here instead.
    if (pattern.includes('/')) return match
    return (relativePath) => match(relativePath.slice(relativePath.lastIndexOf('/') + 1))
  })
  return (relativePath) => matchers.some((match) => match(relativePath))
}

export interface PathPatterns {
  /** True when an exclude pattern matches this file or folder (a folder is then not walked). */
  excludes(relativePath: string): boolean
  /** True when there are no include patterns or one matches this file. */
  includes(relativePath: string): boolean
}

export function pathPatterns(
  include: readonly string[] = [],
  exclude: readonly string[] = [],
): PathPatterns {
  const included = compile(include, 'include')
  const excluded = compile(exclude, 'exclude')
  return {
    excludes: (relativePath) => excluded?.(relativePath) ?? false,
    includes: (relativePath) => included?.(relativePath) ?? true,
  }
}

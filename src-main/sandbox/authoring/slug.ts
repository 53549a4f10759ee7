import { SandboxError, invalid } from '../errors'

/** Lower-case letters and digits in runs joined by single hyphens or underscores. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/

export const MAX_SLUG_LENGTH = 100

/** A slug made from a name, e.g. "Prompt → Image (v2)" becomes `prompt-image-v2`. */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    // Combining marks left by NFKD: "Café" becomes "cafe", not "caf-".
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/^-+|-+$/g, '')
  return slug === '' ? fallback : slug
}

/** Why `slug` is not usable, or null when it is. */
export function slugProblem(slug: string): string | null {
  if (slug.length > MAX_SLUG_LENGTH) return `is longer than ${MAX_SLUG_LENGTH} characters`
  if (!SLUG_PATTERN.test(slug)) {
    return 'must be lower-case letters and digits joined by single hyphens or underscores (e.g. prompt-to-image)'
  }
  return null
}

/**
 * The first of `base`, `base-2`, `base-3`, … that `taken` refuses, so that two flows named alike
 * both get a slug without the caller having to pick one.
 */
export function firstFreeSlug(base: string, taken: (slug: string) => boolean): string {
  if (!taken(base)) return base
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = `${base.slice(0, MAX_SLUG_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`
    if (!taken(candidate)) return candidate
  }
}

/**
 * The slug a record gets: the one asked for (422 when malformed, 409 `SLUG_TAKEN` when another
 * record of the organization has it), or, when none was asked for, a free one made from its name.
 */
export function chooseSlug(options: {
  asked: string | undefined
  name: string
  /** e.g. "flow": the fallback slug and the word used in messages. */
  what: string
  taken: (slug: string) => boolean
}): string {
  const { asked, name, what, taken } = options
  if (asked === undefined) return firstFreeSlug(slugify(name, what), taken)
  const problem = slugProblem(asked)
  if (problem) {
    throw invalid(`The slug ${problem}.`, [
      { field: 'slug', code: 'pattern', message: `slug ${problem}.` },
    ])
  }
  if (taken(asked)) {
    const message = `Another ${what} of this organization already has the slug ${JSON.stringify(asked)}; choose another slug, or leave it out to get one made from the name.`
    throw new SandboxError(409, 'SLUG_TAKEN', message, [{ field: 'slug', code: 'taken', message }])
  }
  return asked
}

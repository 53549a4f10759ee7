/**
 * Which port types feed one another, as the service decides it when a flow is saved.
 *
 * A twin of `typeConnection` in `src-shared/domain/flow.ts` (the client's rule), kept apart on
 * purpose: the sandbox stands in for a service we do not own, and if both sides shared one rule a
 * bug in it would be invisible to every test. They are checked as one by `test/unit/twins/`
 * (`type-families.test.ts`), which runs every pair of port types through both.
 */

/** Types that can feed one another: text-like, number-like, then each media type on its own. */
const TYPE_FAMILY: Record<string, string> = {
  text: 'text',
  string: 'text',
  enum: 'text',
  integer: 'number',
  number: 'number',
  seed: 'number',
  boolean: 'boolean',
  image: 'image',
  video: 'video',
}

export function typesConnect(from: string, to: string): boolean {
  return from === to || (TYPE_FAMILY[from] !== undefined && TYPE_FAMILY[from] === TYPE_FAMILY[to])
}

import { describe, expect, it } from 'vitest'
import { typesConnect as sandboxConnects } from '../../../src-main/sandbox/authoring/graph'
import { VARIABLE_TYPE_CODES } from '../../../src-main/sandbox/models'
import {
  KNOWN_VARIABLE_TYPES,
  typesConnect as clientConnects,
} from '../../../src-shared/domain/flow'

/**
 * The type-family twins, checked as one: which port types feed one another, as the client says
 * it (`src-shared/domain/flow.ts`: the editor draws the edge, the executor accepts it) and as the
 * sandbox says it (`src-main/sandbox/authoring/graph/type-family.ts`: the service saves the flow).
 * They are kept apart on purpose (the sandbox stands in for a service we do not own; one shared
 * rule would hide its own bugs from every test), so this table runs every pair through both and
 * through the rule as written here, a third time, by hand.
 */

/** The families, as the service documents them: a type feeds its own family only. */
const FAMILIES = [
  ['text', 'string', 'enum'],
  ['integer', 'number', 'seed'],
  ['boolean'],
  ['image'],
  ['video'],
]
const familyOf = (type: string) => FAMILIES.findIndex((family) => family.includes(type))
const expected = (from: string, to: string) =>
  from === to || (familyOf(from) !== -1 && familyOf(from) === familyOf(to))

/** Every code the service's catalog lists, every code the client knows, and codes neither does. */
const TYPES = [...new Set([...VARIABLE_TYPE_CODES, ...KNOWN_VARIABLE_TYPES, 'colour', 'audio', ''])]
const PAIRS = TYPES.flatMap((from) => TYPES.map((to) => [from, to] as const))

/**
 * List types (`T[]`, `T_list`) are the executor's own: the service's catalog has none, so the
 * sandbox refuses them as unknown codes before it asks whether they connect. Only the client lets
 * a single value into a list port (a one-item list) and a list into a list of a kindred type.
 * These differences are intended; each is listed so that a new one cannot slip in unseen.
 */
const LIST_PAIRS: readonly [from: string, to: string, client: boolean, sandbox: boolean][] = [
  ['image[]', 'image[]', true, true],
  ['image', 'image[]', true, false],
  ['image[]', 'image', false, false],
  ['text[]', 'string[]', true, false],
  ['text_list', 'text[]', true, false],
  ['integer', 'seed[]', true, false],
  ['image[]', 'video[]', false, false],
  ['boolean', 'text[]', false, false],
]

describe('type families: client and sandbox agree', () => {
  it('covers every variable type of the catalog and every type the client knows', () => {
    expect(TYPES).toEqual(expect.arrayContaining([...VARIABLE_TYPE_CODES, ...KNOWN_VARIABLE_TYPES]))
    expect(PAIRS.length).toBe(TYPES.length ** 2)
  })

  it.each(PAIRS)('%j → %j', (from, to) => {
    const want = expected(from, to)
    expect({ client: clientConnects(from, to), sandbox: sandboxConnects(from, to) }).toEqual({
      client: want,
      sandbox: want,
    })
  })

  it.each(LIST_PAIRS)('list types, the client only: %j → %j', (from, to, client, sandbox) => {
    expect({ client: clientConnects(from, to), sandbox: sandboxConnects(from, to) }).toEqual({
      client,
      sandbox,
    })
  })
})

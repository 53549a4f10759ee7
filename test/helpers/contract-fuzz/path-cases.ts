import fc from 'fast-check'
import { caseOf, type CaseKind, type Frame, type FuzzWorld } from './fuzz-case'
import type { FuzzOperation, FuzzParameter } from './operations'
import { isUuidSchema, recase } from './uuid-spelling'

/** Changes of one character that turn a well-formed id into a malformed one, or not. */
function nearMisses(value: string): fc.Arbitrary<string> {
  return fc
    .tuple(fc.nat(), fc.constantFrom('g', 'z', '-', '_', ' ', '%', '.', 'é', '{', '0'))
    .chain(([index, char]) => {
      const at = value.length === 0 ? 0 : index % value.length
      return fc.constantFrom(
        value.slice(0, at) + char + value.slice(at + 1),
        value.slice(0, at) + value.slice(at + 1),
        value.slice(0, at) + char + value.slice(at),
        `{${value}}`,
        value.replaceAll('-', ''),
        `${value}${char}`,
      )
    })
}

/**
 * Path defects: a value the parameter's schema refuses (malformed), and a well-formed value that
 * names nothing (unknown). The other path values stay those of existing records.
 */
export function pathCaseKinds(
  operation: FuzzOperation,
  world: FuzzWorld,
  frames: fc.Arbitrary<Frame>,
): CaseKind[] {
  const { schemas } = world
  const parameters = operation.parameters.filter((p) => p.in === 'path')
  if (parameters.length === 0) return []
  const existing = world.pathValues(operation)
  const routable = (value: string) =>
    value !== '' && value !== '.' && value !== '..' && !world.staticSegments.has(value)

  const malformedPool = (parameter: FuzzParameter) =>
    fc.oneof(
      fc.string({ minLength: 1, maxLength: 40 }),
      nearMisses(existing[parameter.name] ?? 'x'),
      fc.constantFrom('ANY', 'Any', 'null', 'undefined', '0', '-1', 'true', '%00', '\u0000', '*'),
      fc.uuid().map((uuid) => `${uuid}0`),
    )
  const isMalformed = (parameter: FuzzParameter) => (value: string) =>
    routable(value) && !schemas.parameterMayBeValid(parameter.schema, value)
  const malformed = (parameter: FuzzParameter) =>
    malformedPool(parameter).filter(isMalformed(parameter))

  const unknown = (parameter: FuzzParameter): fc.Arbitrary<string> => {
    if (isUuidSchema(schemas, parameter.schema)) {
      return fc
        .tuple(fc.uuid(), fc.array(fc.boolean(), { minLength: 1, maxLength: 36 }))
        .map(([uuid, mask]) => recase(uuid, mask))
        .filter(
          (value) =>
            !world.knownIds.has(value.toLowerCase()) &&
            schemas.parameterMayBeValid(parameter.schema, value),
        )
    }
    const taken = new Set(
      [...world.existingValues(operation, parameter.name)].map((v) => v.toLowerCase()),
    )
    return fc
      .oneof(
        fc.stringMatching(/^[a-z][a-z0-9_-]{0,20}$/),
        fc.string({ minLength: 1, maxLength: 20 }),
      )
      .filter(
        (value) =>
          routable(value) &&
          value.trim() === value &&
          !taken.has(value.toLowerCase()) &&
          schemas.parameterMayBeValid(parameter.schema, value),
      )
  }

  // A parameter whose schema admits every routable value (a free `code`) cannot be malformed.
  // (Decided on a fixed sample of the unfiltered values: a filter that never passes would spin.)
  const canBeMalformed = parameters.filter((parameter) =>
    fc.sample(malformedPool(parameter), { numRuns: 300, seed: 1 }).some(isMalformed(parameter)),
  )
  const kinds: CaseKind[] = []
  const withBody = operation.body !== undefined
  if (canBeMalformed.length > 0) {
    kinds.push({
      kind: 'malformed-path-value',
      cases: fc.tuple(frames, fc.constantFrom(...canBeMalformed)).chain(([frame, parameter]) =>
        malformed(parameter).map((value) =>
          caseOf(operation, frame, {
            kind: 'malformed-path-value',
            detail: `{${parameter.name}} is ${JSON.stringify(value)}`,
            pathValues: { ...frame.pathValues, [parameter.name]: value },
            // A malformed id may be refused as invalid or answered as not found.
            expected: { statuses: [400, 404, 422], field: parameter.name },
          }),
        ),
      ),
    })
  }
  kinds.push({
    kind: 'unknown-path-value',
    cases: fc.tuple(frames, fc.constantFrom(...parameters)).chain(([frame, parameter]) =>
      unknown(parameter).map((value) =>
        caseOf(operation, frame, {
          kind: 'unknown-path-value',
          detail: `{${parameter.name}} is ${JSON.stringify(value)}, which names nothing`,
          pathValues: { ...frame.pathValues, [parameter.name]: value },
          // With a body, the body's own references may be checked first (422).
          expected: { statuses: withBody ? [404, 422] : [404] },
        }),
      ),
    ),
  })
  return kinds
}

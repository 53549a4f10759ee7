import fc from 'fast-check'
import { caseOf, type CaseKind, type Frame, type FuzzWorld } from './fuzz-case'
import type { FuzzOperation } from './operations'

/** Header text fetch can send: visible ASCII, nothing a server would trim. */
const HEADER_TEXT = fc.oneof(
  fc.stringMatching(/^[!-~]{1,40}$/),
  fc.constantFrom('', 'x'.repeat(256), 'x'.repeat(300)),
  fc.integer({ min: 257, max: 2000 }).map((length) => 'k'.repeat(length)),
)

const TOKEN = fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/)

/**
 * Defects of the request as a whole: no or a wrong credential, an organization the key does
 * not belong to, a key without the operation's scope, a header value outside its schema, and a
 * request line over the size the contract allows.
 */
export function requestCaseKinds(
  operation: FuzzOperation,
  world: FuzzWorld,
  frames: fc.Arbitrary<Frame>,
): CaseKind[] {
  const { schemas } = world
  const kinds: CaseKind[] = []
  const without = (headers: Record<string, string>, name: string) => {
    const copy = { ...headers }
    Reflect.deleteProperty(copy, name)
    return copy
  }

  if (operation.authenticated) {
    kinds.push({
      kind: 'no-credentials',
      maxRuns: 1,
      cases: frames.map((frame) =>
        caseOf(operation, frame, {
          kind: 'no-credentials',
          detail: 'no Authorization and no x-api-key',
          headers: without(frame.headers, 'Authorization'),
          expected: { statuses: [401] },
        }),
      ),
    })
    const admin = world.adminKey
    kinds.push({
      kind: 'wrong-credentials',
      cases: fc
        .tuple(
          frames,
          fc.oneof(
            TOKEN.map((token) => ['Authorization', `Bearer ${token}`]),
            TOKEN.map((token) => ['x-api-key', token]),
            TOKEN.map((token) => ['Authorization', `Basic ${token}`]),
            // The right key without the Bearer scheme is no bearer credential.
            fc.constant(['Authorization', admin]),
            fc.nat().map((index) => {
              const at = index % admin.length
              const changed = admin[at] === 'A' ? 'B' : 'A'
              return [
                'Authorization',
                `Bearer ${admin.slice(0, at)}${changed}${admin.slice(at + 1)}`,
              ]
            }),
          ),
        )
        // The right key, sent the right way, is no case.
        .filter(
          ([, [name, value]]) =>
            value !== `Bearer ${admin}` && !(name === 'x-api-key' && value === admin),
        )
        .map(([frame, [name, value]]) =>
          caseOf(operation, frame, {
            kind: 'wrong-credentials',
            detail: `${name}: ${value.slice(0, 40)}`,
            headers: { ...without(frame.headers, 'Authorization'), [name]: value },
            expected: { statuses: [401] },
          }),
        ),
    })
    const members = world.memberOrgIds
    kinds.push({
      kind: 'foreign-organization',
      cases: fc
        .tuple(
          frames,
          fc.oneof(fc.constant(world.foreignOrgId), fc.uuid(), fc.stringMatching(/^[!-~]{1,40}$/)),
        )
        // The schema allows null ("act in the key's own organization"): "null" is no case.
        .filter(([, value]) => !members.has(value.toLowerCase()) && value.toLowerCase() !== 'null')
        .map(([frame, value]) =>
          caseOf(operation, frame, {
            kind: 'foreign-organization',
            detail: `X-Organization-Id: ${value}, an organization the key does not belong to`,
            headers: { ...frame.headers, 'X-Organization-Id': value },
            expected: { statuses: [403] },
          }),
        ),
    })
  }

  const scope = operation.requiredScope
  const lacking = scope ? world.otherKeys.filter((key) => !key.scopes.has(scope)) : []
  if (scope && lacking.length > 0) {
    kinds.push({
      kind: 'missing-scope',
      maxRuns: lacking.length,
      cases: fc.tuple(frames, fc.constantFrom(...lacking)).map(([frame, key]) =>
        caseOf(operation, frame, {
          kind: 'missing-scope',
          detail: `a key without the scope ${scope}`,
          headers: { ...frame.headers, Authorization: `Bearer ${key.key}` },
          expected: { statuses: [403] },
        }),
      ),
    })
  }

  for (const parameter of operation.parameters.filter((p) => p.in === 'header')) {
    const refused = (text: string) => !schemas.parameterMayBeValid(parameter.schema, text)
    if (!fc.sample(HEADER_TEXT, { numRuns: 300, seed: 1 }).some(refused)) continue
    const kind = `bad-${parameter.name}`
    kinds.push({
      kind,
      cases: fc.tuple(frames, HEADER_TEXT.filter(refused)).map(([frame, text]) =>
        caseOf(operation, frame, {
          kind,
          detail: `${parameter.name}: ${JSON.stringify(text.slice(0, 40))} (${text.length} characters) is outside its schema`,
          headers: { ...frame.headers, [parameter.name]: text },
          expected: { statuses: [400, 422], field: parameter.name },
        }),
      ),
    })
  }

  kinds.push({
    kind: 'oversized-request-line',
    maxRuns: 2,
    cases: fc.tuple(frames, fc.integer({ min: 64 * 1024, max: 96 * 1024 })).map(([frame, size]) =>
      caseOf(operation, frame, {
        kind: 'oversized-request-line',
        detail: `a query string of ${size} characters`,
        query: [...frame.query, ['pad', 'a'.repeat(size)]],
        // The contract: a request line and headers too large answer 431 with the envelope.
        expected: { statuses: [431] },
      }),
    ),
  })
  return kinds
}

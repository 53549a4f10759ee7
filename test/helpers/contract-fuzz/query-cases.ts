import fc from 'fast-check'
import { parseFilter } from './filter-grammar'
import { caseOf, type CaseKind, type Frame, type FuzzWorld } from './fuzz-case'
import type { FuzzOperation, FuzzParameter } from './operations'
import type { FieldType } from './schemas'

/** Text a query parameter might be given by mistake: numbers, words, near-misses of the forms. */
const PARAMETER_TEXT = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer({ min: -100_000, max: 100_000 }).map(String),
  fc.double({ noNaN: true }).map(String),
  fc.stringMatching(/^[A-Za-z_:,.]{1,20}$/),
  fc.constantFrom('', ' ', 'abc', '-1', '0', '501', '1.5', '1e3', 'maybe', 'yes', 'Name:asc'),
  fc.constantFrom('created_at', 'created_at:up', 'created_at:ASC', 'a,,b', ',', 'nodes,bogus'),
)

const NAME = /^[a-z_][a-z0-9_]{0,15}$/
const WORD = /^[a-z]{1,12}$/
/** Words every reading of a value of that type refuses (a bare word is never a date or number). */
const NOT_A_VALUE = new Set(['null', 'true', 'false', 'infinity', 'nan', 'now', 'today'])
const COMPARISONS = ['=', '!=', '>', '>=', '<', '<=']
const A_DATE = '2026-01-01T00:00:00+00:00'

/** A well-formed value of a field's type, for the valid half of `a|b` lists. */
const sampleValue: Record<FieldType, string> = {
  'date-time': A_DATE,
  number: '1',
  boolean: 'true',
  string: '"x"',
}

/**
 * Query defects: a value a parameter's schema refuses, a required parameter left out, and for
 * lists the `q`, `sort_by`, `fields` and `pq` values the contract's prose rules out (a field
 * that is not one of the record's, a value that does not read as its field's type, a filter the
 * grammar does not allow, a cursor the service never gave).
 */
export function queryCaseKinds(
  operation: FuzzOperation,
  world: FuzzWorld,
  frames: fc.Arbitrary<Frame>,
): CaseKind[] {
  const { schemas } = world
  const kinds: CaseKind[] = []
  const query = operation.parameters.filter((p) => p.in === 'query')
  const named = (name: string) => query.some((p) => p.name === name)
  /** The frame's query with one parameter set (replacing a required one of the same name). */
  const withParameter = (frame: Frame, name: string, value: string): [string, string][] => [
    ...frame.query.filter(([key]) => key !== name),
    [name, value],
  ]
  const refused = (parameter: FuzzParameter) => (text: string) =>
    !schemas.parameterMayBeValid(parameter.schema, text)

  for (const parameter of query) {
    // Only parameters that some text breaks (a free string or `pq` takes anything).
    const sample = fc.sample(PARAMETER_TEXT, { numRuns: 300, seed: 1 })
    if (!sample.some(refused(parameter))) continue
    const kind = `bad-${parameter.name}`
    kinds.push({
      kind,
      cases: fc.tuple(frames, PARAMETER_TEXT.filter(refused(parameter))).map(([frame, text]) =>
        caseOf(operation, frame, {
          kind,
          detail: `${parameter.name}=${JSON.stringify(text)} is outside its schema`,
          query: withParameter(frame, parameter.name, text),
          expected: { statuses: [400, 422], field: parameter.name },
        }),
      ),
    })
  }

  const required = query.filter((p) => p.required)
  if (required.length > 0) {
    kinds.push({
      kind: 'missing-query-parameter',
      cases: fc.tuple(frames, fc.constantFrom(...required)).map(([frame, parameter]) =>
        caseOf(operation, frame, {
          kind: 'missing-query-parameter',
          detail: `the required ${parameter.name} is left out`,
          query: frame.query.filter(([key]) => key !== parameter.name),
          expected: { statuses: [400, 422], field: parameter.name },
        }),
      ),
    })
  }

  const item = operation.itemSchema
  if (!item) return kinds
  const scalar = schemas.scalarFields(item)
  const properties = schemas.propertyNames(item)
  const fields = [...scalar.keys()]
  const notScalar = fc.stringMatching(NAME).filter((name) => !scalar.has(name))
  const list = (name: string, kind: string, cases: fc.Arbitrary<[Frame, string, string]>) => {
    kinds.push({
      kind,
      cases: cases.map(([frame, value, detail]) =>
        caseOf(operation, frame, {
          kind,
          detail,
          query: withParameter(frame, name, value),
          // The contract: a malformed q or cursor is 400 BAD_REQUEST; a name the record does
          // not have may be 400 or 422.
          expected: {
            statuses: kind === 'filter-syntax' || kind === 'garbage-cursor' ? [400] : [400, 422],
            field: name,
          },
        }),
      ),
    })
  }

  if (named('q')) {
    list(
      'q',
      'filter-unknown-field',
      fc
        .tuple(frames, notScalar, fc.constantFrom(...COMPARISONS, '~'), fc.stringMatching(WORD))
        .map(([frame, field, op, value]) => [
          frame,
          `${field}${op}${value}`,
          `q filters on ${field}, which is not a scalar field of the record`,
        ]),
    )
    const typed = fields.filter((name) => scalar.get(name) !== 'string')
    if (typed.length > 0) {
      list(
        'q',
        'filter-value-of-wrong-type',
        fc
          .tuple(
            frames,
            fc.constantFrom(...typed),
            fc.stringMatching(WORD).filter((word) => !NOT_A_VALUE.has(word)),
            fc.nat(),
            fc.boolean(),
          )
          .map(([frame, field, word, index, inList]) => {
            const type = scalar.get(field) ?? 'string'
            const ops = type === 'boolean' ? ['=', '!='] : COMPARISONS
            const op = inList ? '=' : (ops[index % ops.length] ?? '=')
            const value = inList ? `${sampleValue[type]}|${word}` : word
            return [
              frame,
              `${field}${op}${value}`,
              `q compares ${field} (a ${type}) with ${JSON.stringify(word)}`,
            ]
          }),
      )
    }
    if (fields.length > 0) {
      const templates: ((field: string) => string)[] = [
        (f) => f,
        (f) => `${f}=`,
        (f) => `${f}="open`,
        (f) => `=${f}`,
        (f) => `${f.toUpperCase()}=x`,
        (f) => `${f}=x and`,
        (f) => `and ${f}=x`,
        (f) => `${f}=x and and ${f}=y`,
        (f) => `${f}=x or ${f}=y`,
        (f) => `${f}=x"y`,
        (f) => `(${f}=x)`,
        (f) => `${f}="a\\q"`,
        (f) => `${f}=>`,
        (f) => `${f} = x`,
        (f) => `${f}==`,
      ]
      list(
        'q',
        'filter-syntax',
        fc
          .tuple(frames, fc.constantFrom(...fields), fc.nat({ max: templates.length - 1 }))
          .map(([frame, field, index]): [Frame, string, string] => {
            const text = (templates[index] ?? ((f: string) => f))(field)
            return [frame, text, `q is ${JSON.stringify(text)}, which the grammar does not allow`]
          })
          .filter(([, text]) => parseFilter(text) === null),
      )
    }
  }
  if (named('sort_by')) {
    list(
      'sort_by',
      'sort-unknown-field',
      fc
        .tuple(
          frames,
          notScalar.filter((name) => /^[a-z_]+$/.test(name)),
          fc.constantFrom('asc', 'desc'),
        )
        .map(([frame, field, direction]) => [
          frame,
          `${field}:${direction}`,
          `sort_by names ${field}, which is not a scalar field of the record`,
        ]),
    )
  }
  if (named('fields')) {
    list(
      'fields',
      'projection-unknown-field',
      fc
        .tuple(
          frames,
          fc.stringMatching(/^[a-z_]{1,16}$/).filter((name) => !properties.has(name)),
          fc.subarray(
            [...properties].filter((name) => /^[a-z_]+$/.test(name)),
            { maxLength: 3 },
          ),
        )
        .map(([frame, unknown, known]) => [
          frame,
          [...known, unknown].join(','),
          `fields names ${unknown}, which the record does not have`,
        ]),
    )
  }
  if (named('pq')) {
    list(
      'pq',
      'garbage-cursor',
      fc
        .tuple(
          frames,
          fc.oneof(
            fc.stringMatching(/^[A-Za-z0-9_-]{8,64}$/),
            fc.string({ minLength: 1, maxLength: 40 }),
            fc
              .jsonValue({ maxDepth: 2 })
              .map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
          ),
        )
        .filter(([, text]) => text.trim() !== '')
        .map(([frame, text]) => [
          frame,
          text,
          `pq is ${JSON.stringify(text.slice(0, 60))}, never given out`,
        ]),
    )
  }
  return kinds
}

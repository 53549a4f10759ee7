import fc from 'fast-check'
import { caseOf, type CaseKind, type Frame, type FuzzWorld, type OutgoingBody } from './fuzz-case'
import type { FuzzOperation } from './operations'
import type { ContractSchemas, Json } from './schemas'

type Path = (string | number)[]

/** An object inside a body, with the schema the contract gives it there. */
interface Slot {
  path: Path
  schema: ObjectSchema
  /** Containers from the body's root down to this object, the root being 1. */
  depth: number
  value: Record<string, unknown>
}

interface ObjectSchema {
  properties: Record<string, Json>
  required: string[]
  /** Properties that one of the object's `oneOf` branches requires (exactly one of a, b). */
  branchRequired: string[]
  closed: boolean
  minProperties: number
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const typesOf = (schema: Json): string[] => ([] as unknown[]).concat(schema.type ?? []).map(String)

/** An object schema with its `allOf` parts merged and its branches' required names collected. */
function objectSchema(schemas: ContractSchemas, schema: unknown): ObjectSchema {
  const resolved = schemas.resolve(schema)
  const merged: ObjectSchema = {
    properties: {},
    required: [],
    branchRequired: [],
    closed: resolved.additionalProperties === false,
    minProperties: typeof resolved.minProperties === 'number' ? resolved.minProperties : 0,
  }
  for (const part of [resolved, ...((resolved.allOf as Json[] | undefined) ?? [])]) {
    const each = schemas.resolve(part)
    Object.assign(merged.properties, each.properties ?? {})
    merged.required.push(...((each.required as string[] | undefined) ?? []))
  }
  for (const branch of ((resolved.oneOf ?? resolved.anyOf) as Json[] | undefined) ?? []) {
    merged.branchRequired.push(
      ...((schemas.resolve(branch).required as string[] | undefined) ?? []),
    )
  }
  return merged
}

/** A free-form object: any keys (`metadata`, `input`, `workflow_json`, …). */
function isFreeForm(schemas: ContractSchemas, schema: unknown): boolean {
  const resolved = schemas.resolve(schema)
  return (
    typesOf(resolved).includes('object') &&
    Object.keys(resolved.properties ?? {}).length === 0 &&
    resolved.additionalProperties !== false
  )
}

/** A string with no format, pattern or list of values: only its length can be wrong. */
function isPlainString(schemas: ContractSchemas, schema: unknown): boolean {
  const resolved = schemas.resolve(schema)
  return (
    typesOf(resolved).includes('string') &&
    resolved.format === undefined &&
    resolved.pattern === undefined &&
    resolved.enum === undefined
  )
}

/** Every object of a body value, found by walking the value along its schema. */
function slotsOf(schemas: ContractSchemas, schema: unknown, value: unknown): Slot[] {
  const slots: Slot[] = []
  const visit = (at: unknown, where: unknown, path: Path, depth: number) => {
    const resolved = schemas.resolve(at)
    if (Array.isArray(where)) {
      where.forEach((item, index) => {
        visit(resolved.items, item, [...path, index], depth + 1)
      })
      return
    }
    if (!isObject(where) || isFreeForm(schemas, resolved)) return
    const object = objectSchema(schemas, resolved)
    slots.push({ path, schema: object, depth, value: where })
    for (const [key, item] of Object.entries(where)) {
      const property = object.properties[key]
      if (property) visit(property, item, [...path, key], depth + 1)
    }
  }
  visit(schema, value, [], 1)
  return slots
}

/** Whether any object reachable in the schema satisfies `test` (refs followed once each). */
function someObject(
  schemas: ContractSchemas,
  schema: unknown,
  test: (object: ObjectSchema) => boolean,
): boolean {
  const seen = new Set<Json>()
  const visit = (at: unknown): boolean => {
    const resolved = schemas.resolve(at)
    if (seen.has(resolved)) return false
    seen.add(resolved)
    if (resolved.items !== undefined && visit(resolved.items)) return true
    if (isFreeForm(schemas, resolved) || !typesOf(resolved).includes('object')) return false
    const object = objectSchema(schemas, resolved)
    return test(object) || Object.values(object.properties).some(visit)
  }
  return visit(schema)
}

const clone = (value: unknown): unknown => structuredClone(value)

function at(value: unknown, path: Path): Record<string, unknown> {
  let current = value
  for (const step of path) current = (current as Record<string | number, unknown>)[step]
  return current as Record<string, unknown>
}

/** Sets a key as an own property, even `__proto__`, as JSON.parse would. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}

const dotted = (path: Path, key?: string) =>
  [...path, ...(key === undefined ? [] : [key])].join('.') || '(body)'

/** A marker string put where raw JSON text goes in afterwards (a deep or huge value). */
const MARKER = '\u{1F9EA}fuzz-marker\u{1F9EA}'

function withRaw(value: unknown, raw: () => string): () => string {
  return () => JSON.stringify(value).replace(JSON.stringify(MARKER), raw)
}

/**
 * `containers` nested objects and arrays as JSON text, the outermost an object (a free-form
 * property is an object); `shape` picks objects only, arrays inside, or both in turn.
 */
function nestedText(containers: number, shape: 'objects' | 'arrays' | 'mixed'): string {
  const open: string[] = ['{"d":']
  const close: string[] = ['}']
  for (let level = 1; level < containers; level++) {
    const array = shape === 'arrays' || (shape === 'mixed' && level % 2 === 1)
    open.push(array ? '[' : '{"d":')
    close.push(array ? ']' : '}')
  }
  return `${open.join('')}0${close.reverse().join('')}`
}

/** Values that a lenient reader converts: the coercions issue 17 found, and plain JSON. */
const TYPE_BAIT = fc.oneof(
  fc.constantFrom<unknown>('', 'true', 'false', '1', '0', 'null', 'abc', 1, 0, 123, 1.5, true),
  fc.constantFrom<unknown>(false, null, [], ['a'], {}, { a: 1 }),
  fc.jsonValue({ maxDepth: 2 }),
)

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function typeAllowed(types: string[], value: unknown): boolean {
  const type = jsonTypeOf(value)
  return types.includes(type) || (type === 'integer' && types.includes('number'))
}

/** Right-typed values that break a property's other rules (length, pattern, range, items). */
function outOfRange(schemas: ContractSchemas, schema: Json): fc.Arbitrary<unknown> | undefined {
  const resolved = schemas.resolve(schema)
  const types = typesOf(resolved)
  const options: fc.Arbitrary<unknown>[] = []
  if (types.includes('string')) {
    const constrained =
      resolved.enum !== undefined ||
      resolved.pattern !== undefined ||
      resolved.format !== undefined ||
      typeof resolved.minLength === 'number' ||
      typeof resolved.maxLength === 'number'
    if (constrained) options.push(fc.string({ maxLength: 40 }), fc.constant(''))
    if (typeof resolved.maxLength === 'number') {
      const max = resolved.maxLength
      options.push(fc.integer({ min: 1, max: 8 }).map((extra) => 'x'.repeat(max + extra)))
    }
  }
  if (types.includes('integer') || types.includes('number')) {
    if (typeof resolved.minimum === 'number') {
      const min = resolved.minimum
      options.push(fc.integer({ min: 1, max: 1000 }).map((below) => min - below))
    }
    if (typeof resolved.maximum === 'number') {
      const max = resolved.maximum
      options.push(fc.integer({ min: 1, max: 1000 }).map((above) => max + above))
    }
  }
  if (types.includes('array')) {
    if (typeof resolved.minItems === 'number' && resolved.minItems > 0)
      options.push(fc.constant([]))
    if (resolved.uniqueItems === true) options.push(fc.constant([1, 1]), fc.constant(['a', 'a']))
    options.push(fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 1, maxLength: 3 }))
  }
  if (types.includes('object') && !isFreeForm(schemas, resolved)) {
    options.push(fc.constant({}), fc.dictionary(fc.string({ maxLength: 6 }), fc.integer()))
  }
  return options.length > 0 ? fc.oneof(...options) : undefined
}

interface Candidate {
  slot: Slot
  key: string
}

/** Picks one of a value's candidates by a generated index; null when there is none. */
function pick<T>(candidates: T[], index: number): T | null {
  return candidates.length === 0 ? null : (candidates[index % candidates.length] ?? null)
}

/**
 * The body defects of one operation, each made from a body that the contract's validator
 * accepts, changed in one way that the contract forbids (checked with the same validator where
 * the defect is the schema's: a mutation that happens to stay valid is dropped, never sent).
 */
export function bodyCaseKinds(
  operation: FuzzOperation,
  world: FuzzWorld,
  frames: fc.Arbitrary<Frame>,
): CaseKind[] {
  const body = operation.body
  if (!body) return []
  const { schemas } = world
  const { limits } = schemas
  const schema = body.schema
  const valid = (value: unknown) => schemas.bodyIsValid(schema, value)
  const rootTypes = typesOf(schemas.resolve(schema))
  const kinds: CaseKind[] = []
  const json = (value: unknown): OutgoingBody => ({
    type: 'bytes',
    build: () => JSON.stringify(value),
  })
  const schemaViolation = { statuses: [422] }

  if (rootTypes.length === 1 && rootTypes[0] === 'object') {
    kinds.push({
      kind: 'body-of-wrong-type',
      cases: fc
        .tuple(
          frames,
          fc.oneof(
            fc.constantFrom<unknown>(null, true, false, 0, 1, '', '{}', []),
            fc.jsonValue({ maxDepth: 2 }).filter((value) => !isObject(value)),
          ),
          fc.boolean(),
        )
        .map(([frame, other, wrap]) => {
          // Half the time the valid body itself, inside an array.
          const sent = wrap ? [frame.body] : other
          return { frame, sent }
        })
        .filter(({ sent }) => !valid(sent))
        .map(({ frame, sent }) =>
          caseOf(operation, frame, {
            kind: 'body-of-wrong-type',
            detail: `the body is a JSON ${jsonTypeOf(sent)}: ${JSON.stringify(sent).slice(0, 80)}`,
            body: json(sent),
            expected: schemaViolation,
          }),
        ),
    })
  }

  if (
    someObject(
      schemas,
      schema,
      (o) => o.required.length + o.branchRequired.length > 0 || o.minProperties > 0,
    )
  ) {
    kinds.push({
      kind: 'missing-required-field',
      cases: fc
        .tuple(frames, fc.nat())
        .map(([frame, index]) => {
          const candidates: (Candidate | { slot: Slot; key: null })[] = []
          for (const slot of slotsOf(schemas, schema, frame.body)) {
            for (const key of new Set([...slot.schema.required, ...slot.schema.branchRequired])) {
              if (Object.hasOwn(slot.value, key)) candidates.push({ slot, key })
            }
            if (slot.schema.minProperties > 0) candidates.push({ slot, key: null })
          }
          const chosen = pick(candidates, index)
          if (!chosen) return null
          const sent = clone(frame.body)
          const container = at(sent, chosen.slot.path)
          const keys = chosen.key === null ? Object.keys(container) : [chosen.key]
          for (const key of keys) Reflect.deleteProperty(container, key)
          const what =
            chosen.key === null
              ? `${dotted(chosen.slot.path)} has none of its fields`
              : `${dotted(chosen.slot.path, chosen.key)} is left out`
          const field = [...chosen.slot.path, ...(chosen.key === null ? [] : [chosen.key])].join(
            '.',
          )
          return { frame, sent, what, field }
        })
        .filter((made) => made !== null && !valid(made.sent))
        .map((made) => {
          const { frame, sent, what, field } = made as NonNullable<typeof made>
          return caseOf(operation, frame, {
            kind: 'missing-required-field',
            detail: what,
            body: json(sent),
            expected: { ...schemaViolation, ...(field ? { field } : {}) },
          })
        }),
    })
  }

  if (someObject(schemas, schema, (o) => o.closed)) {
    // Keys a JavaScript object already "has" (`__proto__`, `constructor`) as often as any other.
    const key = fc.oneof(
      {
        arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString'),
        weight: 2,
      },
      { arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{0,15}$/), weight: 1 },
      { arbitrary: fc.string({ minLength: 1, maxLength: 10 }), weight: 1 },
    )
    kinds.push({
      kind: 'unknown-field',
      cases: fc
        .tuple(frames, fc.nat(), key, fc.jsonValue({ maxDepth: 1 }), fc.boolean())
        .map(([frame, index, name, value, variant]) => {
          const closed = slotsOf(schemas, schema, frame.body).filter((s) => s.schema.closed)
          const slot = pick(closed, index)
          if (!slot) return null
          // Sometimes a known field with its first letter in upper case: still unknown.
          const known = Object.keys(slot.schema.properties)
          const first = known[index % Math.max(known.length, 1)]
          const extra =
            variant && first ? `${first.charAt(0).toUpperCase()}${first.slice(1)}` : name
          if (Object.hasOwn(slot.schema.properties, extra)) return null
          const sent = clone(frame.body)
          setOwn(at(sent, slot.path), extra, value)
          const what = `${dotted(slot.path, extra)} is not a field of the schema`
          return { frame, sent, what, field: [...slot.path, extra].join('.') }
        })
        .filter((made) => made !== null && !valid(made.sent))
        .map((made) => {
          const { frame, sent, what, field } = made as NonNullable<typeof made>
          return caseOf(operation, frame, {
            kind: 'unknown-field',
            detail: what,
            body: json(sent),
            expected: { ...schemaViolation, field },
          })
        }),
    })
  }

  /** Properties of the body's objects (present or not) whose value a case replaces. */
  const propertySlots = (value: unknown, test: (property: Json) => boolean): Candidate[] =>
    slotsOf(schemas, schema, value).flatMap((slot) =>
      Object.entries(slot.schema.properties)
        .filter(([, property]) => test(property))
        .map(([key]) => ({ slot, key })),
    )

  const typed = (property: Json) => typesOf(schemas.resolve(property)).length > 0
  if (someObject(schemas, schema, (o) => Object.values(o.properties).some(typed))) {
    kinds.push({
      kind: 'wrong-field-type',
      cases: fc
        .tuple(frames, fc.nat(), TYPE_BAIT)
        .map(([frame, index, value]) => {
          const chosen = pick(propertySlots(frame.body, typed), index)
          if (!chosen) return null
          const types = typesOf(schemas.resolve(chosen.slot.schema.properties[chosen.key]))
          if (typeAllowed(types, value)) return null
          const sent = clone(frame.body)
          setOwn(at(sent, chosen.slot.path), chosen.key, value)
          const what = `${dotted(chosen.slot.path, chosen.key)} is ${JSON.stringify(value).slice(0, 60)} (a ${jsonTypeOf(value)}, the contract says ${types.join(' or ')})`
          return { frame, sent, what, field: [...chosen.slot.path, chosen.key].join('.') }
        })
        .filter((made) => made !== null && !valid(made.sent))
        .map((made) => {
          const { frame, sent, what, field } = made as NonNullable<typeof made>
          return caseOf(operation, frame, {
            kind: 'wrong-field-type',
            detail: what,
            body: json(sent),
            expected: { ...schemaViolation, field },
          })
        }),
    })
  }

  const ranged = (property: Json) => outOfRange(schemas, property) !== undefined
  if (someObject(schemas, schema, (o) => Object.values(o.properties).some(ranged))) {
    kinds.push({
      kind: 'field-out-of-range',
      cases: fc
        .tuple(frames, fc.nat())
        .chain(([frame, index]) => {
          const chosen = pick(propertySlots(frame.body, ranged), index)
          if (!chosen) return fc.constant(null)
          const property = chosen.slot.schema.properties[chosen.key] ?? {}
          const values = outOfRange(schemas, property) ?? fc.constant(null)
          return values.map((value) => {
            const types = typesOf(schemas.resolve(property))
            if (!typeAllowed(types, value)) return null
            const sent = clone(frame.body)
            setOwn(at(sent, chosen.slot.path), chosen.key, value)
            const what = `${dotted(chosen.slot.path, chosen.key)} is ${JSON.stringify(value).slice(0, 60)}, outside what the contract allows`
            return { frame, sent, what, field: [...chosen.slot.path, chosen.key].join('.') }
          })
        })
        .filter((made) => made !== null && !valid(made.sent))
        .map((made) => {
          const { frame, sent, what, field } = made as NonNullable<typeof made>
          return caseOf(operation, frame, {
            kind: 'field-out-of-range',
            detail: what,
            body: json(sent),
            expected: { ...schemaViolation, field },
          })
        }),
    })
  }

  // A reference (`folder_id`, `callback_secret_id`, …) to nothing, in a body the sandbox accepted
  // while seeding: the only thing wrong with it is that the record it names does not exist.
  const accepted = world.acceptedBodies(operation).filter(valid)
  const isReference = (key: string, property: Json | undefined) =>
    key.endsWith('_id') && property !== undefined && schemas.resolve(property).format === 'uuid'
  const references = (value: unknown): Candidate[] =>
    slotsOf(schemas, schema, value).flatMap((slot) =>
      Object.keys(slot.value)
        .filter((key) => typeof slot.value[key] === 'string')
        .filter((key) => isReference(key, slot.schema.properties[key]))
        .map((key) => ({ slot, key })),
    )
  const referring = accepted.filter((value) => references(value).length > 0)
  if (referring.length > 0) {
    kinds.push({
      kind: 'unknown-reference',
      cases: fc
        .tuple(
          fc.constantFrom(...referring),
          frames,
          fc.nat(),
          fc.uuid().filter((uuid) => !world.knownIds.has(uuid)),
        )
        .map(([value, frame, index, uuid]) => {
          const candidates = references(value)
          const chosen = candidates[index % candidates.length] ?? candidates[0]
          const sent = clone(value)
          if (chosen) setOwn(at(sent, chosen.slot.path), chosen.key, uuid)
          const field = chosen ? [...chosen.slot.path, chosen.key].join('.') : ''
          return caseOf(operation, frame, {
            kind: 'unknown-reference',
            detail: `${field} is ${uuid}, which names nothing, in a body accepted before`,
            body: json(sent),
            expected: { statuses: [404, 409, 422], field },
          })
        }),
    })
  }

  const freeForm = (property: Json) => isFreeForm(schemas, property)
  const hasFreeForm = someObject(schemas, schema, (o) => Object.values(o.properties).some(freeForm))
  const deepest = limits.maxNestingDepth + 1
  kinds.push({
    kind: 'deep-nesting',
    cases: fc
      .tuple(
        frames,
        fc.nat(),
        fc.oneof(fc.constant(deepest), fc.constant(5000), fc.integer({ min: deepest, max: 5000 })),
        fc.constantFrom('objects' as const, 'arrays' as const, 'mixed' as const),
      )
      .map(([frame, index, depth, shape]) => {
        const chosen = hasFreeForm ? pick(propertySlots(frame.body, freeForm), index) : null
        if (hasFreeForm && !chosen) return null
        if (!chosen) {
          // No free-form object anywhere: the whole body nests (and is of the wrong shape too).
          return caseOf(operation, frame, {
            kind: 'deep-nesting',
            detail: `the body nests ${depth} deep (${shape})`,
            body: { type: 'bytes', build: () => nestedText(depth, shape) },
            expected: { statuses: [422] },
          })
        }
        const sent = clone(frame.body)
        setOwn(at(sent, chosen.slot.path), chosen.key, MARKER)
        // The value's own containers start one below its object: the total is `depth`.
        const containers = depth - chosen.slot.depth
        return caseOf(operation, frame, {
          kind: 'deep-nesting',
          detail: `${dotted(chosen.slot.path, chosen.key)} nests the body ${depth} deep (${shape})`,
          body: { type: 'bytes', build: withRaw(sent, () => nestedText(containers, shape)) },
          expected: {
            statuses: [422],
            errorCodes: ['too_deep'],
            field: [...chosen.slot.path, chosen.key].join('.'),
          },
        })
      })
      .filter((made) => made !== null),
  })

  const plain = (property: Json) => isPlainString(schemas, property) || freeForm(property)
  if (someObject(schemas, schema, (o) => Object.values(o.properties).some(plain))) {
    kinds.push({
      kind: 'oversized-string',
      cases: fc
        .tuple(
          frames,
          fc.nat(),
          fc.integer({ min: 1, max: 4096 }),
          fc.constantFrom('a', ' ', 'é', '€', '字'),
        )
        .map(([frame, index, extra, char]) => {
          const chosen = pick(propertySlots(frame.body, plain), index)
          if (!chosen) return null
          const property = chosen.slot.schema.properties[chosen.key] ?? {}
          const sent = clone(frame.body)
          const inFreeForm = freeForm(property)
          setOwn(at(sent, chosen.slot.path), chosen.key, inFreeForm ? { note: MARKER } : MARKER)
          const length = limits.maxStringLength + extra
          const where = dotted(chosen.slot.path, chosen.key) + (inFreeForm ? '.note' : '')
          return caseOf(operation, frame, {
            kind: 'oversized-string',
            detail: `${where} is ${length} characters of "${char}"`,
            body: {
              type: 'bytes',
              build: withRaw(sent, () => JSON.stringify(char.repeat(length))),
            },
            expected: {
              statuses: [422],
              errorCodes: ['too_long', 'maxLength'],
              field: [...chosen.slot.path, chosen.key, ...(inFreeForm ? ['note'] : [])].join('.'),
            },
          })
        })
        .filter((made) => made !== null),
    })
  }

  // One body over the size limit, made of strings each under the string limit: only its size
  // is wrong where the schema has a free-form object at the top to hold it.
  const topFreeForm = Object.entries(objectSchema(schemas, schema).properties).find(([, p]) =>
    freeForm(p),
  )?.[0]
  kinds.push({
    kind: 'oversized-body',
    maxRuns: 2,
    cases: fc.tuple(frames, fc.boolean()).map(([frame, chunked]) =>
      caseOf(operation, frame, {
        kind: 'oversized-body',
        detail: `a body over ${limits.maxBodyBytes} bytes, sent ${chunked ? 'chunked' : 'with its length'}`,
        body: {
          type: 'bytes',
          chunked,
          build: () => oversizedBody(topFreeForm ?? 'padding', limits.maxBodyBytes),
        },
        expected: { statuses: [413] },
      }),
    ),
  })

  kinds.push({
    kind: 'wrong-content-type',
    cases: fc
      .tuple(
        frames,
        fc.constantFrom(
          'text/plain',
          'text/plain; charset=utf-8',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
          'application/octet-stream',
          'application/xml',
          'application/merge-patch+json',
          '(none)',
        ),
      )
      .map(([frame, type]) => {
        const headers = { ...frame.headers }
        delete headers['Content-Type']
        const text = JSON.stringify(frame.body)
        const entries: [string, string][] = isObject(frame.body)
          ? Object.entries(frame.body).map(([k, v]) => [
              k,
              typeof v === 'string' ? v : JSON.stringify(v),
            ])
          : [['body', text]]
        let sent: OutgoingBody
        if (type === 'application/x-www-form-urlencoded') sent = { type: 'form', entries }
        else if (type === 'multipart/form-data') sent = { type: 'multipart', entries }
        else {
          // Bytes with no type of their own: fetch adds none.
          sent = { type: 'bytes', build: () => Buffer.from(text) }
          if (type !== '(none)') headers['Content-Type'] = type
        }
        return caseOf(operation, frame, {
          kind: 'wrong-content-type',
          detail: `the body is sent as ${type}`,
          headers,
          body: sent,
          expected: { statuses: [415] },
        })
      }),
  })

  if (body.required) {
    // The contract: no content type on an operation that takes a body is 415.
    kinds.push({
      kind: 'missing-body',
      maxRuns: 1,
      cases: frames.map((frame) => {
        const headers = { ...frame.headers }
        Reflect.deleteProperty(headers, 'Content-Type')
        return caseOf(operation, frame, {
          kind: 'missing-body',
          detail: 'no body and no Content-Type',
          headers,
          body: undefined,
          expected: { statuses: [415] },
        })
      }),
    })
    // An empty JSON body is unparsable JSON (400), or no value where one is required (422).
    kinds.push({
      kind: 'empty-json-body',
      cases: fc.tuple(frames, fc.constantFrom('', ' ', '\n', '  \r\n\t ')).map(([frame, text]) =>
        caseOf(operation, frame, {
          kind: 'empty-json-body',
          detail: `Content-Type: application/json and the body ${JSON.stringify(text)}`,
          body: { type: 'bytes', build: () => text },
          expected: { statuses: [400, 422] },
        }),
      ),
    })
  }

  kinds.push({
    kind: 'malformed-json',
    cases: fc
      .tuple(
        frames,
        fc.nat(),
        fc.constantFrom(
          'cut',
          "{'name': 'single quotes'}",
          '{"a": NaN}',
          '{"a": undefined}',
          '{a: 1}',
          '{"a": 1,}',
          '{"a": 01}',
          '{"a": "tab\there"}',
          '{"a": 1} trailing',
          '{"a": 1}{"b": 2}',
        ),
      )
      .map(([frame, index, template]) => {
        const whole = JSON.stringify(frame.body)
        const text =
          template === 'cut'
            ? whole.slice(0, 1 + (index % Math.max(whole.length - 1, 1)))
            : template
        return { frame, text }
      })
      .filter(({ text }) => !parses(text))
      .map(({ frame, text }) =>
        caseOf(operation, frame, {
          kind: 'malformed-json',
          detail: `the body is ${JSON.stringify(text.slice(0, 80))}`,
          body: { type: 'bytes', build: () => text },
          expected: { statuses: [400] },
        }),
      ),
  })

  return kinds
}

function parses(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** The object of an oversized body, made once per limit and reused by every case that sends it. */
const paddings = new Map<number, Buffer>()

/** `{"<key>": {"p0": "aaa…", …}}` just over `limit` bytes, every string under the string limit. */
function oversizedBody(key: string, limit: number): Buffer {
  let padding = paddings.get(limit)
  if (!padding) {
    const piece = 'a'.repeat(256 * 1024)
    const entries: string[] = []
    for (let size = 0, index = 0; size <= limit + 1024; index++) {
      const entry = `"p${index}":"${piece}"`
      entries.push(entry)
      size += entry.length + 1
    }
    padding = Buffer.from(`{${entries.join(',')}}`)
    paddings.set(limit, padding)
  }
  return Buffer.concat([Buffer.from(`{${JSON.stringify(key)}:`), padding, Buffer.from('}')])
}

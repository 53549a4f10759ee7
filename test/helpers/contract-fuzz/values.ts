import fc from 'fast-check'
import type { ContractSchemas, Json } from './schemas'

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const FREE_FORM_VALUE = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.boolean(),
  fc.constant(null),
)

/** Keys of a free-form object: plain words, so a generated value never trips a key rule by chance. */
const FREE_FORM_KEY = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/)

const iso = (time: number) => new Date(time).toISOString()

function stringOf(schema: Json): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity
  let text: fc.Arbitrary<string>
  if (typeof schema.pattern === 'string') text = fc.stringMatching(new RegExp(schema.pattern))
  else if (schema.format === 'uuid') text = fc.uuid()
  else if (schema.format === 'uri') text = fc.webUrl({ size: 'small' })
  else if (schema.format === 'date-time')
    text = fc.integer({ min: 0, max: 4_102_444_800_000 }).map(iso)
  else if (schema.format === 'email') text = fc.emailAddress()
  else text = fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 16) })
  return text.filter((value) => value.length >= minLength && value.length <= maxLength)
}

function numberOf(schema: Json, integer: boolean): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -1_000_000
  const max = typeof schema.maximum === 'number' ? schema.maximum : 1_000_000
  // fast-check's integers stop at 32 bits; a narrower range of valid values is still valid.
  const low = Math.max(min, -0x7fffffff)
  const high = Math.min(max, 0x7fffffff)
  if (integer) return fc.integer({ min: Math.ceil(low), max: Math.floor(high) })
  return fc.double({ min: low, max: high, noNaN: true, noDefaultInfinity: true })
}

/**
 * Values valid for a schema of the contract, small on purpose (a body is the frame of a case,
 * not the case). Covers the keywords the contract's request schemas use; callers keep only what
 * the contract's own validator accepts, so a keyword missed here costs discarded values, never a
 * wrong "valid" value.
 */
export function validValues(
  schemas: ContractSchemas,
  schema: unknown,
  depth = 0,
): fc.Arbitrary<unknown> {
  const resolved = schemas.resolve(schema)
  if ('const' in resolved) return fc.constant(resolved.const)
  if (Array.isArray(resolved.enum)) return fc.constantFrom(...(resolved.enum as unknown[]))
  const allOf = resolved.allOf as Json[] | undefined
  if (allOf) {
    const merged: Json = { ...resolved, allOf: undefined }
    for (const part of allOf) Object.assign(merged, schemas.resolve(part))
    return validValues(schemas, merged, depth)
  }
  const branches = (resolved.oneOf ?? resolved.anyOf) as Json[] | undefined
  if (branches && isObject(resolved.properties)) {
    // An object whose branches each require some of its own properties (exactly one of a, b):
    // each branch requires its own and leaves out the ones only the other branches require.
    const base: Json = { ...resolved, oneOf: undefined, anyOf: undefined }
    const requiredOf = (branch: Json) =>
      (schemas.resolve(branch).required as string[] | undefined) ?? []
    return fc.oneof(
      ...branches.map((branch) => {
        const own = requiredOf(branch)
        const others = branches
          .filter((other) => other !== branch)
          .flatMap(requiredOf)
          .filter((name) => !own.includes(name))
        const properties = Object.fromEntries(
          Object.entries(resolved.properties as Json).filter(([name]) => !others.includes(name)),
        )
        const required = [...((base.required as string[] | undefined) ?? []), ...own]
        return validValues(schemas, { ...base, properties, required }, depth)
      }),
    )
  }
  if (branches) return fc.oneof(...branches.map((branch) => validValues(schemas, branch, depth)))

  const types = ([] as unknown[]).concat(resolved.type ?? []).map(String)
  if (types.length > 1) {
    return fc.oneof(...types.map((type) => validValues(schemas, { ...resolved, type }, depth)))
  }
  switch (types[0]) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return numberOf(resolved, true)
    case 'number':
      return numberOf(resolved, false)
    case 'string':
      return stringOf(resolved)
    case 'array': {
      const minLength = typeof resolved.minItems === 'number' ? resolved.minItems : 0
      const maxLength = Math.min(
        typeof resolved.maxItems === 'number' ? resolved.maxItems : Infinity,
        minLength + (depth > 1 ? 1 : 2),
      )
      const items = validValues(schemas, resolved.items ?? {}, depth + 1)
      return resolved.uniqueItems === true
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength })
    }
    case 'object':
    case undefined:
      return objectOf(schemas, resolved, depth)
    default:
      throw new Error(`The fuzzer cannot make values of type ${types[0]}.`)
  }
}

function objectOf(schemas: ContractSchemas, schema: Json, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, unknown>
  const names = Object.keys(properties)
  if (names.length === 0) {
    // A free-form object (`metadata`, `input`, …): a few plain entries.
    return fc.dictionary(FREE_FORM_KEY, FREE_FORM_VALUE, { maxKeys: 3 })
  }
  const required = new Set((schema.required as string[] | undefined) ?? [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const name of names) model[name] = validValues(schemas, properties[name], depth + 1)
  const minProperties = typeof schema.minProperties === 'number' ? schema.minProperties : 0
  return fc
    .record(model, { requiredKeys: names.filter((name) => required.has(name)) })
    .filter((value) => Object.keys(value).length >= minProperties)
}

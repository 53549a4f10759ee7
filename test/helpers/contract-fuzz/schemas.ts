import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { pointRefs } from '../../../src-main/sandbox/routes'

export type Json = Record<string, unknown>

/** How a listed record's scalar field compares in `q`: the contract's "values compare by type". */
export type FieldType = 'date-time' | 'number' | 'boolean' | 'string'

export interface Limits {
  maxBodyBytes: number
  maxNestingDepth: number
  maxStringLength: number
}

/** What the fuzzer asks of the contract's schemas. */
export interface ContractSchemas {
  /** A schema with its `$ref` followed (to the end of a chain). */
  resolve: (schema: unknown) => Json
  /** Whether a body is valid as the contract says, with no conversion at all (bodies are strict). */
  bodyIsValid: (schema: Json, value: unknown) => boolean
  /**
   * Whether some sensible reading of a text parameter is valid: query, path and header values
   * are text "read as the type their schema gives", and a value only must be refused when no
   * reading (as given, trimmed, as a number, as a boolean word, empty as null) is valid.
   */
  parameterMayBeValid: (schema: Json, text: string) => boolean
  /** The scalar top-level fields of a listed record and how each compares: what `q` and `sort_by` name. */
  scalarFields: (itemSchema: Json) => Map<string, FieldType>
  /** Every top-level property of a listed record: what `fields` may name. */
  propertyNames: (itemSchema: Json) => Set<string>
  /** The body limits the contract writes down (`x-atelier-limits`). */
  limits: Limits
}

/** The id the contract's components are registered under, so `#/components/...` refs resolve. */
const DOCUMENT_ID = 'https://atelier.invalid/contract-fuzz/openapi'

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function typesOf(schema: Json): string[] {
  return ([] as unknown[]).concat(schema.type ?? []).map(String)
}

/**
 * The contract's limits. They are read from `x-atelier-limits`; the numbers below are the ones
 * issue 17 decided, used only while a contract without that extension is being read.
 */
function limitsOf(document: Json): Limits {
  const written = isObject(document['x-atelier-limits']) ? document['x-atelier-limits'] : {}
  const number = (key: string, fallback: number) =>
    typeof written[key] === 'number' ? written[key] : fallback
  return {
    maxBodyBytes: number('max_body_bytes', 16 * 1024 * 1024),
    maxNestingDepth: number('max_nesting_depth', 64),
    maxStringLength: number('max_string_length', 1024 * 1024),
  }
}

export function contractSchemas(document: Json): ContractSchemas {
  const components = (document.components ?? {}) as Json
  const named = (components.schemas ?? {}) as Record<string, Json>

  const resolve = (schema: unknown): Json => {
    let current: unknown = schema
    for (let hops = 0; hops < 32; hops++) {
      if (!isObject(current)) return {}
      const ref = current.$ref
      if (typeof ref !== 'string') return current
      const name = ref.replace('#/components/schemas/', '')
      current = named[name]
      if (current === undefined) throw new Error(`The contract has a dangling reference ${ref}.`)
    }
    throw new Error('The contract has a reference cycle.')
  }

  // Bodies: no coercion, no defaults written into the value, every format checked.
  const strict = new Ajv2020({ strict: false, allErrors: false, coerceTypes: false })
  addFormats(strict)
  strict.addSchema({ $id: DOCUMENT_ID, components })
  // Parameters: text read as the schema's type, as the contract says.
  const lenient = new Ajv2020({ strict: false, allErrors: false, coerceTypes: true })
  addFormats(lenient)
  lenient.addSchema({ $id: DOCUMENT_ID, components })

  const compiled = new WeakMap<Json, ValidateFunction>()
  const validator = (ajv: Ajv2020, cache: WeakMap<Json, ValidateFunction>, schema: Json) => {
    let validate = cache.get(schema)
    if (!validate) {
      // Sub-schemas of the contract refer to `#/components/…`: pointed at the registered copy.
      validate = ajv.compile(pointRefs(schema, DOCUMENT_ID) as Json)
      cache.set(schema, validate)
    }
    return validate
  }
  const parameterValidators = new WeakMap<Json, ValidateFunction>()

  const bodyIsValid = (schema: Json, value: unknown) => validator(strict, compiled, schema)(value)

  const parameterMayBeValid = (schema: Json, text: string): boolean => {
    const wrapper = parameterWrapper(schema)
    const validate = validator(lenient, parameterValidators, wrapper)
    const trimmed = text.trim()
    const readings: unknown[] = [text, trimmed]
    if (trimmed !== '' && Number.isFinite(Number(trimmed))) readings.push(Number(trimmed))
    const word = trimmed.toLowerCase()
    if (['true', 'yes', 'on', '1'].includes(word)) readings.push(true)
    if (['false', 'no', 'off', '0'].includes(word)) readings.push(false)
    if (trimmed === '' || word === 'null') readings.push(null)
    return readings.some((reading) => validate({ value: reading }))
  }

  const wrappers = new WeakMap<Json, Json>()
  const parameterWrapper = (schema: Json): Json => {
    let wrapper = wrappers.get(schema)
    if (!wrapper) {
      wrapper = { type: 'object', properties: { value: schema }, required: ['value'] }
      wrappers.set(schema, wrapper)
    }
    return wrapper
  }

  const properties = (itemSchema: Json): Map<string, Json> => {
    const found = new Map<string, Json>()
    const visit = (schema: Json) => {
      const resolved = resolve(schema)
      for (const part of (resolved.allOf as Json[] | undefined) ?? []) visit(part)
      for (const [name, property] of Object.entries((resolved.properties ?? {}) as Json)) {
        if (isObject(property)) found.set(name, property)
      }
    }
    visit(itemSchema)
    return found
  }

  const fieldType = (schema: Json): FieldType | undefined => {
    const resolved = resolve(schema)
    const options = (resolved.oneOf ?? resolved.anyOf) as Json[] | undefined
    if (options) {
      const kinds = new Set(options.map(fieldType))
      return kinds.size === 1 ? [...kinds][0] : undefined
    }
    const types = typesOf(resolved).filter((type) => type !== 'null')
    if (types.length !== 1) return undefined
    if (types[0] === 'string') return resolved.format === 'date-time' ? 'date-time' : 'string'
    if (types[0] === 'integer' || types[0] === 'number') return 'number'
    if (types[0] === 'boolean') return 'boolean'
    return undefined
  }

  const scalarFields = (itemSchema: Json) => {
    const fields = new Map<string, FieldType>()
    for (const [name, property] of properties(itemSchema)) {
      const type = fieldType(property)
      if (type) fields.set(name, type)
    }
    return fields
  }

  return {
    resolve,
    bodyIsValid,
    parameterMayBeValid,
    scalarFields,
    propertyNames: (itemSchema) => new Set(properties(itemSchema).keys()),
    limits: limitsOf(document),
  }
}

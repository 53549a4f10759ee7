import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { findUp } from '../native'

/**
 * `resources/openapi.yaml`, found by walking up from this module: two levels above
 * `src-main/sandbox` in the sources, three above `out/main/chunks` in a build (the bundler
 * decides which chunk the sandbox lands in), and beside `out/` in the packaged app, where
 * `npm run dist` stages it.
 */
export const CONTRACT_PATH =
  findUp(import.meta.dirname, join('resources', 'openapi.yaml')) ??
  // Not found: the sources' place, so that the error names a path that makes sense.
  join(import.meta.dirname, '..', '..', 'resources', 'openapi.yaml')

type Json = Record<string, unknown>

export interface OperationInfo {
  operationId: string
  method: string
  path: string
  requiredScope: string | undefined
}

/**
 * What values a scalar field holds, as far as a `q` filter needs to know: a value compared with it
 * must be one of these. `any` is a field whose schema allows several kinds (nothing is checked).
 */
export type FieldType =
  | { kind: 'text'; pattern?: string; example?: string }
  | { kind: 'uuid' }
  | { kind: 'date-time' }
  | { kind: 'number' }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'any' }

/** The scalar fields of a schema, each with its type. */
export interface ScalarFields extends ReadonlySet<string> {
  typeOf: (field: string) => FieldType | undefined
}

export interface Contract {
  document: Json
  operations: OperationInfo[]
  /** Top-level scalar fields of a schema: what `q`, `sort_by` and `fields` may name. */
  scalarFields: (schemaName: string) => ScalarFields
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const loaded = new Map<string, Contract>()

/** Parsed once per process: every sandbox of a test run shares it (nothing mutates it). */
export function loadContract(path = CONTRACT_PATH): Contract {
  let contract = loaded.get(path)
  if (!contract) {
    contract = parseContract(path)
    loaded.set(path, contract)
  }
  return contract
}

/**
 * The contract's document: from the JSON copy the build keeps in `out/contract/` when it was made
 * from these very bytes (a JSON parse takes milliseconds, the YAML's took about a second of
 * every start), else from the YAML.
 */
function readDocument(path: string): Json {
  const text = readFileSync(path)
  const copy = join(dirname(dirname(path)), 'out', 'contract', 'openapi.json')
  if (existsSync(copy)) {
    try {
      const stored = JSON.parse(readFileSync(copy, 'utf8')) as { sha256?: unknown; document?: Json }
      const sha256 = createHash('sha256').update(text).digest('hex')
      if (stored.sha256 === sha256 && isObject(stored.document)) return stored.document
    } catch {
      // A damaged copy is only a lost shortcut: the YAML below is the contract.
    }
  }
  // Loaded only here: the YAML parser itself takes a tenth of a second to load.
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml')
  return parse(text.toString('utf8')) as Json
}

function parseContract(path: string): Contract {
  const document = readDocument(path)
  const paths = document.paths as Record<string, Json>
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas

  const operations: OperationInfo[] = []
  for (const [route, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      operations.push({
        operationId: String(operation.operationId),
        method: method.toUpperCase(),
        path: route,
        requiredScope:
          typeof operation['x-required-scope'] === 'string'
            ? operation['x-required-scope']
            : undefined,
      })
    }
  }

  const resolve = (schema: Json): Json => {
    const ref = schema.$ref
    if (typeof ref !== 'string') return schema
    const target = schemas[ref.replace('#/components/schemas/', '')]
    if (!target) throw new Error(`The contract has a dangling reference ${ref}.`)
    return resolve(target)
  }

  const isScalar = (schema: Json): boolean => {
    const resolved = resolve(schema)
    if (Array.isArray(resolved.oneOf) || Array.isArray(resolved.anyOf)) {
      const options = (resolved.oneOf ?? resolved.anyOf) as Json[]
      return options.every(isScalar)
    }
    const types = ([] as unknown[]).concat(resolved.type ?? [])
    return (
      types.length > 0 &&
      types.every((t) => ['string', 'number', 'integer', 'boolean', 'null'].includes(String(t)))
    )
  }

  /** The kinds of value one schema (no oneOf) admits, null left out: it is the null literal's. */
  const kindsOf = (schema: Json): FieldType[] => {
    const resolved = resolve(schema)
    const options = (resolved.oneOf ?? resolved.anyOf) as Json[] | undefined
    if (Array.isArray(options)) return options.flatMap(kindsOf)
    const types = ([] as unknown[]).concat(resolved.type ?? []).filter((t) => t !== 'null')
    return types.map((type): FieldType => {
      if (type === 'boolean') return { kind: 'boolean' }
      if (type === 'number' || type === 'integer') return { kind: 'number' }
      if (Array.isArray(resolved.enum)) {
        return { kind: 'enum', values: resolved.enum.filter((v) => typeof v === 'string') }
      }
      if (resolved.format === 'uuid') return { kind: 'uuid' }
      if (resolved.format === 'date-time') return { kind: 'date-time' }
      if (typeof resolved.pattern !== 'string') return { kind: 'text' }
      const examples = resolved.examples ?? resolved.example
      const example = ([] as unknown[]).concat(examples ?? []).find((e) => typeof e === 'string')
      return {
        kind: 'text',
        pattern: resolved.pattern,
        ...(typeof example === 'string' ? { example } : {}),
      }
    })
  }

  const typeOf = (schema: Json): FieldType => {
    const [first, ...rest] = kindsOf(schema)
    if (!first) return { kind: 'any' }
    const same = rest.every((other) => JSON.stringify(other) === JSON.stringify(first))
    return same ? first : { kind: 'any' }
  }

  const collect = (schema: Json, into: Map<string, FieldType>): void => {
    const resolved = resolve(schema)
    for (const part of (resolved.allOf as Json[] | undefined) ?? []) collect(part, into)
    for (const [name, property] of Object.entries(
      (resolved.properties as Json | undefined) ?? {},
    )) {
      if (isObject(property) && isScalar(property)) into.set(name, typeOf(property))
    }
  }

  const fieldCache = new Map<string, ScalarFields>()
  const scalarFields = (schemaName: string): ScalarFields => {
    let fields = fieldCache.get(schemaName)
    if (!fields) {
      const schema = schemas[schemaName]
      if (!schema) throw new Error(`The contract has no schema ${schemaName}.`)
      const types = new Map<string, FieldType>()
      collect(schema, types)
      fields = Object.assign(new Set(types.keys()), {
        typeOf: (field: string) => types.get(field),
      })
      fieldCache.set(schemaName, fields)
    }
    return fields
  }

  return { document, operations, scalarFields }
}

// The contract as the random service reads it: each operation's route and the schema of its
// success answer, from resources/openapi.yaml, with the components optionally widened the way a
// newer service differs (fields and enum values this client has never seen).
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const YAML_PATH = fileURLToPath(new URL('../../../resources/openapi.yaml', import.meta.url))
const JSON_COPY = fileURLToPath(new URL('../../../out/contract/openapi.json', import.meta.url))

/** The field and the enum value a widened service adds, so that a test can look for them. */
export const EXTRA_PROPERTY = 'service_note'
export const EXTRA_ENUM_VALUE = 'on_hold'

type Schema = Record<string, unknown>

export interface Route {
  method: string
  /** The contract's path, e.g. `/v1/runs/{run_id}/logs`. */
  template: string
  operationId: string
  status: number
  /** The success answer's schema (a `$ref` or inline), or null for an answer without a body. */
  schema: Schema | null
  /** For a list envelope: the components name of its items (`Run` for RunPage). */
  itemSchema: string | null
  /** For a single record: its components name. */
  recordSchema: string | null
  /** For an answer that is a bare array of records (the callback lists). */
  arrayOf: string | null
  match: (path: string) => Record<string, string> | null
  /** Literal segments: a route with more wins (`/v1/runs/statuses` over `/v1/runs/{run_id}`). */
  literals: number
}

export interface Contract {
  routes: Route[]
  /**
   * components.schemas as an answer must conform to them: widened by both options at once (the
   * added field optional), so that one compiled validator serves every service.
   */
  schemas: Record<string, Schema>
  /** components.schemas as the generator is given them, widened as asked (see `generatorSchemas`). */
  generated: (widening: Widening) => Record<string, Schema>
}

/** The format the generator is given for a date-time with an offset pattern (see `forGenerator`). */
export const OFFSET_DATE_TIME = 'offset-date-time'

export interface Widening {
  /** A property added to every object schema that lists properties (a field the client never saw). */
  extraProperty?: string | undefined
  /** A value added to every string enum (a new status code, a new kind). */
  extraEnumValue?: string | undefined
}

const refName = (schema: unknown): string | null => {
  const ref = (schema as { $ref?: unknown } | null)?.$ref
  return typeof ref === 'string' ? (ref.split('/').at(-1) ?? null) : null
}

function widen(node: unknown, widening: Widening, required: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => widen(item, widening, required))
  if (node === null || typeof node !== 'object') return node
  const out: Schema = {}
  for (const [key, value] of Object.entries(node)) out[key] = widen(value, widening, required)
  const { extraProperty, extraEnumValue } = widening
  if (extraProperty && out.properties && typeof out.properties === 'object') {
    out.properties = {
      ...(out.properties as Schema),
      [extraProperty]: { type: 'string', minLength: 3, maxLength: 12 },
    }
    if (required) out.required = [...((out.required as string[] | undefined) ?? []), extraProperty]
  }
  if (extraEnumValue && Array.isArray(out.enum) && out.enum.some((v) => typeof v === 'string')) {
    out.enum = [...(out.enum as unknown[]), extraEnumValue]
  }
  return out
}

function matcher(template: string): Route['match'] {
  const names: string[] = []
  const pattern = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    names.push(name)
    return '([^/]+)'
  })
  const regex = new RegExp(`^${pattern}$`)
  return (path) => {
    const found = regex.exec(path)
    if (!found) return null
    return Object.fromEntries(
      names.map((name, i) => [name, decodeURIComponent(found[i + 1] ?? '')]),
    )
  }
}

/**
 * `allOf` of object schemas as one object schema: json-schema-faker 0.6.3 drops the members
 * that are `$ref`s (a RunLogLevel came without the ReferenceRecord fields), which would blame
 * the client for the generator's slip.
 */
function mergeAllOf(schemas: Record<string, Schema>): void {
  const resolve = (schema: Schema): Schema => {
    const name = refName(schema)
    const target = name === null ? schema : (schemas[name] ?? {})
    return Array.isArray(target.allOf) ? merged(target) : target
  }
  const merged = (schema: Schema): Schema => {
    const { allOf, ...rest } = schema
    const parts = (allOf as Schema[]).map(resolve)
    return {
      ...rest,
      type: 'object',
      properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})) as Schema,
      required: parts.flatMap((p) => (p.required as string[] | undefined) ?? []),
    }
  }
  for (const [name, schema] of Object.entries(schemas)) {
    if (Array.isArray(schema.allOf)) schemas[name] = merged(schema)
  }
}

/**
 * json-schema-faker writes a `date-time` with `Z` whatever its `pattern` says, so a callback
 * timestamp (`+00:00` only) gets a format of its own, which records.ts generates.
 */
function forGenerator(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forGenerator)
  if (node === null || typeof node !== 'object') return node
  const out: Schema = {}
  for (const [key, value] of Object.entries(node)) out[key] = forGenerator(value)
  if (out.format === 'date-time' && typeof out.pattern === 'string') {
    delete out.pattern
    out.format = OFFSET_DATE_TIME
  }
  return out
}

interface Document {
  paths: Record<string, Record<string, { operationId?: string; responses?: Schema }>>
  components: { schemas: Record<string, Schema> }
}

/**
 * The contract's document: from the JSON copy the build keeps in `out/contract/` when it was
 * made from these very bytes (as the sandbox reads it: the YAML takes seconds to parse on a busy
 * machine), else from the YAML.
 */
function readDocument(): Document {
  const text = readFileSync(YAML_PATH)
  try {
    const stored = JSON.parse(readFileSync(JSON_COPY, 'utf8')) as {
      sha256?: unknown
      document?: Document
    }
    const sha256 = createHash('sha256').update(text).digest('hex')
    if (stored.sha256 === sha256 && stored.document) return stored.document
  } catch {
    // No copy, or a damaged one: the YAML is the contract.
  }
  return parse(text.toString('utf8')) as Document
}

let loaded: Contract | undefined

/** The contract, read and prepared once per process: every random service shares it. */
export function loadContract(): Contract {
  loaded ??= readContract()
  return loaded
}

function readContract(): Contract {
  const doc = readDocument()
  const everything = { extraProperty: EXTRA_PROPERTY, extraEnumValue: EXTRA_ENUM_VALUE }
  const schemas = widen(doc.components.schemas, everything, false) as Record<string, Schema>
  mergeAllOf(schemas)
  const generated = new Map<string, Record<string, Schema>>()
  const routes: Route[] = []
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation.responses || !operation.operationId) continue
      const code = Object.keys(operation.responses)
        .filter((c) => /^2\d\d$/.test(c))
        .sort()[0]
      if (code === undefined) continue
      const answer = operation.responses[code] as { content?: Record<string, { schema?: Schema }> }
      const schema = answer.content?.['application/json']?.schema ?? null
      const name = refName(schema)
      const target = name === null ? null : schemas[name]
      const props = (target?.properties ?? {}) as Schema
      const isPage = name !== null && 'items' in props && 'next' in props
      routes.push({
        method: method.toUpperCase(),
        template,
        operationId: operation.operationId,
        status: Number(code),
        schema,
        itemSchema: isPage ? refName((props.items as Schema).items) : null,
        recordSchema: isPage ? null : name,
        arrayOf: schema?.type === 'array' ? refName(schema.items) : null,
        match: matcher(template),
        literals: template.split('/').filter((s) => s !== '' && !s.startsWith('{')).length,
      })
    }
  }
  routes.sort((a, b) => b.literals - a.literals)
  return {
    routes,
    schemas,
    generated: (widening) => {
      const key = JSON.stringify([widening.extraProperty, widening.extraEnumValue])
      let found = generated.get(key)
      if (!found) {
        found = widen(doc.components.schemas, widening, true) as Record<string, Schema>
        mergeAllOf(found)
        found = forGenerator(found) as Record<string, Schema>
        generated.set(key, found)
      }
      return found
    },
  }
}

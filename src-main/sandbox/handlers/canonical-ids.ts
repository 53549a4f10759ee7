import type { Contract } from '../contract'
import { canonicalUuid } from '../uuid'
import type { Handler, HandlerContext, Handlers, OperationId } from './types'

type Json = Record<string, unknown>

/**
 * Where ids sit in a request value: the value itself (`id`), some of its properties, or its
 * items. Only the places the contract types as ids: free-form objects (`metadata`, `input`) are
 * the caller's and are echoed byte for byte.
 */
interface IdPlaces {
  id?: true
  properties?: Map<string, IdPlaces>
  items?: IdPlaces
}

interface OperationIds {
  params: ReadonlySet<string>
  query: ReadonlySet<string>
  body: IdPlaces | undefined
}

const SAMPLE_UUID = '0190C0DE-0000-7000-8000-00000000ABCD'

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A string schema that admits a UUID: `format: uuid`, or a pattern that accepts one (the
 * contract's `UuidOrAny`), so an id typed either way is found without listing names here.
 */
function admitsUuid(schema: Json): boolean {
  if (schema.format === 'uuid') return true
  if (typeof schema.pattern !== 'string') return false
  try {
    return new RegExp(schema.pattern).test(SAMPLE_UUID)
  } catch {
    return false
  }
}

function merge(a: IdPlaces | undefined, b: IdPlaces | undefined): IdPlaces | undefined {
  if (!a) return b
  if (!b) return a
  const merged: IdPlaces = {}
  if (a.id ?? b.id) merged.id = true
  const items = merge(a.items, b.items)
  if (items) merged.items = items
  if (a.properties || b.properties) {
    const properties = new Map(a.properties)
    for (const [name, places] of b.properties ?? []) {
      const both = merge(properties.get(name), places)
      if (both) properties.set(name, both)
    }
    merged.properties = properties
  }
  return merged
}

/** Reads the contract's schemas for where ids are, following refs once along each path. */
class IdMap {
  private readonly schemas: Record<string, Json>
  private readonly parameters: Record<string, Json>

  constructor(private readonly document: Json) {
    const components = (document.components ?? {}) as Json
    this.schemas = (components.schemas ?? {}) as Record<string, Json>
    this.parameters = (components.parameters ?? {}) as Record<string, Json>
  }

  operation(operationId: string): OperationIds {
    const found: { params: Set<string>; query: Set<string>; body: IdPlaces | undefined } = {
      params: new Set(),
      query: new Set(),
      body: undefined,
    }
    for (const item of Object.values(this.document.paths as Record<string, Json>)) {
      for (const operation of Object.values(item)) {
        if (!isObject(operation) || operation.operationId !== operationId) continue
        const parameters = [
          ...((item.parameters as Json[] | undefined) ?? []),
          ...((operation.parameters as Json[] | undefined) ?? []),
        ].map((parameter) => this.parameter(parameter))
        for (const parameter of parameters) {
          if (parameter.in !== 'path' && parameter.in !== 'query') continue
          if (!this.places(parameter.schema, new Set())?.id) continue
          ;(parameter.in === 'path' ? found.params : found.query).add(String(parameter.name))
        }
        const content = (operation.requestBody as Json | undefined)?.content as
          Record<string, Json> | undefined
        for (const media of Object.values(content ?? {})) {
          found.body = merge(found.body, this.places(media.schema, new Set()))
        }
      }
    }
    return found
  }

  private parameter(parameter: Json): Json {
    const ref = parameter.$ref
    if (typeof ref !== 'string') return parameter
    return this.parameters[ref.replace('#/components/parameters/', '')] ?? {}
  }

  /** `seen` holds the refs on the way here, so a recursive schema is followed once round. */
  private places(schema: unknown, seen: ReadonlySet<string>): IdPlaces | undefined {
    if (!isObject(schema)) return undefined
    const ref = schema.$ref
    if (typeof ref === 'string') {
      if (seen.has(ref)) return undefined
      const target = this.schemas[ref.replace('#/components/schemas/', '')]
      return this.places(target, new Set([...seen, ref]))
    }
    let places: IdPlaces | undefined = admitsUuid(schema) ? { id: true } : undefined
    for (const keyword of ['allOf', 'oneOf', 'anyOf']) {
      for (const part of (schema[keyword] as unknown[] | undefined) ?? []) {
        places = merge(places, this.places(part, seen))
      }
    }
    if (isObject(schema.properties)) {
      const properties = new Map<string, IdPlaces>()
      for (const [name, property] of Object.entries(schema.properties)) {
        const inner = this.places(property, seen)
        if (inner) properties.set(name, inner)
      }
      if (properties.size > 0) places = merge(places, { properties })
    }
    const items = this.places(schema.items, seen)
    if (items) places = merge(places, { items })
    return places
  }
}

/** The value with every id at `places` in canonical form; untouched parts are shared, not copied. */
function canonical(value: unknown, places: IdPlaces | undefined): unknown {
  if (!places) return value
  if (typeof value === 'string') return places.id ? (canonicalUuid(value) ?? value) : value
  if (Array.isArray(value)) {
    return places.items ? value.map((item) => canonical(item, places.items)) : value
  }
  if (isObject(value) && places.properties) {
    const copy: Json = { ...value }
    for (const [name, inner] of places.properties) {
      if (Object.hasOwn(copy, name)) copy[name] = canonical(copy[name], inner)
    }
    return copy
  }
  return value
}

function canonicalNamed(value: unknown, names: ReadonlySet<string>): unknown {
  if (names.size === 0 || !isObject(value)) return value
  const copy: Json = { ...value }
  for (const name of names) {
    const id = copy[name]
    if (typeof id === 'string') copy[name] = canonicalUuid(id) ?? id
  }
  return copy
}

/**
 * Every handler, behind one step that puts the ids of the request in canonical form: the path
 * and query parameters and the body properties the contract types as UUIDs. The contract's
 * `format: uuid` admits upper case (and the `urn:uuid:` form), so `GET /v1/runs/0190ABCD-…` must
 * find the run stored as `0190abcd-…`, and a flow may name its model in upper case. Done here,
 * once for every operation, rather than in each handler; the places are read from the contract
 * on an operation's first call (start-up time matters), so a new operation is covered unlisted.
 */
export function withCanonicalIds(contract: Contract, handlers: Handlers): Handlers {
  const ids = new IdMap(contract.document)
  const wrapped: Record<string, Handler<OperationId>> = {}
  for (const [operationId, handler] of Object.entries(handlers) as [
    OperationId,
    Handler<OperationId>,
  ][]) {
    let places: OperationIds | undefined
    wrapped[operationId] = (context: HandlerContext<OperationId>) => {
      places ??= ids.operation(operationId)
      return handler({
        ...context,
        params: canonicalNamed(context.params, places.params) as never,
        query: canonicalNamed(context.query, places.query) as never,
        body: canonical(context.body, places.body) as never,
      })
    }
  }
  return wrapped
}

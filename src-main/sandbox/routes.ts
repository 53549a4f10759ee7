type Json = Record<string, unknown>

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const

/** Where route schemas find the contract's components: Fastify's shared schema of this id. */
export const CONTRACT_SCHEMA_ID = 'contract'

/** One operation of the contract as a Fastify route: its URL, request schemas and facts. */
export interface ContractRoute {
  method: string
  /** Fastify's form of the path: `/v1/runs/:run_id`. */
  url: string
  openapiPath: string
  operationId: string
  schema: { params?: Json; querystring?: Json; headers?: Json; body?: Json }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * `#/components/…` refs, pointed at the contract registered under `base` (by default the shared
 * contract schema the server registers).
 */
export function pointRefs(value: unknown, base: string = CONTRACT_SCHEMA_ID): unknown {
  if (Array.isArray(value)) return value.map((item) => pointRefs(item, base))
  if (!isObject(value)) return value
  const copy: Json = {}
  for (const [key, item] of Object.entries(value)) {
    copy[key] =
      key === '$ref' && typeof item === 'string' && item.startsWith('#/')
        ? `${base}${item}`
        : pointRefs(item, base)
  }
  return copy
}

/** The components as one schema document Ajv can resolve refs into (compiled only when used). */
export function contractSchema(document: Json): Json {
  return { $id: CONTRACT_SCHEMA_ID, components: document.components }
}

/**
 * Every operation as a route, read straight from the contract: the path, query and header
 * parameters as object schemas and the JSON body's schema, each referring to the shared
 * components rather than a copy of them. Reading it takes milliseconds; the plugin this replaces
 * first validated the whole document against the OpenAPI meta-schema at every start (most of a
 * second), which the contract's own tests already do once. No response schemas: answers are
 * checked by the contract tests, not serialized through them (a `fields` projection rightly
 * leaves out required properties).
 */
export function contractRoutes(document: Json): ContractRoute[] {
  const parameters = ((document.components as Json | undefined)?.parameters ?? {}) as Record<
    string,
    Json
  >
  const resolve = (parameter: Json): Json => {
    const ref = parameter.$ref
    if (typeof ref !== 'string') return parameter
    const target = parameters[ref.replace('#/components/parameters/', '')]
    if (!target) throw new Error(`The contract has a dangling reference ${ref}.`)
    return target
  }
  const routes: ContractRoute[] = []
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      const grouped: Record<'path' | 'query' | 'header', Json[]> = {
        path: [],
        query: [],
        header: [],
      }
      const all = [
        ...((item.parameters as Json[] | undefined) ?? []),
        ...((operation.parameters as Json[] | undefined) ?? []),
      ]
      for (const parameter of all.map(resolve)) {
        const where = parameter.in
        if (where === 'path' || where === 'query' || where === 'header')
          grouped[where].push(parameter)
      }
      const schema: ContractRoute['schema'] = {}
      const object = (list: Json[]): Json | undefined => {
        if (list.length === 0) return undefined
        const properties: Json = {}
        const required: string[] = []
        for (const parameter of list) {
          const name = String(parameter.name)
          properties[name] = pointRefs(parameter.schema ?? {})
          if (parameter.required === true) required.push(name)
        }
        return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) }
      }
      const params = object(grouped.path)
      const querystring = object(grouped.query)
      const headers = object(grouped.header)
      if (params) schema.params = params
      if (querystring) schema.querystring = querystring
      if (headers) schema.headers = headers
      const content = (operation.requestBody as Json | undefined)?.content as
        Record<string, Json> | undefined
      if (content && Object.keys(content).length > 0) {
        const byType: Json = {}
        for (const [type, media] of Object.entries(content)) {
          if (media.schema !== undefined) byType[type] = { schema: pointRefs(media.schema) }
        }
        schema.body = { content: byType }
      }
      routes.push({
        method: method.toUpperCase(),
        url: path.replace(/{(\w+)}/g, ':$1'),
        openapiPath: path,
        operationId: String(operation.operationId),
        schema,
      })
    }
  }
  return routes
}

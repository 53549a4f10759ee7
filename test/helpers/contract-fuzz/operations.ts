import type { Json } from './schemas'

export interface FuzzParameter {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  schema: Json
  /** The `components.parameters` name it came from, when it is a shared one (`RunId`, `q`, …). */
  component: string | undefined
}

export interface FuzzBody {
  schema: Json
  required: boolean
  mediaTypes: string[]
}

/** One operation of the contract, with what the fuzzer needs to know about it. */
export interface FuzzOperation {
  operationId: string
  method: string
  /** The contract's path template, e.g. `/v1/runs/{run_id}`. */
  path: string
  parameters: FuzzParameter[]
  body: FuzzBody | undefined
  requiredScope: string | undefined
  /** Whether a credential is needed (the operation's `security`, else the document's). */
  authenticated: boolean
  /** For a list (an operation with the standard `q` parameter): the listed record's schema. */
  itemSchema: Json | undefined
}

/** Every HTTP method OpenAPI allows on a path item: an operation under any of them is fuzzed. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Every operation under `paths`, read from the contract itself: nothing is listed by hand, so an
 * operation added to the contract is fuzzed without a change here. (`webhooks` and `callbacks`
 * are requests the service sends, not operations it answers.)
 */
export function contractOperations(document: Json): FuzzOperation[] {
  const components = (document.components ?? {}) as Json
  const parameters = (components.parameters ?? {}) as Record<string, Json>
  const schemas = (components.schemas ?? {}) as Record<string, Json>
  const documentSecurity = (document.security as unknown[] | undefined) ?? []

  const parameter = (raw: Json): FuzzParameter => {
    let component: string | undefined
    let resolved = raw
    if (typeof raw.$ref === 'string') {
      component = raw.$ref.replace('#/components/parameters/', '')
      const target = parameters[component]
      if (!target) throw new Error(`The contract has a dangling reference ${raw.$ref}.`)
      resolved = target
    }
    const where = resolved.in
    if (where !== 'path' && where !== 'query' && where !== 'header') {
      throw new Error(`The fuzzer does not know parameters in ${String(where)}.`)
    }
    return {
      name: String(resolved.name),
      in: where,
      required: resolved.required === true,
      schema: (resolved.schema ?? {}) as Json,
      component,
    }
  }

  const schemaOf = (schema: unknown): Json | undefined => {
    if (!isObject(schema)) return undefined
    if (typeof schema.$ref === 'string')
      return schemaOf(schemas[schema.$ref.replace('#/components/schemas/', '')])
    return schema
  }

  /** The item schema of a page: `items.items` of the 200 answer's schema. */
  const itemSchemaOf = (operation: Json): Json | undefined => {
    const ok = (operation.responses as Json | undefined)?.['200']
    const content = isObject(ok) ? (ok.content as Json | undefined) : undefined
    const media = content?.['application/json']
    const page = isObject(media) ? schemaOf(media.schema) : undefined
    const items = isObject(page?.properties) ? page.properties.items : undefined
    return isObject(items) && isObject(items.items) ? items.items : undefined
  }

  const operations: FuzzOperation[] = []
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    // A path item kept elsewhere would hide its operations from the loop below.
    if (item.$ref !== undefined) throw new Error(`The fuzzer does not follow the $ref of ${path}.`)
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      const all = [
        ...((item.parameters as Json[] | undefined) ?? []),
        ...((operation.parameters as Json[] | undefined) ?? []),
      ].map(parameter)
      // An operation's own parameter replaces a path item's of the same name and place.
      const byKey = new Map(all.map((p) => [`${p.in}:${p.name.toLowerCase()}`, p]))
      const requestBody = operation.requestBody as Json | undefined
      const content = (requestBody?.content ?? {}) as Record<string, Json>
      const json = content['application/json']
      if (requestBody && !json) {
        // A new kind of body (a file upload?) needs its own cases; refuse to pass it over silently.
        throw new Error(`${String(operation.operationId)} takes a body that is not JSON.`)
      }
      const security = (operation.security as unknown[] | undefined) ?? documentSecurity
      const merged = [...byKey.values()]
      operations.push({
        operationId: String(operation.operationId),
        method: method.toUpperCase(),
        path,
        parameters: merged,
        body: json
          ? {
              schema: (json.schema ?? {}) as Json,
              required: requestBody?.required === true,
              mediaTypes: Object.keys(content),
            }
          : undefined,
        requiredScope:
          typeof operation['x-required-scope'] === 'string'
            ? operation['x-required-scope']
            : undefined,
        // `[]` or an empty requirement `{}` among the options lets a caller in without one.
        authenticated:
          security.length > 0 &&
          security.every(
            (requirement) => isObject(requirement) && Object.keys(requirement).length > 0,
          ),
        itemSchema: merged.some((p) => p.component === 'q') ? itemSchemaOf(operation) : undefined,
      })
    }
  }
  return operations
}

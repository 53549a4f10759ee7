import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type Factories = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>

interface Validate {
  (data: unknown): unknown
  errors?: unknown
}

/** The facts Fastify hands a compiler, once per part of each route. */
type RouteSchema = Record<string, unknown>

/** How Fastify calls a compiler factory: with the shared schemas and its options. */
type Factory<T> = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => T

const requirePackage = createRequire(import.meta.url)

/**
 * Fastify's own compilers (Ajv for requests, fast-json-stringify for responses), each loaded at
 * the first request that needs it and compiling a route's schema at that route's first request,
 * instead of all of them at start: loading them and compiling all of the contract's request
 * schemas took more than a second of every sandbox start, while a session (a test, a user trying
 * one screen) asks a handful of routes. The answers are Fastify's defaults', with one change:
 * bodies are checked by an Ajv that never coerces. The server's Ajv options turn "5" into 5 for
 * query strings, path and header parameters, which arrive as text; a body is JSON and says what
 * it means, so `{"name": 123}` or `{"is_positive": ""}` is refused instead of stored as "123" or
 * read as false, as a strict service would.
 */
export function lazyCompilers(): Required<Pick<Factories, 'buildValidator' | 'buildSerializer'>> {
  // The packages' declared types describe the functions they wrap, not the route compilers
  // Fastify receives from them; these are the shapes Fastify calls.
  const validators = lazyFactory<Validate>(
    () => {
      const factory = (requirePackage('@fastify/ajv-compiler') as () => Factory<Validate>)()
      // Fastify asks for one compiler per set of options; the body's gets its own Ajv (the
      // package keeps one per distinct options), made only when a body is first checked.
      return (externalSchemas, options) => {
        const coercing = factory(externalSchemas, options)
        let strict: ((route: RouteSchema) => Validate) | undefined
        return (route) => {
          if (route.httpPart === 'headers') return coercing(withLowerCaseNames(route))
          if (route.httpPart !== 'body') return coercing(route)
          strict ??= factory(externalSchemas, withoutCoercion(options))
          return strict(route)
        }
      }
    },
    (compiled) => {
      // Fastify reads a failed validation's problems from the function's `errors`.
      const validate: Validate = (data) => {
        const inner = compiled()
        const valid = inner(data)
        validate.errors = inner.errors
        return valid
      }
      return validate
    },
  )
  const serializers = lazyFactory<(data: unknown) => string>(
    () =>
      (
        requirePackage('@fastify/fast-json-stringify-compiler') as () => Factory<
          (data: unknown) => string
        >
      )(),
    (compiled) => (data) => compiled()(data),
  )
  return {
    buildValidator: validators as unknown as Factories['buildValidator'] & object,
    buildSerializer: serializers,
  }
}

/**
 * A headers schema named as Node names headers, in lower case. Fastify does this itself only for
 * its own compiler: given ours, it passes `Idempotency-Key` through, which then never matched
 * the `idempotency-key` a request carries, and no header was ever checked.
 */
function withLowerCaseNames(route: RouteSchema): RouteSchema {
  const schema = route.schema as { properties?: Record<string, unknown>; required?: unknown }
  const properties = Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  )
  const required = Array.isArray(schema.required)
    ? schema.required.map((name) => String(name).toLowerCase())
    : schema.required
  return {
    ...route,
    schema: { ...schema, properties, ...(required === undefined ? {} : { required }) },
  }
}

/** Fastify's Ajv options (`{customOptions, plugins, onCreate}`) with coercion switched off. */
function withoutCoercion(options: unknown): unknown {
  const given = options as { customOptions?: Record<string, unknown> }
  return { ...given, customOptions: { ...given.customOptions, coerceTypes: false } }
}

/**
 * A compiler factory whose package is loaded, and each route's function compiled, only when a
 * route's function is first called; `wrap` makes the stand-in Fastify holds until then.
 */
function lazyFactory<T>(load: () => Factory<T>, wrap: (compiled: () => T) => T): Factory<T> {
  let factory: Factory<T> | undefined
  return (externalSchemas, options) => {
    let compiler: ((route: RouteSchema) => T) | undefined
    return (route) => {
      let compiled: T | undefined
      return wrap(() => {
        factory ??= load()
        compiler ??= factory(externalSchemas, options)
        compiled ??= compiler(route)
        return compiled
      })
    }
  }
}

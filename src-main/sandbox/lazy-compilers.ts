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
 * one screen) asks a handful of routes. The options and the answers are Fastify's defaults'.
 */
export function lazyCompilers(): Required<Pick<Factories, 'buildValidator' | 'buildSerializer'>> {
  // The packages' declared types describe the functions they wrap, not the route compilers
  // Fastify receives from them; these are the shapes Fastify calls.
  const validators = lazyFactory<Validate>(
    () => (requirePackage('@fastify/ajv-compiler') as () => Factory<Validate>)(),
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

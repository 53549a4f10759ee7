import AjvCompiler from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'

type BuildValidator = NonNullable<
  NonNullable<
    NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
  >['buildValidator']
>

interface Validate {
  (data: unknown): unknown
  errors?: unknown
}

/** How Fastify calls a validator compiler, once per part of each route. */
type CompileRoute = (route: {
  schema: unknown
  method: string
  url: string
  httpPart: string
}) => Validate

/**
 * Fastify's own Ajv compiler, with each route's validator compiled at that route's first request
 * instead of at start: compiling all of the contract's request schemas took more than a second
 * of every sandbox start, while a session (a test, a user trying one screen) asks a handful of
 * routes. The options and the answers are Fastify's default compiler's.
 */
export function lazyValidators(): BuildValidator {
  // The package's declared types describe the Ajv `compile` it wraps, not the route compiler
  // Fastify receives from it; this is the shape Fastify calls.
  const build = AjvCompiler() as unknown as (
    externalSchemas: unknown,
    ajvOptions: unknown,
  ) => CompileRoute
  const lazy = (externalSchemas: unknown, ajvOptions: unknown): CompileRoute => {
    // Even Ajv itself is made at the first request: with the contract added to it, that takes
    // a while, and a sandbox that is never asked anything never needs it.
    let compiler: CompileRoute | undefined
    return (route) => {
      let compiled: Validate | undefined
      // Fastify reads a failed validation's problems from the function's `errors`.
      const validate: Validate = (data) => {
        compiler ??= build(externalSchemas, ajvOptions)
        compiled ??= compiler(route)
        const valid = compiled(data)
        validate.errors = compiled.errors
        return valid
      }
      return validate
    }
  }
  return lazy as unknown as BuildValidator
}

import type { FastifySchemaValidationError } from 'fastify'
import { SandboxError, type FieldProblem } from '../errors'

/** The part of a request Fastify validated (its `SchemaErrorDataVar`, which it does not export). */
type SchemaErrorDataVar = 'body' | 'querystring' | 'params' | 'headers'

/** Ajv's error, with the `data` its `verbose` option adds: the value that failed. */
type AjvError = FastifySchemaValidationError & { data?: unknown }

/**
 * The part of the request a field is in, as the contract's ErrorDetail names it (`query.limit`).
 * Body fields carry no prefix, as every handler's own problems do (`nodes.1.inputs.0.name`).
 */
const PART: Record<SchemaErrorDataVar, string> = {
  body: '',
  querystring: 'query',
  params: 'path',
  headers: 'header',
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
}

/** The JSON type of a value, as a client would name what it sent (JSON has no integers). */
function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/** A short rendering of a sent value for a message; a huge one must not flood the answer. */
function preview(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined
  if (text === undefined) return kindOf(value)
  return text.length > 60 ? `${text.slice(0, 59)}…` : text
}

/** `a string or null` from Ajv's `string,null`. */
function typeList(types: unknown): string {
  return String(types)
    .split(',')
    .map((type) => ARTICLE[type] ?? type)
    .join(' or ')
}

/** `/nodes/0/name` → `nodes.0.name`, undoing JSON Pointer's escapes. */
function dotted(pointer: string): string[] {
  if (pointer === '') return []
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
}

function describe(error: AjvError, part: SchemaErrorDataVar): FieldProblem {
  const steps = [PART[part], ...dotted(error.instancePath)].filter(Boolean)
  const missing = error.params.missingProperty
  const extra = error.params.additionalProperty
  if (typeof missing === 'string') steps.push(missing)
  if (typeof extra === 'string') steps.push(extra)
  const field = steps.length > 0 ? steps.join('.') : null
  const subject = field ?? 'The body'
  let message: string
  switch (error.keyword) {
    case 'type':
      message = `${subject} must be ${typeList(error.params.type)} (got ${kindOf(error.data)}).`
      break
    case 'required':
      message = `${subject} is required.`
      break
    case 'additionalProperties':
      message = `${subject} is not a known field.`
      break
    case 'enum':
      message = `${subject} must be one of ${(error.params.allowedValues as unknown[]).map(preview).join(', ')} (got ${preview(error.data)}).`
      break
    case 'const':
      message = `${subject} must be ${preview(error.params.allowedValue)} (got ${preview(error.data)}).`
      break
    default:
      message = `${subject} ${error.message ?? 'is not valid'}.`
  }
  return { field, code: error.keyword, message }
}

/**
 * Fastify's schema error formatter: what the contract's schemas found wrong with a request's
 * body, query, path or headers, as the 422 VALIDATION_FAILED the service answers, with one
 * field-level problem per failure ("name must be a string (got number).").
 */
export function validationRefusal(errors: AjvError[], part: SchemaErrorDataVar): SandboxError {
  const problems = errors.map((error) => describe(error, part))
  const shown = problems.slice(0, 5).map((problem) => problem.message)
  const more = problems.length > shown.length ? ` (and ${String(problems.length - 5)} more)` : ''
  return new SandboxError(
    422,
    'VALIDATION_FAILED',
    `The request is not valid: ${shown.join(' ')}${more}`,
    problems,
  )
}

import type { Model, ModelInput } from '../../../src-shared/api'
import type { InputProblem, InputValidation } from './types'

/**
 * Twin of `src-main/executor/validate/values.ts` (the client's check before dispatch): kept apart
 * on purpose, since the sandbox stands in for a service we do not own and one shared rule would
 * hide its own bugs from every test; checked as one by `test/unit/twins/values.test.ts`, which
 * runs every declared input of the catalog through both and lists where they differ and why.
 */

/** Attributes of the `range` validator. */
export interface RangeAttrs {
  min?: number
  max?: number
}

/** Attributes of the `length` validator (characters). */
export interface LengthAttrs {
  min?: number
  max?: number
}

/** Attributes of the `enum` validator. */
export interface EnumAttrs {
  values: (string | number | boolean)[]
}

/** Attributes of the `pattern` validator; `hint` says in words what the pattern accepts. */
export interface PatternAttrs {
  pattern: string
  flags?: string
  hint?: string
}

/** Attributes of the `image_size` validator (pixels), checked once the image is loaded. */
export interface ImageSizeAttrs {
  min_width?: number
  min_height?: number
  max_width?: number
  max_height?: number
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const numberAttr = (attrs: Record<string, unknown> | null, key: string): number | undefined => {
  const value = attrs?.[key]
  return typeof value === 'number' ? value : undefined
}

/** Shows a value in a message: strings quoted, long ones shortened. */
function show(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'an object'
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value
}

/** How a message names an input: its display name, with its name when that reads differently. */
function label(def: ModelInput): string {
  if (!def.display_name) return def.name
  return def.display_name.toLowerCase() === def.name.replace(/_/g, ' ')
    ? def.display_name
    : `${def.display_name} (${def.name})`
}

function listWords(values: readonly unknown[]): string {
  return values.map((value) => (typeof value === 'string' ? value : show(value))).join(', ')
}

/** The type check of one value; returns the wanted type in words when it fails. */
function typeProblem(def: ModelInput, value: unknown): string | null {
  switch (def.variable_type_code) {
    case 'string':
    case 'text':
      return typeof value === 'string' ? null : 'text'
    case 'image':
    case 'video':
      return typeof value === 'string' && value.trim() !== ''
        ? null
        : `an ${def.variable_type_code} reference (a data: URL, an asset id or a URL)`
    case 'integer':
      return Number.isSafeInteger(value) ? null : 'a whole number'
    case 'seed':
      return Number.isSafeInteger(value) && (value as number) >= 0
        ? null
        : 'a whole number of 0 or more'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'a number'
    case 'boolean':
      return typeof value === 'boolean' ? null : 'true or false'
    case 'enum':
      return ['string', 'number', 'boolean'].includes(typeof value) ? null : 'one of the choices'
    default:
      return null
  }
}

/** The validator check of one well-typed value. */
function validatorProblem(def: ModelInput, value: unknown): InputProblem | null {
  const attrs = def.validator_attrs
  const name = label(def)
  switch (def.validator_code) {
    case 'range': {
      if (typeof value !== 'number') return null
      const min = numberAttr(attrs, 'min')
      const max = numberAttr(attrs, 'max')
      if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
        const bounds =
          min !== undefined && max !== undefined
            ? `between ${min} and ${max}`
            : min !== undefined
              ? `at least ${min}`
              : `at most ${String(max)}`
        return {
          field: def.name,
          code: 'range',
          message: `${name} must be ${bounds}, but it is ${value}.`,
        }
      }
      return null
    }
    case 'length': {
      if (typeof value !== 'string') return null
      const length = Array.from(value).length
      const min = numberAttr(attrs, 'min')
      const max = numberAttr(attrs, 'max')
      if ((min !== undefined && length < min) || (max !== undefined && length > max)) {
        const bounds =
          min !== undefined && max !== undefined
            ? `between ${min} and ${max} characters long`
            : min !== undefined
              ? `at least ${min} characters long`
              : `at most ${String(max)} characters long`
        return {
          field: def.name,
          code: 'length',
          message: `${name} must be ${bounds}, but it has ${length}.`,
        }
      }
      return null
    }
    case 'enum': {
      const values = Array.isArray(attrs?.values) ? (attrs.values as unknown[]) : []
      if (values.includes(value)) return null
      return {
        field: def.name,
        code: 'enum',
        message: `${name} must be one of ${listWords(values)}, but it is ${show(value)}.`,
      }
    }
    case 'pattern': {
      if (typeof value !== 'string' || typeof attrs?.pattern !== 'string') return null
      const flags = typeof attrs.flags === 'string' ? attrs.flags : ''
      const pattern = compiledPattern(attrs.pattern, flags)
      // A model whose own pattern does not compile is the model's fault, not the input's: the
      // service says so as a refusal of the value rather than failing the request.
      if (pattern === null) {
        return {
          field: def.name,
          code: 'pattern',
          message: `${name} cannot be checked: the model's pattern ${attrs.pattern} is not valid.`,
        }
      }
      if (pattern.test(value)) return null
      const hint = typeof attrs.hint === 'string' ? attrs.hint : `text matching ${attrs.pattern}`
      return {
        field: def.name,
        code: 'pattern',
        message: `${name} must be ${hint}, but it is ${show(value)}.`,
      }
    }
    default:
      // image_size needs the image itself: checked by the generators when the image is loaded.
      return null
  }
}

/** The problem with an image of this size for an `image_size`-validated input, or null. */
export function imageSizeProblem(
  def: ModelInput,
  width: number,
  height: number,
): InputProblem | null {
  if (def.validator_code !== 'image_size') return null
  const attrs = def.validator_attrs
  const minWidth = numberAttr(attrs, 'min_width') ?? 1
  const minHeight = numberAttr(attrs, 'min_height') ?? 1
  const maxWidth = numberAttr(attrs, 'max_width') ?? Infinity
  const maxHeight = numberAttr(attrs, 'max_height') ?? Infinity
  if (width >= minWidth && height >= minHeight && width <= maxWidth && height <= maxHeight) {
    return null
  }
  const limits: string[] = []
  if (numberAttr(attrs, 'min_width') !== undefined || numberAttr(attrs, 'min_height') !== undefined)
    limits.push(`at least ${minWidth}×${minHeight}`)
  if (maxWidth !== Infinity || maxHeight !== Infinity)
    limits.push(`at most ${String(maxWidth)}×${String(maxHeight)}`)
  return {
    field: def.name,
    code: 'image_size',
    message: `${label(def)} must be ${limits.join(' and ')} pixels, but the image is ${width}×${height}.`,
  }
}

/**
 * Checks a run input against a model's inputs: unknown names, required inputs, types and validators
 * (`image_size` excepted: it needs the image, so the generators check it when loading it). Inputs
 * left out (or null) get their default_value when their behaviour is `use_default`; other optional
 * inputs are left out. The returned input holds the known inputs only, in the model's input order.
 */
export function validateInput(model: Model, input: unknown): InputValidation {
  const defs = [...(model.inputs ?? [])].sort((a, b) => a.sort_order - b.sort_order)
  const problems: InputProblem[] = []
  const result: Record<string, unknown> = {}
  if (input !== undefined && input !== null && !isRecord(input)) {
    problems.push({
      field: 'input',
      code: 'type',
      message: `The input must be an object whose keys are input names, but it is ${show(input)}.`,
    })
    return { input: result, problems }
  }
  const given = input ?? {}
  const known = new Set(defs.map((def) => def.name))
  for (const key of Object.keys(given)) {
    if (!known.has(key)) {
      problems.push({
        field: key,
        code: 'unknown',
        message: `${model.slug} has no input named ${show(key)}; its inputs are ${defs.map((def) => def.name).join(', ')}.`,
      })
    }
  }
  for (const def of defs) {
    const value = Object.hasOwn(given, def.name) ? given[def.name] : undefined
    if (value === undefined || value === null) {
      if (def.is_required) {
        problems.push({
          field: def.name,
          code: 'required',
          message: `${label(def)} is required.`,
        })
      } else if (
        def.default_behavior_code === 'use_default' &&
        def.default_value !== null &&
        def.default_value !== undefined
      ) {
        result[def.name] = def.default_value
      }
      continue
    }
    const wanted = typeProblem(def, value)
    if (wanted !== null) {
      problems.push({
        field: def.name,
        code: 'type',
        message: `${label(def)} must be ${wanted}, but it is ${show(value)}.`,
      })
      continue
    }
    const problem = validatorProblem(def, value)
    if (problem) {
      problems.push(problem)
      continue
    }
    result[def.name] = value
  }
  return { input: result, problems }
}

function compiledPattern(pattern: string, flags: string): RegExp | null {
  try {
    return new RegExp(pattern, flags)
  } catch {
    return null
  }
}

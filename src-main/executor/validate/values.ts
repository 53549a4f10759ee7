import { listElement } from '../../../src-shared/domain/flow'

/**
 * Twin of `src-main/sandbox/models/validate.ts` (the service's check, as the sandbox plays it):
 * kept apart on purpose, since one shared rule would hide its own bugs from every test; checked
 * as one by `test/unit/twins/values.test.ts`, which runs every declared input of the catalog with
 * valid, invalid and edge values through both and lists where they differ and why.
 */

/**
 * Literal values against a port's variable type and validator, as the service checks a run's
 * input: a value typed into a node is refused before anything is dispatched rather than by a
 * 422 half-way through the flow. Codes the rules below do not know pass: the service knows them.
 */

export interface ValidatorRule {
  validator_code: string | null
  validator_attrs: { [key: string]: unknown } | null
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A media reference as the executor passes media around (`MediaRef` in executor/types). */
const isMediaRef = (value: unknown): value is Record<string, unknown> & { sha256: string } =>
  isRecord(value) && value.kind === 'media' && typeof value.sha256 === 'string'

/** A value in a message: short, quoted when text. */
export function show(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (isMediaRef(value)) return 'a media file'
  if (typeof value === 'object') return 'an object'
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value
}

/** What a value of `type` must be, in words, when `value` is not one; null when it is. */
export function typeProblem(type: string, value: unknown): string | null {
  const element = listElement(type)
  if (element !== null) {
    if (!Array.isArray(value)) return `a list of ${element}`
    for (const item of value) {
      const wanted = typeProblem(element, item)
      if (wanted !== null) return `a list whose items are each ${wanted}`
    }
    return null
  }
  switch (type) {
    case 'string':
    case 'text':
      return typeof value === 'string' ? null : 'text'
    case 'image':
    case 'video':
      return (typeof value === 'string' && value.trim() !== '') || isMediaRef(value)
        ? null
        : `an ${type} (a data: URL, an asset id, a URL or a media file)`
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

const numberAttr = (attrs: Record<string, unknown> | null, key: string) => {
  const value = attrs?.[key]
  return typeof value === 'number' ? value : undefined
}

function bounds(min: number | undefined, max: number | undefined, unit = ''): string {
  if (min !== undefined && max !== undefined) return `between ${min} and ${max}${unit}`
  return min !== undefined ? `at least ${min}${unit}` : `at most ${String(max)}${unit}`
}

/**
 * What is wrong with a well-typed value under a validator, in words ("must be …, but …"); null
 * when nothing is. Each item of a list is checked on its own.
 */
export function validatorProblem(rule: ValidatorRule, value: unknown): string | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = validatorProblem(rule, item)
      if (problem !== null) return problem
    }
    return null
  }
  const attrs = rule.validator_attrs
  switch (rule.validator_code) {
    case 'range': {
      if (typeof value !== 'number') return null
      const min = numberAttr(attrs, 'min')
      const max = numberAttr(attrs, 'max')
      if ((min === undefined || value >= min) && (max === undefined || value <= max)) return null
      return `must be ${bounds(min, max)}, but it is ${value}`
    }
    case 'length': {
      const size = typeof value === 'string' ? Array.from(value).length : undefined
      if (size === undefined) return null
      const min = numberAttr(attrs, 'min')
      const max = numberAttr(attrs, 'max')
      if ((min === undefined || size >= min) && (max === undefined || size <= max)) return null
      return `must be ${bounds(min, max, ' characters long')}, but it has ${size}`
    }
    case 'enum': {
      const values = Array.isArray(attrs?.values) ? (attrs.values as unknown[]) : []
      if (values.includes(value)) return null
      return `must be one of ${values.map(show).join(', ')}, but it is ${show(value)}`
    }
    case 'pattern': {
      if (typeof value !== 'string' || typeof attrs?.pattern !== 'string') return null
      let pattern: RegExp
      try {
        pattern = new RegExp(attrs.pattern, typeof attrs.flags === 'string' ? attrs.flags : '')
      } catch {
        return `cannot be checked: its pattern ${show(attrs.pattern)} is not a valid regular expression (fix validator_attrs.pattern)`
      }
      if (pattern.test(value)) return null
      const hint = typeof attrs.hint === 'string' ? attrs.hint : `text matching ${attrs.pattern}`
      return `must be ${hint}, but it is ${show(value)}`
    }
    case 'image_size': {
      // Only a media file that carries its size can be checked before the image is loaded.
      if (!isMediaRef(value)) return null
      const width = value.width
      const height = value.height
      if (typeof width !== 'number' || typeof height !== 'number') return null
      const minWidth = numberAttr(attrs, 'min_width') ?? 1
      const minHeight = numberAttr(attrs, 'min_height') ?? 1
      const maxWidth = numberAttr(attrs, 'max_width') ?? Infinity
      const maxHeight = numberAttr(attrs, 'max_height') ?? Infinity
      if (width >= minWidth && height >= minHeight && width <= maxWidth && height <= maxHeight) {
        return null
      }
      return `must be from ${minWidth}×${minHeight} to ${String(maxWidth)}×${String(maxHeight)} pixels, but the image is ${width}×${height}`
    }
    default:
      return null
  }
}

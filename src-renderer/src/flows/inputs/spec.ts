import { listElement } from '../../../../src-shared/domain/flow'
import type { PalettePort } from '../../../../src-shared/domain/flow-editor'
import type { FileFlowInput, FileNodeInput } from '../document'

/** What a field needs to know of the port it fills: its type, its validator, its default. */
export interface PortSpec {
  name: string
  /** The port's display name, or its name. */
  label: string
  variableType: string
  validatorCode: string | null
  validatorAttrs: Record<string, unknown> | null
  required: boolean
  defaultValue: unknown
  description: string | null
}

export function specOfNodeInput(input: FileNodeInput): PortSpec {
  return {
    name: input.name,
    label: input.display_name ?? input.name,
    variableType: input.variable_type_code,
    validatorCode: input.validator_code ?? null,
    validatorAttrs: input.validator_attrs ?? null,
    required: input.is_required ?? false,
    defaultValue: input.default_value ?? null,
    description: null,
  }
}

export function specOfFlowInput(input: FileFlowInput): PortSpec {
  return {
    name: input.name,
    label: input.display_name ?? input.name,
    variableType: input.variable_type_code,
    validatorCode: input.validator_code ?? null,
    validatorAttrs: input.validator_attrs ?? null,
    required: input.is_required ?? false,
    defaultValue: input.default_value ?? null,
    description: input.description ?? null,
  }
}

export function specOfPalettePort(port: PalettePort): PortSpec {
  return {
    name: port.name,
    label: port.displayName ?? port.name,
    variableType: port.variableType,
    validatorCode: port.validatorCode,
    validatorAttrs: port.validatorAttrs,
    required: port.required,
    defaultValue: port.defaultValue,
    description: port.description,
  }
}

const numberAttr = (spec: PortSpec, key: string): number | undefined => {
  const value = spec.validatorAttrs?.[key]
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

/** The bounds of a `range` validator (a number) or a `length` one (characters). */
export function boundsOf(spec: PortSpec): { min?: number; max?: number } {
  if (spec.validatorCode !== 'range' && spec.validatorCode !== 'length') return {}
  const min = numberAttr(spec, 'min')
  const max = numberAttr(spec, 'max')
  return { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) }
}

/** The choices of an `enum` validator, or of an `enum` port that lists its values. */
export function choicesOf(spec: PortSpec): (string | number | boolean)[] | null {
  if (spec.validatorCode !== 'enum' && spec.variableType !== 'enum') return null
  const values = spec.validatorAttrs?.values
  if (!Array.isArray(values)) return null
  return values.filter(
    (value): value is string | number | boolean =>
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean',
  )
}

/** "between 1 and 10", "at least 0", "at most 4": a range in words. */
export function boundsWords({ min, max }: { min?: number; max?: number }): string | null {
  if (min !== undefined && max !== undefined) return `between ${min} and ${max}`
  if (min !== undefined) return `at least ${min}`
  if (max !== undefined) return `at most ${max}`
  return null
}

/** Which field a port gets, from its variable type and validator. */
export type FieldKind =
  'text' | 'textarea' | 'number' | 'integer' | 'seed' | 'boolean' | 'enum' | 'media' | 'json'

export function fieldKindOf(spec: PortSpec): FieldKind {
  if (choicesOf(spec)) return 'enum'
  if (listElement(spec.variableType) !== null) return 'json'
  switch (spec.variableType) {
    case 'text':
      return 'textarea'
    case 'string':
      return 'text'
    case 'integer':
      return 'integer'
    case 'number':
      return 'number'
    case 'seed':
      return 'seed'
    case 'boolean':
      return 'boolean'
    case 'image':
    case 'video':
      return 'media'
    default:
      return 'json'
  }
}

/** A value as a short text, for placeholders ("default: 7"). */
export function valueWords(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}

import type { FlowNode } from '../../../src-shared/api'
import type { PortValue } from '../types'
import { BuiltinError } from './errors'

/**
 * Reads a node's resolved inputs with the types and validators GET /v1/builtin-nodes gives the
 * built-in's ports, so that a value that arrived through an edge at run time (and so escaped the
 * checks before dispatch) fails with INPUT_MISSING or INPUT_INVALID naming the node and the
 * input. An input that is absent or null is missing, as the service treats it. Numbers may come
 * as text (`--input width=512` on the command line): a string that reads fully as a finite
 * number is taken as that number.
 */

interface Bounds {
  min: number
  max: number
}

interface BaseOptions<T> {
  required?: boolean
  default?: T
}

interface NumberOptions extends BaseOptions<number> {
  range?: Bounds
}

interface TextOptions extends BaseOptions<string> {
  /** In characters (code points), as the service's `length` validator counts. */
  length?: Bounds
}

type Given<O, T> = O extends { required: true } | { default: T } ? T : T | undefined

export function describeNode(node: FlowNode): string {
  return `${JSON.stringify(node.label)} (${node.builtin_node_code ?? node.type_code})`
}

/** A value as a message may show it: short, and never a whole data: URL. */
export function show(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value)
  }
  return value === undefined ? 'nothing' : 'an object'
}

function numberFrom(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value.trim())
    return Number.isFinite(parsed) ? parsed : null
  }
  return null
}

export class PortReader {
  constructor(
    readonly node: FlowNode,
    readonly values: Readonly<Record<string, PortValue>>,
  ) {}

  /** Whether the input has a value (not absent, not null). */
  has(name: string): boolean {
    const value = this.values[name]
    return value !== undefined && value !== null
  }

  raw(name: string): PortValue {
    return this.values[name]
  }

  invalid(name: string, wanted: string, value: unknown = this.values[name]): BuiltinError {
    return new BuiltinError(
      'INPUT_INVALID',
      `The input ${name} of node ${describeNode(this.node)} must be ${wanted}, but it is ${show(value)}.`,
    )
  }

  missing(name: string, hint: string): BuiltinError {
    return new BuiltinError(
      'INPUT_MISSING',
      `The input ${name} of node ${describeNode(this.node)} has no value; ${hint}.`,
    )
  }

  /** The value, the default, or a failure when required; undefined when optional and absent. */
  private take<T>(name: string, options: BaseOptions<T>): unknown {
    if (this.has(name)) return this.values[name]
    if (options.default !== undefined) return options.default
    if (options.required) {
      throw this.missing(name, 'connect it, map a flow input to it or give it a value')
    }
    return undefined
  }

  text<O extends TextOptions>(name: string, options?: O): Given<O, string> {
    const value = this.take(name, options ?? {})
    if (value === undefined) return undefined as Given<O, string>
    if (typeof value !== 'string') throw this.invalid(name, 'text')
    const bounds = options?.length
    if (bounds) {
      const length = Array.from(value).length
      if (length < bounds.min || length > bounds.max) {
        throw this.invalid(
          name,
          `text of ${bounds.min} to ${bounds.max} characters (it has ${length})`,
          value,
        )
      }
    }
    return value
  }

  number<O extends NumberOptions>(name: string, options?: O): Given<O, number> {
    return this.numeric(name, options ?? {}, false) as Given<O, number>
  }

  integer<O extends NumberOptions>(name: string, options?: O): Given<O, number> {
    return this.numeric(name, options ?? {}, true) as Given<O, number>
  }

  private numeric(name: string, options: NumberOptions, whole: boolean): number | undefined {
    const value = this.take(name, options)
    if (value === undefined) return undefined
    const range = options.range
    const wanted = `${whole ? 'a whole number' : 'a number'}${range ? ` between ${range.min} and ${range.max}` : ''}`
    const parsed = numberFrom(value)
    if (parsed === null || (whole && !Number.isSafeInteger(parsed))) {
      throw this.invalid(name, wanted, value)
    }
    if (range && (parsed < range.min || parsed > range.max)) throw this.invalid(name, wanted, value)
    return parsed
  }

  boolean<O extends BaseOptions<boolean>>(name: string, options?: O): Given<O, boolean> {
    const value = this.take(name, options ?? {})
    if (value === undefined) return undefined as Given<O, boolean>
    if (typeof value !== 'boolean') throw this.invalid(name, 'true or false')
    return value
  }

  choice<T extends string, O extends BaseOptions<T>>(
    name: string,
    choices: readonly T[],
    options?: O,
  ): Given<O, T> {
    const value = this.take(name, options ?? {})
    if (value === undefined) return undefined as Given<O, T>
    if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
      throw this.invalid(name, `one of ${choices.join(', ')}`)
    }
    return value as Given<O, T>
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (value: unknown): value is string =>
  typeof value === 'string' && UUID.test(value)

/** A setting of the node's `config`, checked like an input but failing with CONFIG_INVALID. */
export function configInteger(
  node: FlowNode,
  key: string,
  range: Bounds,
  fallback: number,
): number {
  const value = node.config[key]
  if (value === undefined || value === null) return fallback
  if (
    !Number.isSafeInteger(value) ||
    (value as number) < range.min ||
    (value as number) > range.max
  ) {
    throw new BuiltinError(
      'CONFIG_INVALID',
      `The setting ${key} of node ${describeNode(node)} must be a whole number between ${range.min} and ${range.max}, but it is ${show(value)}.`,
    )
  }
  return value as number
}

export function configNumber(node: FlowNode, key: string, range: Bounds): number | null {
  const value = node.config[key]
  if (value === undefined || value === null) return null
  if (typeof value !== 'number' || !(value >= range.min && value <= range.max)) {
    throw new BuiltinError(
      'CONFIG_INVALID',
      `The setting ${key} of node ${describeNode(node)} must be a number between ${range.min} and ${range.max}, but it is ${show(value)}.`,
    )
  }
  return value
}

export function configChoice<T extends string>(
  node: FlowNode,
  key: string,
  choices: readonly T[],
  fallback: T,
): T {
  const value = node.config[key]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new BuiltinError(
      'CONFIG_INVALID',
      `The setting ${key} of node ${describeNode(node)} must be one of ${choices.join(', ')}, but it is ${show(value)}.`,
    )
  }
  return value as T
}

export function configUuid(node: FlowNode, key: string): string | null {
  const value = node.config[key]
  if (value === undefined || value === null || value === '') return null
  if (!isUuid(value)) {
    throw new BuiltinError(
      'CONFIG_INVALID',
      `The setting ${key} of node ${describeNode(node)} must be an id (a UUID), but it is ${show(value)}.`,
    )
  }
  return value.toLowerCase()
}

import type { FieldProblem } from '../errors'
import { MAX_BODY_DEPTH, MAX_STRING_LENGTH } from './limits'

/** Enough to show a client what to fix without answering a megabyte of problems. */
const MAX_REPORTED = 10

/** One object or array being walked: its keys (none for an array) and the next one to visit. */
interface Level {
  container: Record<string, unknown> | unknown[]
  keys: string[] | undefined
  next: number
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Why a key must not reach a handler, or undefined. `__proto__` (and `constructor.prototype`,
 * which Fastify's own parser also refused) would change what objects inherit if any code ever
 * copied the body with assignment instead of spread; naming it beats the "not valid JSON" that
 * the default parser answered.
 */
function forbidden(key: string, value: unknown): string | undefined {
  if (key === '__proto__') return '__proto__'
  if (key === 'constructor' && isRecord(value) && Object.hasOwn(value, 'prototype'))
    return 'constructor.prototype'
  return undefined
}

/**
 * The problems of a parsed JSON body with the limits of ./limits and the forbidden keys, each
 * with the dotted path where it is (null for the body itself). The walk keeps its own stack of
 * at most MAX_BODY_DEPTH levels instead of recursing, and never descends past the limit, so a
 * body nested 5,000 (or 5,000,000) deep costs as much as one nested 65 deep.
 */
export function findShapeProblems(body: unknown): FieldProblem[] {
  const problems: FieldProblem[] = []
  /** Keys from the body to the value being visited; path.length === levels.length - 1 between visits. */
  const path: string[] = []
  const levels: Level[] = []
  const here = (): string | null => (path.length > 0 ? path.join('.') : null)

  /** Checks a value at `path`; an object or array within the limit becomes the next level. */
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.length > MAX_STRING_LENGTH) {
        problems.push({
          field: here(),
          code: 'too_long',
          message: `${here() ?? 'The body'} is ${String(value.length)} characters long; strings may have at most ${String(MAX_STRING_LENGTH)}.`,
        })
      }
      return
    }
    if (typeof value !== 'object' || value === null) return
    if (levels.length + 1 > MAX_BODY_DEPTH) {
      problems.push({
        field: here(),
        code: 'too_deep',
        message: `${here() ?? 'The body'} is nested more than ${String(MAX_BODY_DEPTH)} levels deep (objects and arrays, counting the body); flatten it.`,
      })
      return
    }
    levels.push(
      Array.isArray(value)
        ? { container: value, keys: undefined, next: 0 }
        : { container: value as Record<string, unknown>, keys: Object.keys(value), next: 0 },
    )
  }

  visit(body)
  while (levels.length > 0 && problems.length < MAX_REPORTED) {
    const level = levels[levels.length - 1] as Level
    const size = level.keys ? level.keys.length : (level.container as unknown[]).length
    if (level.next >= size) {
      levels.pop()
      // The key under which the finished object or array sits (the body itself has none).
      if (levels.length > 0) path.pop()
      continue
    }
    const index = level.next++
    const key = level.keys ? (level.keys[index] as string) : String(index)
    const value = level.keys
      ? (level.container as Record<string, unknown>)[key]
      : (level.container as unknown[])[index]
    if (level.keys) {
      const refused = forbidden(key, value)
      if (refused) {
        const field = [...path, refused].join('.')
        problems.push({
          field,
          code: 'forbidden_key',
          message: `The key ${refused} (at ${field}) is not accepted: it could change what objects inherit. Rename it.`,
        })
        continue
      }
      if (key.length > MAX_STRING_LENGTH) {
        problems.push({
          field: here(),
          code: 'too_long',
          message: `${here() ?? 'The body'} has a key ${String(key.length)} characters long; keys may have at most ${String(MAX_STRING_LENGTH)}.`,
        })
        continue
      }
    }
    path.push(key)
    const depth = levels.length
    visit(value)
    if (levels.length === depth) path.pop()
  }
  return problems
}

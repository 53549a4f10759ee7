import type { FieldType } from '../contract'
import { canonicalUuid } from '../uuid'
import { normaliseDateTime } from './compile'
import { badList, quote } from './errors'
import type { Clause } from './query'

/** The fields of a list, with their types when the caller knows them (the contract does). */
export type ListFields = ReadonlySet<string> & {
  typeOf?: (field: string) => FieldType | undefined
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const MAX_LISTED_VALUES = 20

function listed(values: readonly string[]): string {
  const shown = values.slice(0, MAX_LISTED_VALUES).join(', ')
  return values.length > MAX_LISTED_VALUES ? `${shown}, …` : shown
}

/** What values of the type look like, for the message that refuses another. */
function expected(type: FieldType): string {
  switch (type.kind) {
    case 'uuid':
      return 'an id (a UUID such as 0190c0de-7b1a-7c3e-9d4f-5a6b7c8d9e0f)'
    case 'date-time':
      return 'a date-time such as 2026-01-01T00:00:00+00:00 (percent-encode + as %2B, or use Z)'
    case 'number':
      return 'a number such as 42 or 0.5'
    case 'boolean':
      return 'true or false'
    case 'enum':
      return `one of ${listed(type.values)}`
    case 'text':
      return `text matching ${quote(type.pattern ?? '')}${type.example ? `, such as ${type.example}` : ''}`
    case 'any':
      return 'any value'
  }
}

/** The value in the form the records hold it, or undefined when the field cannot hold it. */
function canonicalValue(type: FieldType, value: string, clause: string): string | undefined {
  switch (type.kind) {
    case 'uuid':
      return canonicalUuid(value)
    case 'date-time':
      // Refuses (with its own message) a value that looks like a date-time but is not one.
      return normaliseDateTime(value, clause) === undefined ? undefined : value
    case 'number':
      return NUMBER.test(value) && Number.isFinite(Number(value)) ? value : undefined
    case 'boolean':
      return value === 'true' || value === 'false' ? value : undefined
    case 'enum':
      return type.values.includes(value) ? value : undefined
    case 'text':
      return type.pattern === undefined || new RegExp(type.pattern, 'u').test(value)
        ? value
        : undefined
    case 'any':
      return value
  }
}

/**
 * The clauses of `q` with each value checked against its field's type and put in the form the
 * records hold (ids in lower case). A value the field can never hold is refused with a 400 that
 * names the clause and the form the field takes: `created_at>=yesterday` read as text would
 * quietly match nothing, and the caller would take the empty page for an answer. `~` searches
 * the text of any field and `null` is the null literal, so neither is checked. Fields without a
 * known type (a caller that passes plain names) are not checked either.
 */
export function checkValues(clauses: readonly Clause[], fields: ListFields): Clause[] {
  return clauses.map((clause) => {
    const type = fields.typeOf?.(clause.field)
    if (!type || clause.op === '~') return clause
    const values = clause.values.map((value) => {
      if (value === null) return null
      const canonical = canonicalValue(type, value, clause.source)
      if (canonical === undefined) {
        throw badList(
          `q clause ${quote(clause.source)}: ${clause.field} takes ${expected(type)}, not ${quote(value)}.`,
        )
      }
      return canonical
    })
    return { ...clause, values }
  })
}

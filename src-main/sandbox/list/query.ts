import { badList, quote } from './errors'

/**
 * The `q` filter grammar of `resources/openapi.yaml`:
 *
 *     q      = clause *(" and " clause)
 *     clause = field op value
 *     field  = [a-z_][a-z0-9_]*
 *     op     = "=" / "!=" / ">" / ">=" / "<" / "<=" / "~"
 *     value  = "null" / quoted / bare
 *     quoted = DQUOTE *(any character but DQUOTE or backslash / "\"" / "\\") DQUOTE
 *     bare   = one or more characters other than space and DQUOTE
 *
 * Parsed by a small hand-written scanner. Choices the grammar leaves open:
 * - `and` is case-insensitive and may be surrounded by several spaces; leading and trailing
 *   spaces are ignored; an empty (or all-space) `q` has no clauses.
 * - There are no spaces between field, operator and value: `status = ok` is refused with a message
 *   saying so. An operator is the whole run of `= ! < > ~` characters after the field, so
 *   `a==b` or `a=>1` are unknown operators rather than `=` with the value `=b`; quote a value that
 *   starts with one of those characters (`name="=x"`).
 * - With `=`, an unquoted `|` separates alternatives (`a|"b c"|null`); with every other operator
 *   `|` is an ordinary character of a bare value.
 * - `null` (unquoted, any case) is the null literal; `"null"` is the four-letter string. It works
 *   with `=` (is null, also as one alternative of an any-of) and `!=` (is not null) only.
 */

export type Operator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~'

export const OPERATORS: readonly Operator[] = ['=', '!=', '>', '>=', '<', '<=', '~']

/** One `field op value` clause of `q`. */
export interface Clause {
  field: string
  op: Operator
  /** The value (unescaped), or several for `=` with `a|b|c`; `null` is the null literal. */
  values: (string | null)[]
  /** The clause as written in `q`, for messages. */
  source: string
}

export const MAX_Q_LENGTH = 4000
export const MAX_CLAUSES = 50
export const MAX_ALTERNATIVES = 100

const OPERATOR_CHARS = '=!<>~'
const ALLOWED_OPS = OPERATORS.join(' ')

const isFieldChar = (c: string) =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_'
const isLowerFieldStart = (c: string) => (c >= 'a' && c <= 'z') || c === '_'
const isLowerFieldChar = (c: string) => isLowerFieldStart(c) || (c >= '0' && c <= '9')

const GRAMMAR_HINT =
  'q is clauses `field op value` joined by ` and `, e.g. `status_code=succeeded|failed and name~"red fox"`'

class Scanner {
  pos = 0

  constructor(readonly q: string) {}

  done(): boolean {
    return this.pos >= this.q.length
  }

  /** The character at the cursor, or '' at the end. */
  char(): string {
    return this.q.charAt(this.pos)
  }

  /** Skips spaces; says whether there were any. */
  skipSpaces(): boolean {
    const start = this.pos
    while (this.char() === ' ') this.pos++
    return this.pos > start
  }

  /** The next word (up to a space), for messages. */
  word(): string {
    const end = this.q.indexOf(' ', this.pos)
    return this.q.slice(this.pos, end < 0 ? this.q.length : end)
  }

  /** Consumes `and` (any case) when it is followed by a space or the end. */
  and(): boolean {
    if (this.q.slice(this.pos, this.pos + 3).toLowerCase() !== 'and') return false
    const after = this.q.charAt(this.pos + 3)
    if (after !== '' && after !== ' ') return false
    this.pos += 3
    return true
  }

  clause(): Clause {
    const start = this.pos
    const field = this.field()
    const op = this.operator(start, field)
    const values = this.values(start, field, op)
    const source = this.q.slice(start, this.pos)
    if (values.length > MAX_ALTERNATIVES) {
      throw badList(
        `q clause ${quote(source)} lists ${values.length} alternatives; at most ${MAX_ALTERNATIVES} are allowed.`,
      )
    }
    if (values.includes(null) && op !== '=' && op !== '!=') {
      throw badList(
        `q clause ${quote(source)} compares with null using \`${op}\`; null works only with = (is null) and != (is not null). Write "null" in quotes for the text null.`,
      )
    }
    return { field, op, values, source }
  }

  private field(): string {
    const start = this.pos
    while (isFieldChar(this.char())) this.pos++
    const field = this.q.slice(start, this.pos)
    if (field === '') {
      throw badList(`q: expected a field name at ${quote(this.word())}; ${GRAMMAR_HINT}.`)
    }
    const first = field.charAt(0)
    if (!isLowerFieldStart(first) || !Array.from(field).every(isLowerFieldChar)) {
      throw badList(
        `q: ${quote(field)} is not a field name; field names are lowercase letters, digits and _ and do not start with a digit.`,
      )
    }
    return field
  }

  private operator(start: number, field: string): Operator {
    const opStart = this.pos
    while (this.char() !== '' && OPERATOR_CHARS.includes(this.char())) this.pos++
    const text = this.q.slice(opStart, this.pos)
    if (text === '') {
      const clause = this.q.slice(start, this.pos) + this.word()
      if (this.done() || this.char() === ' ') {
        const next = this.q.slice(this.pos).trimStart()
        const spaced = next !== '' && OPERATOR_CHARS.includes(next.charAt(0))
        throw badList(
          spaced
            ? `q clause starting ${quote(field + ' ' + next)} has spaces around the operator; write \`field op value\` without spaces (quote the value if it holds spaces).`
            : `q clause ${quote(field)} has no operator; allowed operators: ${ALLOWED_OPS}.`,
        )
      }
      throw badList(
        `q clause ${quote(clause)}: unknown operator at ${quote(this.word())}; allowed operators: ${ALLOWED_OPS}.`,
      )
    }
    const op = OPERATORS.find((candidate) => candidate === text)
    if (!op) {
      throw badList(
        `q clause ${quote(this.q.slice(start, this.pos) + this.word())}: unknown operator ${quote(text)}; allowed operators: ${ALLOWED_OPS}. Quote a value that starts with one of = ! < > ~.`,
      )
    }
    return op
  }

  private values(start: number, field: string, op: Operator): (string | null)[] {
    if (this.done() || this.char() === ' ') {
      const rest = this.q.slice(this.pos).trimStart()
      throw badList(
        rest !== '' && !/^and( |$)/i.test(rest)
          ? `q clause starting ${quote(`${field}${op} ${rest}`)} has a space after the operator; write \`field op value\` without spaces (quote the value if it holds spaces).`
          : `q clause ${quote(this.q.slice(start, this.pos))} has no value; write "" for the empty text or null for no value.`,
      )
    }
    const values: (string | null)[] = []
    for (;;) {
      values.push(this.value(start, op))
      if (op !== '=' || this.char() !== '|') break
      this.pos++
      if (this.done() || this.char() === ' ' || this.char() === '|') {
        throw badList(
          `q clause ${quote(this.q.slice(start, this.pos))} has an empty alternative after \`|\`; write "" for the empty text.`,
        )
      }
    }
    if (!this.done() && this.char() !== ' ') {
      throw badList(
        `q clause ${quote(this.q.slice(start, this.pos) + this.word())}: unexpected ${quote(this.char())} after the value; put a space and \`and\` between clauses${op === '=' ? '' : ' (`|` means any-of only with =)'}.`,
      )
    }
    return values
  }

  private value(start: number, op: Operator): string | null {
    if (this.char() === '"') return this.quoted(start)
    const valueStart = this.pos
    while (
      !this.done() &&
      this.char() !== ' ' &&
      this.char() !== '"' &&
      !(op === '=' && this.char() === '|')
    )
      this.pos++
    if (this.char() === '"') {
      throw badList(
        `q clause ${quote(this.q.slice(start, this.pos) + this.word())} has a quote inside an unquoted value; quote the whole value and escape inner quotes as \\".`,
      )
    }
    const text = this.q.slice(valueStart, this.pos)
    return text.toLowerCase() === 'null' ? null : text
  }

  private quoted(start: number): string {
    const open = this.pos
    this.pos++
    let text = ''
    for (;;) {
      const c = this.char()
      if (c === '') {
        throw badList(
          `q clause ${quote(this.q.slice(start))} has a quoted value that is never closed (the quote at position ${open + 1}); end it with ".`,
        )
      }
      if (c === '"') {
        this.pos++
        return text
      }
      if (c === '\\') {
        const escaped = this.q.charAt(this.pos + 1)
        if (escaped !== '"' && escaped !== '\\') {
          throw badList(
            `q clause ${quote(this.q.slice(start, this.pos + 2))} uses the escape ${quote('\\' + escaped)}; inside quotes only \\" and \\\\ are escapes.`,
          )
        }
        text += escaped
        this.pos += 2
        continue
      }
      text += c
      this.pos++
    }
  }
}

/** Parses `q` into clauses; throws a 400 {@link ListError} that quotes the offending part. */
export function parseQuery(q: string): Clause[] {
  if (q.length > MAX_Q_LENGTH) {
    throw badList(`q is ${q.length} characters long; at most ${MAX_Q_LENGTH} are allowed.`)
  }
  const scanner = new Scanner(q)
  scanner.skipSpaces()
  const clauses: Clause[] = []
  while (!scanner.done()) {
    if (clauses.length === MAX_CLAUSES) {
      throw badList(`q has more than ${MAX_CLAUSES} clauses; at most ${MAX_CLAUSES} are allowed.`)
    }
    const clause = scanner.clause()
    clauses.push(clause)
    scanner.skipSpaces()
    if (scanner.done()) break
    if (!scanner.and()) {
      const hint = /^\d\d:\d\d/.test(scanner.word())
        ? ' (a `+` in a time offset must be percent-encoded as %2B, or it arrives as a space)'
        : ''
      throw badList(
        `q: expected \` and \` after the clause ${quote(clause.source)} but found ${quote(scanner.word())}${hint}; ${GRAMMAR_HINT}.`,
      )
    }
    scanner.skipSpaces()
    if (scanner.done()) {
      throw badList(`q ends with \`and\`; add a clause after it or remove it.`)
    }
  }
  return clauses
}

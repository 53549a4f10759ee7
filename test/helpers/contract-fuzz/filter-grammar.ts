/**
 * The contract's `q` grammar (info.description, "The q filter grammar"), as a recognizer:
 *
 *     q      = clause *(" and " clause)
 *     clause = field op value
 *     field  = [a-z_][a-z0-9_]*
 *     op     = "=" / "!=" / ">" / ">=" / "<" / "<=" / "~"
 *     value  = "null" / quoted / bare
 *     quoted = DQUOTE *(any character but DQUOTE or backslash / "\"" / "\\") DQUOTE
 *     bare   = one or more characters other than space and DQUOTE
 *
 * The fuzzer only calls a filter malformed when this says so, so that a filter the grammar
 * allows is never expected to be refused for its syntax.
 */
export interface FilterClause {
  field: string
  op: string
  /** The value as written: `null`, a bare word, or the quoted text with its escapes undone. */
  value: string
  quoted: boolean
}

const FIELD = /^[a-z_][a-z0-9_]*/
const OPS = ['!=', '>=', '<=', '=', '>', '<', '~']

/** One clause at `from`; every way of reading it (`a>=b` is `>=` then `b`, or `>` then `=b`). */
function clausesAt(text: string, from: number): { clause: FilterClause; end: number }[] {
  const field = FIELD.exec(text.slice(from))
  if (!field) return []
  const afterField = from + field[0].length
  const readings: { clause: FilterClause; end: number }[] = []
  for (const op of OPS) {
    if (!text.startsWith(op, afterField)) continue
    const at = afterField + op.length
    if (text[at] === '"') {
      let value = ''
      let index = at + 1
      let closed = false
      while (index < text.length) {
        const char = text.charAt(index)
        if (char === '"') {
          closed = true
          break
        }
        if (char === '\\') {
          const next = text[index + 1]
          if (next !== '"' && next !== '\\') break
          value += next
          index += 2
          continue
        }
        value += char
        index++
      }
      if (closed) {
        readings.push({ clause: { field: field[0], op, value, quoted: true }, end: index + 1 })
      }
      continue
    }
    let end = at
    while (end < text.length && text[end] !== ' ' && text[end] !== '"') end++
    if (end > at) {
      readings.push({
        clause: { field: field[0], op, value: text.slice(at, end), quoted: false },
        end,
      })
    }
  }
  return readings
}

/** The clauses of a filter when the grammar allows it (the first complete reading), else null. */
export function parseFilter(text: string): FilterClause[] | null {
  const walk = (from: number): FilterClause[] | null => {
    for (const { clause, end } of clausesAt(text, from)) {
      if (end === text.length) return [clause]
      if (text.startsWith(' and ', end)) {
        const rest = walk(end + ' and '.length)
        if (rest) return [clause, ...rest]
      }
    }
    return null
  }
  return walk(0)
}

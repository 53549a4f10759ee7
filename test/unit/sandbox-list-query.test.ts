import { describe, expect, it } from 'vitest'
import {
  ListError,
  MAX_ALTERNATIVES,
  MAX_CLAUSES,
  MAX_Q_LENGTH,
  OPERATORS,
  parseQuery,
} from '../../src-main/sandbox/list'

/** The ListError thrown by parsing `q`, which the test expects. */
function refusal(q: string): ListError {
  try {
    parseQuery(q)
  } catch (error) {
    expect(error).toBeInstanceOf(ListError)
    return error as ListError
  }
  throw new Error(`parseQuery accepted ${JSON.stringify(q)}`)
}

describe('parseQuery', () => {
  it('parses every operator', () => {
    for (const op of OPERATORS) {
      expect(parseQuery(`size${op}42`)).toEqual([
        { field: 'size', op, values: ['42'], source: `size${op}42` },
      ])
    }
  })

  it('treats an empty or all-space q as no clauses', () => {
    expect(parseQuery('')).toEqual([])
    expect(parseQuery('   ')).toEqual([])
  })

  it('joins clauses with a case-insensitive `and`, lenient about spaces', () => {
    const clauses = parseQuery('  a=1 and b!=2   AND  c~x And d<=2026-01-01T00:00:00+00:00 ')
    expect(clauses.map(({ field, op, values }) => [field, op, values])).toEqual([
      ['a', '=', ['1']],
      ['b', '!=', ['2']],
      ['c', '~', ['x']],
      ['d', '<=', ['2026-01-01T00:00:00+00:00']],
    ])
  })

  it('reads the example of the spec', () => {
    expect(
      parseQuery(
        'status_code=succeeded|failed and created_at>=2026-01-01T00:00:00+00:00 and name~"red fox"',
      ).map(({ field, op, values }) => ({ field, op, values })),
    ).toEqual([
      { field: 'status_code', op: '=', values: ['succeeded', 'failed'] },
      { field: 'created_at', op: '>=', values: ['2026-01-01T00:00:00+00:00'] },
      { field: 'name', op: '~', values: ['red fox'] },
    ])
  })

  it('unescapes quoted values and keeps what is special elsewhere literal inside quotes', () => {
    expect(parseQuery('name="say \\"hi\\" \\\\ bye"')[0]?.values).toEqual(['say "hi" \\ bye'])
    expect(parseQuery('name="a|b"')[0]?.values).toEqual(['a|b'])
    expect(parseQuery('name="x and y=2"')[0]?.values).toEqual(['x and y=2'])
    expect(parseQuery('name=""')[0]?.values).toEqual([''])
    expect(parseQuery('name="=x"')[0]?.values).toEqual(['=x'])
    expect(parseQuery('name="null"')[0]?.values).toEqual(['null'])
  })

  it('splits any-of alternatives with `=` only, quoted or not, null included', () => {
    expect(parseQuery('status=a|"b c"|null|d')[0]?.values).toEqual(['a', 'b c', null, 'd'])
    expect(parseQuery('name~a|b')[0]?.values).toEqual(['a|b'])
    expect(parseQuery('name!=a|b')[0]?.values).toEqual(['a|b'])
  })

  it('reads the unquoted null literal for = and !=', () => {
    expect(parseQuery('error=null')[0]).toMatchObject({ op: '=', values: [null] })
    expect(parseQuery('error!=NULL')[0]).toMatchObject({ op: '!=', values: [null] })
  })

  it('keeps bare values with other punctuation whole', () => {
    expect(parseQuery('url=https://x.test/a?b=c&d')[0]?.values).toEqual(['https://x.test/a?b=c&d'])
    expect(parseQuery('n>=-1.5e3')[0]).toMatchObject({ op: '>=', values: ['-1.5e3'] })
  })

  it.each([
    [
      'null with a range operator',
      'size>null',
      /`size>null`.*null works only with = \(is null\) and !=/,
    ],
    ['null with contains', 'name~null', /`name~null`.*null works only with =/],
    [
      'an unknown operator',
      'name==x',
      /unknown operator `==`; allowed operators: = != > >= < <= ~/,
    ],
    ['another unknown operator', 'size=>3', /unknown operator `=>`/],
    ['no operator at all', 'name:x', /`name:x`: unknown operator at `:x`; allowed operators/],
    ['a lone field', 'name', /`name` has no operator; allowed operators/],
    ['spaces around the operator', 'name = x', /`name = x` has spaces around the operator/],
    ['a space after the operator', 'name= x', /space after the operator/],
    ['a missing value', 'name=', /`name=` has no value; write "" for the empty text or null/],
    ['a missing value before and', 'name= and a=1', /`name=` has no value/],
    ['an empty alternative', 'status=a||b', /empty alternative after `\|`/],
    ['a trailing bar', 'status=a|', /empty alternative/],
    [
      'an unclosed quote',
      'name="red fox',
      /never closed \(the quote at position 6\); end it with "/,
    ],
    [
      'an unknown escape',
      'name="a\\nb"',
      /escape `\\n`; inside quotes only \\" and \\\\ are escapes/,
    ],
    [
      'a quote inside a bare value',
      'name=red"fox"',
      /quote inside an unquoted value; quote the whole value/,
    ],
    ['text after a quoted value', 'name="red"fox', /unexpected `f` after the value/],
    ['a bar after a quoted value for ~', 'name~"a"|b', /`\|` means any-of only with =/],
    ['a missing `and`', 'a=1 b=2', /expected ` and ` after the clause `a=1` but found `b=2`/],
    ['`or`', 'a=1 or b=2', /found `or`/],
    ['a trailing `and`', 'a=1 and ', /q ends with `and`/],
    ['an uppercase field', 'Name=x', /`Name` is not a field name; field names are lowercase/],
    ['a field starting with a digit', '1st=x', /`1st` is not a field name/],
    ['no field', '=x', /expected a field name at `=x`/],
    ['a value starting with the operator', 'a=1 and >2', /expected a field name at `>2`/],
  ])('refuses %s with a message quoting it', (_name, q, message) => {
    const error = refusal(q)
    expect(error.status).toBe(400)
    expect(error.code).toBe('BAD_REQUEST')
    expect(error.errors).toBeNull()
    expect(error.message).toMatch(message)
  })

  it('hints at percent-encoding when a + offset arrived as a space', () => {
    expect(refusal('created_at>=2026-01-01T00:00:00 00:00').message).toMatch(
      /percent-encoded as %2B/,
    )
  })

  it('bounds the size of q', () => {
    expect(refusal(`name=${'x'.repeat(MAX_Q_LENGTH)}`).message).toMatch(
      /characters long; at most 4000/,
    )
    const many = Array.from({ length: MAX_CLAUSES + 1 }, (_, i) => `f${i}=1`).join(' and ')
    expect(many.length).toBeLessThan(MAX_Q_LENGTH)
    expect(refusal(many).message).toMatch(/more than 50 clauses/)
    expect(parseQuery(many.slice(0, many.lastIndexOf(' and ')))).toHaveLength(MAX_CLAUSES)
    const alternatives = Array.from({ length: MAX_ALTERNATIVES + 1 }, (_, i) => i).join('|')
    expect(refusal(`n=${alternatives}`).message).toMatch(/101 alternatives; at most 100/)
  })

  it('shortens a huge offending part in its message', () => {
    const error = refusal(`name="${'y'.repeat(3000)}`)
    expect(error.message.length).toBeLessThan(400)
  })
})

import { describe, expect, it } from 'vitest'
import { redact, REDACTED, redactDeep } from '../../src-main/log/redact'

const KEY = 'sk-live-SENTINEL-4f1d2a9b7c3e'

describe('redact', () => {
  it('replaces every occurrence of each secret', () => {
    expect(redact(`a ${KEY} b ${KEY}`, [KEY])).toBe(`a ${REDACTED} b ${REDACTED}`)
    expect(redact('one two', ['one', 'two'])).toBe(`${REDACTED} ${REDACTED}`)
  })

  it('catches any Bearer token by its shape', () => {
    expect(redact('Authorization: Bearer abc.def-ghi', [])).toBe(
      `Authorization: Bearer ${REDACTED}`,
    )
    expect(redact('"bearer xyz"', [])).toBe(`"bearer ${REDACTED}"`)
  })

  it('ignores empty and missing secrets instead of mangling the text', () => {
    expect(redact('plain text', ['', null, undefined])).toBe('plain text')
  })

  it('treats secrets literally, not as patterns', () => {
    expect(redact('a.c abc $& a+c', ['a.c', 'a+c'])).toBe(`${REDACTED} abc $& ${REDACTED}`)
  })

  it('reaches every string of a JSON value, keys included', () => {
    const value = { [KEY]: [KEY, { nested: `x${KEY}y`, n: 1, ok: true, none: null }] }
    const clean = redactDeep(value, [KEY])
    expect(JSON.stringify(clean)).not.toContain(KEY)
    expect(clean).toEqual({
      [REDACTED]: [REDACTED, { nested: `x${REDACTED}y`, n: 1, ok: true, none: null }],
    })
  })
})

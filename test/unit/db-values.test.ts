import { describe, expect, it } from 'vitest'
import { ftsQuery, runInputText } from '../../src-main/db'
import { fileStamp } from '../../src-main/db/connection'
import {
  decimalMicro,
  decodeCursor,
  encodeCursor,
  pageLimit,
  timeMs,
  timeMsOrNull,
} from '../../src-main/db/values'

describe('decimalMicro', () => {
  it('turns the contract decimal strings into exact millionths', () => {
    expect(decimalMicro('0.0125')).toBe(12_500)
    expect(decimalMicro('0.0050')).toBe(5_000)
    expect(decimalMicro('12')).toBe(12_000_000)
    expect(decimalMicro('+3.')).toBe(3_000_000)
    expect(decimalMicro('.5')).toBe(500_000)
    expect(decimalMicro('-0.25')).toBe(-250_000)
    expect(decimalMicro('007.000001')).toBe(7_000_001)
    expect(decimalMicro('0')).toBe(0)
  })

  it('rounds half away from zero past six places', () => {
    expect(decimalMicro('0.0000005')).toBe(1)
    expect(decimalMicro('0.0000004999')).toBe(0)
    expect(decimalMicro('-0.0000005')).toBe(-1)
    expect(decimalMicro('-0.0000001')).toBe(0)
  })

  it('gives null for null and for what is not a decimal, so the text is still kept', () => {
    expect(decimalMicro(null)).toBeNull()
    expect(decimalMicro(undefined)).toBeNull()
    expect(decimalMicro('')).toBeNull()
    expect(decimalMicro('.')).toBeNull()
    expect(decimalMicro('-')).toBeNull()
    expect(decimalMicro('1e3')).toBeNull()
    expect(decimalMicro('12,5')).toBeNull()
    expect(decimalMicro('99999999999999999999')).toBeNull()
  })
})

describe('timeMs', () => {
  it('reads Z, +00:00 and any number of fraction digits as the same instant', () => {
    const ms = Date.UTC(2026, 0, 1, 12, 0, 0, 123)
    expect(timeMs('2026-01-01T12:00:00.123Z', 'at')).toBe(ms)
    expect(timeMs('2026-01-01T12:00:00.123+00:00', 'at')).toBe(ms)
    expect(timeMs('2026-01-01T12:00:00.123456+00:00', 'at')).toBe(ms)
    expect(timeMs('2026-01-01T14:00:00.123+02:00', 'at')).toBe(ms)
    expect(timeMsOrNull(null, 'at')).toBeNull()
  })

  it('names the field of a time that does not parse', () => {
    expect(() => timeMs('yesterday', 'run.created_at')).toThrow(/run.created_at is not a date-time/)
  })
})

describe('keyset cursors', () => {
  it('round-trip and refuse what they did not make', () => {
    expect(decodeCursor(encodeCursor(1_700_000_000_000, 42), 'number')).toEqual([
      1_700_000_000_000, 42,
    ])
    expect(decodeCursor(encodeCursor('/Clients/Lumen', 7), 'string')).toEqual(['/Clients/Lumen', 7])
    expect(() => decodeCursor(encodeCursor('/a', 1), 'number')).toThrow(/not a cursor/)
    expect(() => decodeCursor('!!!', 'number')).toThrow(/not a cursor/)
    expect(() => decodeCursor(Buffer.from('[1,"x"]').toString('base64url'), 'number')).toThrow(
      /not a cursor/,
    )
  })

  it('page sizes default to 50 and stop at 500', () => {
    expect(pageLimit(undefined)).toBe(50)
    expect(pageLimit(10_000)).toBe(500)
    expect(() => pageLimit(0)).toThrow(RangeError)
    expect(() => pageLimit(1.5)).toThrow(RangeError)
  })
})

describe('runInputText', () => {
  it('takes the prompt apart and keeps the other words, not the references', () => {
    expect(
      runInputText({
        negative_prompt: 'blurry',
        prompt: 'a red fox',
        width: 512,
        style: 'ink',
        image_url: 'https://example.com/a.png',
        mask: 'data:image/png;base64,AAAA',
        tags: ['autumn', 'https://example.com/tag', 3],
        nested: { caption: 'not read' },
      }),
    ).toEqual({ prompt: 'a red fox', other: 'blurry\nink\nautumn' })
    expect(runInputText({ text: 'a caption' })).toEqual({ prompt: 'a caption', other: null })
    expect(runInputText({ subject: 'a heron' })).toEqual({ prompt: null, other: 'a heron' })
    expect(runInputText({ seed: 7 })).toEqual({ prompt: null, other: null })
  })
})

describe('ftsQuery', () => {
  it('quotes every word, escapes quotes, and makes the last word a prefix', () => {
    expect(ftsQuery('red fox')).toBe('"red" "fox"*')
    expect(ftsQuery('say "hi" NEAR(x)')).toBe('"say" """hi""" "NEAR(x)"*')
    expect(ftsQuery('  ')).toBeNull()
    expect(ftsQuery('* - ()')).toBeNull()
  })
})

describe('fileStamp', () => {
  it('is UTC, to the second, with no characters a file system refuses', () => {
    expect(fileStamp(new Date(Date.UTC(2026, 10, 21, 6, 30, 5, 999)))).toBe('20261121T063005Z')
  })
})

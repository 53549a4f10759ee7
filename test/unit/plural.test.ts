import { describe, expect, it } from 'vitest'
import { plural } from '../../src-shared/domain/plural'

describe('plural', () => {
  it('says one thing in the singular and every other count in the plural', () => {
    expect(plural(1, 'parameter')).toBe('1 parameter')
    expect(plural(0, 'parameter')).toBe('0 parameters')
    expect(plural(2, 'node')).toBe('2 nodes')
    expect(plural(1, 'match', 'matches')).toBe('1 match')
    expect(plural(3, 'match', 'matches')).toBe('3 matches')
  })

  it('groups the digits the same way on every machine', () => {
    expect(plural(12_345, 'file')).toBe('12,345 files')
  })
})

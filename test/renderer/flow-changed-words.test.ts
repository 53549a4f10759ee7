import { describe, expect, it } from 'vitest'
import { changedWords, nodeKindWords } from '../../src-renderer/src/flows/words'

/**
 * The one date formatter of the flow list. The process runs in whatever time zone the machine
 * has; the cases below hold in every one of them, which is the point.
 */

const NOW = Date.parse('2026-11-28T15:00:00Z')

describe('when a flow changed', () => {
  it('counts recent changes', () => {
    expect(changedWords(NOW - 10_000, NOW)).toBe('just now')
    expect(changedWords(NOW - 5 * 60_000, NOW)).toBe('5 min ago')
    expect(changedWords(NOW - 3 * 3_600_000, NOW)).toBe('3 h ago')
    expect(changedWords(NOW - 30 * 3_600_000, NOW)).toBe('yesterday')
  })

  it('reads a date-only time (midnight UTC) as its own calendar day in every time zone', () => {
    expect(changedWords(Date.parse('2026-01-01T00:00:00Z'), NOW)).toBe('on Jan 1')
    expect(changedWords(Date.parse('2025-12-31T00:00:00Z'), NOW)).toBe('on Dec 31, 2025')
    // Even when it is only hours old: a date has no hours to count.
    expect(changedWords(Date.parse('2026-11-28T00:00:00Z'), NOW)).toBe('on Nov 28')
  })

  it('reads any other time in local time', () => {
    const at = NOW - 20 * 24 * 3_600_000 + 1
    const local = new Date(at).toLocaleDateString('en-US', { day: 'numeric', month: 'short' })
    expect(changedWords(at, NOW)).toBe(`on ${local}`)
  })
})

describe('what a node is, in words', () => {
  it('never shows an internal code', () => {
    expect(nodeKindWords({ type_code: 'wfengine_workflow' })).toBe('ComfyUI workflow')
    expect(nodeKindWords({ type_code: 'model' })).toBe('Model')
    expect(nodeKindWords({ type_code: 'sub_flow' })).toBe('Flow')
    expect(nodeKindWords({ type_code: 'builtin', builtin_node_code: 'save_to_assets' })).toBe(
      'save to assets',
    )
    // A subtitle the flow gives its node says it best.
    expect(nodeKindWords({ type_code: 'model', subtitle: 'The hero shot' })).toBe('The hero shot')
  })
})

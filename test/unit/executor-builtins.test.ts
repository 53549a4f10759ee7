import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { FlowNode } from '../../src-shared/api'
import {
  clientRefOf,
  compareNumbers,
  DEFAULT_MAX_ATTEMPTS,
  fillTemplate,
  gateOf,
  isMediaRef,
  linesOf,
  OPERATORS,
  placeholdersOf,
  seededIndex,
} from '../../src-main/executor/builtins'

function nodeWith(config: Record<string, unknown>): FlowNode {
  return {
    id: randomUUID(),
    flow_id: randomUUID(),
    slug: 'gate',
    label: 'Gate',
    subtitle: null,
    type_code: 'builtin',
    x: 0,
    y: 0,
    width: 200,
    config,
    collapsed: false,
    model_id: null,
    builtin_node_code: 'evaluate',
    wfengine_workflow_id: null,
    sub_flow_id: null,
    created_at: '2026-01-01T00:00:00+00:00',
    updated_at: '2026-01-01T00:00:00+00:00',
    inputs: [],
    outputs: [],
  }
}

describe('prompt templates', () => {
  it('lists each placeholder once, in order, and nothing that only looks like one', () => {
    expect(placeholdersOf('{a} {b_2} {a} { c } {} {d-e} {{f}} {ü}')).toEqual(['a', 'b_2', 'f'])
  })

  it('fills in one pass: values are never read as templates', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const filled = fillTemplate('[{a}|{b}]', { a, b })
        expect(filled).toEqual({ prompt: `[${a}|${b}]`, missing: [] })
      }),
    )
  })

  it('leaves a template without placeholders as it is', () => {
    fc.assert(
      fc.property(
        fc.string().filter((text) => placeholdersOf(text).length === 0),
        (text) => {
          expect(fillTemplate(text, {}).prompt).toBe(text)
        },
      ),
    )
  })

  it('writes numbers and booleans as the service does, and reports every missing name', () => {
    expect(fillTemplate('{n}/{x}/{t}', { n: 0.5, x: -3, t: false }).prompt).toBe('0.5/-3/false')
    expect(fillTemplate('{a}{b}{c}{a}', { b: 'ok', c: null })).toEqual({
      prompt: null,
      missing: ['a', 'c'],
    })
    expect(fillTemplate('{template}', { template: '{template}' }).missing).toEqual(['template'])
    // Inherited names are not inputs.
    expect(fillTemplate('{toString}', {}).missing).toEqual(['toString'])
  })
})

describe('pick from list', () => {
  it('keeps the non-blank lines, trimmed', () => {
    expect(linesOf(' a \r\n\n b\n\t\nc ')).toEqual(['a', 'b', 'c'])
    expect(linesOf(['x', ' ', ' y '])).toEqual(['x', 'y'])
    expect(linesOf('')).toEqual([])
  })

  it('draws an index in range, the same for the same material', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 10_000 }), (material, count) => {
        const index = seededIndex(material, count)
        expect(Number.isInteger(index)).toBe(true)
        expect(index).toBeGreaterThanOrEqual(0)
        expect(index).toBeLessThan(count)
        expect(seededIndex(material, count)).toBe(index)
      }),
    )
  })

  it('spreads its draws over the list', () => {
    const counts = new Array<number>(10).fill(0)
    for (let i = 0; i < 5_000; i++) {
      const index = seededIndex(`seed:${i}`, 10)
      counts[index] = (counts[index] ?? 0) + 1
    }
    // 500 expected per slot; 350 is more than six standard deviations below.
    for (const count of counts) expect(count).toBeGreaterThan(350)
  })
})

describe('compare', () => {
  it('agrees with the plain operators, and = with != are opposites', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true }), fc.double({ noNaN: true }), (a, b) => {
        expect(compareNumbers(a, '<', b)).toBe(a < b)
        expect(compareNumbers(a, '<=', b)).toBe(a <= b)
        expect(compareNumbers(a, '>', b)).toBe(a > b)
        expect(compareNumbers(a, '>=', b)).toBe(a >= b)
        expect(compareNumbers(a, '=', b)).toBe(!compareNumbers(a, '!=', b))
      }),
    )
    expect(OPERATORS).toEqual(['<', '<=', '=', '!=', '>=', '>'])
  })
})

describe('the quality gate settings', () => {
  it('reads max_attempts, job class and threshold, with defaults', () => {
    expect(gateOf(nodeWith({}))).toEqual({
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      jobClass: 'standard',
      passThreshold: null,
    })
    expect(
      gateOf(nodeWith({ max_attempts: 5, job_class_code: 'quick', pass_threshold: 0.8 })),
    ).toEqual({ maxAttempts: 5, jobClass: 'quick', passThreshold: 0.8 })
  })

  it('refuses settings it cannot use with CONFIG_INVALID', () => {
    for (const config of [
      { max_attempts: 0 },
      { max_attempts: 2.5 },
      { max_attempts: '3' },
      { job_class_code: 'thorough' },
      { pass_threshold: 1.5 },
      { pass_threshold: Number.NaN },
    ]) {
      expect(() => gateOf(nodeWith(config)), JSON.stringify(config)).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID' }),
      )
    }
  })

  it('names each attempt of each node of each flow run apart', () => {
    const refs = new Set<string>()
    for (const run of ['r1', 'r2']) {
      for (const node of ['n1', 'n2'])
        for (const attempt of [1, 2]) refs.add(clientRefOf(run, node, attempt))
    }
    expect(refs.size).toBe(8)
  })
})

describe('media references and codes', () => {
  it('recognises a media reference by its shape', () => {
    const ref = { kind: 'media', sha256: 'a'.repeat(64), content_type: 'image/png', url: '/x' }
    expect(isMediaRef(ref)).toBe(true)
    expect(isMediaRef({ ...ref, sha256: 'A'.repeat(64) })).toBe(false)
    expect(isMediaRef({ ...ref, kind: 'file' })).toBe(false)
    expect(isMediaRef({ ...ref, url: undefined })).toBe(false)
    expect(isMediaRef('/x.png')).toBe(false)
    expect(isMediaRef(null)).toBe(false)
  })
})

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_CELLS, parseAxes, parseAxis, sweepCells, SweepError } from '../../src-main/sweeps/axes'
import { refusalOf } from '../helpers/refusal'

/** A sweep's axes as a person writes them (issue 21), read from real files in a temp folder. */

let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'atelier-sweep-axes-'))
  writeFileSync(
    join(dir, 'prompts.txt'),
    '# harbour variations\na harbour at dawn\n\na harbour, at night, in rain\n  a harbour in fog  \n',
  )
  writeFileSync(join(dir, 'empty.txt'), '# nothing yet\n\n')
  mkdirSync(join(dir, 'photos'))
  for (const name of ['b.png', 'a.JPG', 'notes.txt', 'c.webp']) {
    writeFileSync(join(dir, 'photos', name), 'x')
  }
  mkdirSync(join(dir, 'photos', 'older'))
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

const refusal = (run: () => unknown) => refusalOf(SweepError, run)

describe('an axis as written', () => {
  it('reads ranges with both ends included, and steps without float noise', () => {
    expect(parseAxis('seed=1..4').values).toEqual([1, 2, 3, 4])
    expect(parseAxis('steps=20..40/5').values).toEqual([20, 25, 30, 35, 40])
    expect(parseAxis('cfg=0.1..0.5/0.1').values).toEqual([0.1, 0.2, 0.3, 0.4, 0.5])
    // A step that does not land on the end stops before it.
    expect(parseAxis('steps=20..30/4').values).toEqual([20, 24, 28])
    expect(parseAxis('seed=7..7').values).toEqual([7])
  })

  it('reads lists, with numbers as numbers and quoted commas kept', () => {
    expect(parseAxis('steps=20,30').values).toEqual([20, 30])
    expect(parseAxis('style=oil, ink,"charcoal, smudged","a ""quoted"" word"').values).toEqual([
      'oil',
      'ink',
      'charcoal, smudged',
      'a "quoted" word',
    ])
    // Dots in a word are not a range.
    expect(parseAxis('prompt=fog...rain').values).toEqual(['fog...rain'])
  })

  it('reads a file line by line, without blanks or notes, and a folder’s pictures by name', () => {
    expect(parseAxis(`prompt=@${join(dir, 'prompts.txt')}`).values).toEqual([
      'a harbour at dawn',
      'a harbour, at night, in rain',
      'a harbour in fog',
    ])
    expect(parseAxis(`image=@${join(dir, 'photos')}`).values).toEqual([
      { file: join(dir, 'photos', 'a.JPG') },
      { file: join(dir, 'photos', 'b.png') },
      { file: join(dir, 'photos', 'c.webp') },
    ])
  })

  it('names a flow input, or a node’s input by the node', () => {
    expect(parseAxis('prompt=a,b').target).toEqual({ kind: 'flow_input', name: 'prompt' })
    expect(parseAxis('Upscale x2.scale=2,4').target).toEqual({
      kind: 'node_input',
      node: 'Upscale x2',
      name: 'scale',
    })
  })

  it('refuses what is not an axis, saying how to write one', () => {
    const cases: [string, string][] = [
      ['seed', 'AXIS_INVALID'],
      ['=1..3', 'AXIS_INVALID'],
      ['seed=', 'AXIS_INVALID'],
      ['steps=40..20', 'AXIS_INVALID'],
      ['steps=20..40/0', 'AXIS_INVALID'],
      ['steps=20..40/x', 'AXIS_INVALID'],
      ['style="oil,ink', 'AXIS_INVALID'],
      [`prompt=@${join(dir, 'missing.txt')}`, 'AXIS_FILE_UNREADABLE'],
      [`prompt=@${join(dir, 'empty.txt')}`, 'AXIS_EMPTY'],
      [`seed=1..${String(MAX_CELLS + 1)}`, 'SWEEP_TOO_LARGE'],
    ]
    for (const [spec, code] of cases) {
      const error = refusal(() => parseAxis(spec))
      expect(error.code, spec).toBe(code)
      expect(error.message, spec).toMatch(/\w+.*[.;]/)
    }
    expect(refusal(() => parseAxis('seed')).message).toContain('seed=1..16')
    expect(refusal(() => parseAxes(['seed=1..2', 'seed=3..4'])).code).toBe('AXIS_DUPLICATE')
  })
})

describe('the grid of cells', () => {
  it('is the product, first axis slowest: rows, then columns', () => {
    const cells = sweepCells(parseAxes(['seed=1..2', 'style=oil,ink,pen']))
    expect(cells.map((cell) => cell.at)).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ])
    expect(cells[4]).toEqual({ index: 4, at: [1, 1], values: { seed: 2, style: 'ink' } })
    expect(new Set(cells.map((cell) => JSON.stringify(cell.values))).size).toBe(6)
  })

  it('pairs axes by position when zipped, and wants them of one length', () => {
    const cells = sweepCells(parseAxes(['seed=1..3', 'style=oil,ink,pen']), { zip: true })
    expect(cells.map((cell) => cell.values)).toEqual([
      { seed: 1, style: 'oil' },
      { seed: 2, style: 'ink' },
      { seed: 3, style: 'pen' },
    ])
    const error = refusal(() =>
      sweepCells(parseAxes(['seed=1..3', 'style=oil,ink']), { zip: true }),
    )
    expect(error.code).toBe('AXES_UNEQUAL')
    expect(error.message).toContain('seed has 3, style has 2')
  })

  it('is refused before any cost when it is too large to be meant', () => {
    const error = refusal(() => sweepCells(parseAxes(['seed=1..200', 'steps=1..60'])))
    expect(error.code).toBe('SWEEP_TOO_LARGE')
    expect(error.message).toContain('200 × 60')
    // No axis at all is the flow run once.
    expect(sweepCells([])).toEqual([{ index: 0, at: [], values: {} }])
  })
})

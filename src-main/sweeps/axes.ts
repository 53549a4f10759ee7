import { readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join, resolve } from 'node:path'
import { CodedError } from '../errors/coded'

/**
 * A sweep's axes (issue 21): one flow, a grid of variations. Each axis names what varies (a
 * flow input, or a node's input) and the values it takes; the grid is the product of the axes,
 * or, when asked, their zip. This module reads the axes as a person writes them on the command
 * line and lays out the cells; running them is the executor's.
 *
 * How values are written, and why:
 * - `seed=1..16`, `steps=20..40/5`, `cfg=0.5..2/0.5`: a range, both ends included, with an
 *   optional step (1 by default). Ranges are what people sweep numbers with, and both ends
 *   included is how "from 20 to 40 by 5" is said.
 * - `prompt=@prompts.txt`: one value per line of a file; blank lines and lines starting with `#`
 *   are left out, so a prompt list can carry notes. Prompts hold commas, so they come from files.
 * - `image=@photos/`: every picture in a folder (not its sub-folders), in name order.
 * - `style=oil,ink,"charcoal, smudged"`: a list; a value with a comma is quoted.
 * - `Upscale.scale=2,4`: a node's input, the node named by its label, slug or id.
 */

export type SweepErrorCode =
  | 'AXIS_INVALID'
  | 'AXIS_EMPTY'
  | 'AXIS_DUPLICATE'
  | 'AXIS_FILE_UNREADABLE'
  | 'AXES_UNEQUAL'
  | 'SWEEP_TOO_LARGE'
  | 'AXIS_UNKNOWN_INPUT'
  | 'AXIS_UNKNOWN_NODE'
  | 'AXIS_AMBIGUOUS_NODE'

export class SweepError extends CodedError<SweepErrorCode> {}

/** What an axis varies: a flow input, or one input of one node (by label, slug or id). */
export type AxisTarget =
  { kind: 'flow_input'; name: string } | { kind: 'node_input'; node: string; name: string }

/** A picture of a folder axis: its file, read when its cell runs. */
export interface AxisFile {
  file: string
}

export type AxisValue = string | number | AxisFile

export interface Axis {
  /** As written: `prompt`, `Upscale.scale`. Also the axis's key in a cell's values. */
  key: string
  target: AxisTarget
  values: AxisValue[]
}

export interface SweepCell {
  /** The cell's place in the grid, from 0, in the order the cells are laid out. */
  index: number
  /** The value's position on each axis, in the axes' order. */
  at: number[]
  /** By axis key. */
  values: Record<string, AxisValue>
}

/** More cells than this is a typo (`seed=1..100000`), not a sweep: refused before any cost. */
export const MAX_CELLS = 10_000
/** A range longer than this is refused for the same reason, before its values are made. */
const MAX_RANGE = MAX_CELLS

const PICTURE_TYPES = new Set(['.png', '.jpg', '.jpeg', '.webp', '.gif', '.avif'])

/** How an axis reads its files; the real disk unless a caller brings another. */
export interface AxisFiles {
  readText: (path: string) => string
  /** The names in a folder, or null when the path is not a folder. */
  list: (path: string) => string[] | null
}

const disk: AxisFiles = {
  readText: (path) => readFileSync(path, 'utf8'),
  list: (path) => {
    try {
      return statSync(path).isDirectory() ? readdirSync(path) : null
    } catch {
      return null
    }
  },
}

function invalid(spec: string, why: string): SweepError {
  return new SweepError(
    'AXIS_INVALID',
    `--axis ${JSON.stringify(spec)}: ${why} Write it as name=values, e.g. seed=1..16, steps=20..40/5, prompt=@prompts.txt or style=oil,ink.`,
  )
}

function targetOf(key: string): AxisTarget {
  const dot = key.lastIndexOf('.')
  if (dot <= 0) return { kind: 'flow_input', name: key }
  return { kind: 'node_input', node: key.slice(0, dot), name: key.slice(dot + 1) }
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)$/
const RANGE = /^([^.][^/]*?)\.\.([^/]+)(?:\/(.+))?$/

/** Decimal places of a number as written: a range of 0.1 steps stays 0.1, 0.2, not 0.30000000000000004. */
function places(text: string): number {
  const dot = text.indexOf('.')
  return dot < 0 ? 0 : text.length - dot - 1
}

function rangeOf(spec: string, text: string): number[] | null {
  const match = RANGE.exec(text)
  if (!match) return null
  const [, fromText = '', toText = '', stepText = '1'] = match
  // "fog...rain" is a word with dots, not a range: only numbers at both ends make one.
  if (!NUMBER.test(fromText.trim()) || !NUMBER.test(toText.trim())) return null
  if (!NUMBER.test(stepText.trim())) {
    throw invalid(spec, `the step of a range is a number, not ${JSON.stringify(stepText)}.`)
  }
  const from = Number(fromText)
  const to = Number(toText)
  const step = Number(stepText)
  if (step <= 0) throw invalid(spec, `the step of a range is more than 0, not ${stepText}.`)
  if (to < from) throw invalid(spec, `a range goes up: ${String(to)} is below ${String(from)}.`)
  const count = Math.floor((to - from) / step + 1e-9) + 1
  if (count > MAX_RANGE) {
    throw new SweepError(
      'SWEEP_TOO_LARGE',
      `--axis ${JSON.stringify(spec)} makes ${String(count)} values, more than the ${String(MAX_CELLS)} a sweep can hold; use a larger step.`,
    )
  }
  const digits = Math.max(places(fromText.trim()), places(stepText.trim()))
  return Array.from({ length: count }, (_, i) => Number((from + i * step).toFixed(digits)))
}

/** `a,b,"c, d"`: commas split, double quotes keep a comma (and `""` is a quote). */
function listOf(spec: string, text: string): string[] {
  const values: string[] = []
  let current = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text.charAt(i)
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        current += '"'
        i++
      } else if (char === '"') {
        quoted = false
      } else {
        current += char
      }
    } else if (char === '"') {
      quoted = true
    } else if (char === ',') {
      values.push(current.trim())
      current = ''
    } else {
      current += char
    }
  }
  if (quoted) throw invalid(spec, 'a quote is opened and never closed.')
  values.push(current.trim())
  return values
}

function fromFile(spec: string, file: string, files: AxisFiles): AxisValue[] {
  const path = resolve(file)
  const names = files.list(path)
  if (names) {
    return names
      .filter((name) => PICTURE_TYPES.has(extname(name).toLowerCase()))
      .sort((a, b) => a.localeCompare(b))
      .map((name) => ({ file: join(path, name) }))
  }
  let text: string
  try {
    text = files.readText(path)
  } catch {
    throw new SweepError(
      'AXIS_FILE_UNREADABLE',
      `--axis ${JSON.stringify(spec)}: the file ${file} cannot be read; check the path.`,
    )
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
}

/** One `--axis name=values`. */
export function parseAxis(spec: string, files: AxisFiles = disk): Axis {
  const at = spec.indexOf('=')
  if (at <= 0) throw invalid(spec, 'it has no name before its "=".')
  const key = spec.slice(0, at).trim()
  const text = spec.slice(at + 1).trim()
  // A node's label may hold spaces ("Upscale x2.scale"); an input's name never does.
  if (!/^[\w-]+$/.test(key.slice(key.lastIndexOf('.') + 1))) {
    throw invalid(spec, `${JSON.stringify(key)} does not end in an input name.`)
  }
  if (text === '') throw invalid(spec, 'it has no values after its "=".')
  let values: AxisValue[]
  if (text.startsWith('@')) {
    values = fromFile(spec, text.slice(1), files)
  } else {
    const range = rangeOf(spec, text)
    if (range) {
      values = range
    } else {
      const listed = listOf(spec, text)
      // A list of numbers is numbers: steps=20,30 sends 20, not "20".
      values = listed.every((value) => NUMBER.test(value)) ? listed.map(Number) : listed
    }
  }
  if (values.length === 0) {
    throw new SweepError(
      'AXIS_EMPTY',
      `--axis ${JSON.stringify(spec)} has no values${text.startsWith('@') ? ` (${text.slice(1)} holds no line or picture)` : ''}; give it at least one.`,
    )
  }
  return { key, target: targetOf(key), values }
}

/** Every `--axis`, checked together: no axis twice. */
export function parseAxes(specs: readonly string[], files: AxisFiles = disk): Axis[] {
  const axes = specs.map((spec) => parseAxis(spec, files))
  const seen = new Set<string>()
  for (const axis of axes) {
    if (seen.has(axis.key)) {
      throw new SweepError(
        'AXIS_DUPLICATE',
        `--axis ${axis.key} is given twice; give each input one axis, with all its values.`,
      )
    }
    seen.add(axis.key)
  }
  return axes
}

/**
 * The grid's cells. The product (the default) lays them out with the first axis slowest, so
 * that the first axis is the contact sheet's rows and the second its columns; the zip pairs the
 * axes' values by position, and wants axes of one length.
 */
export function sweepCells(axes: readonly Axis[], options: { zip?: boolean } = {}): SweepCell[] {
  if (axes.length === 0) return [{ index: 0, at: [], values: {} }]
  if (options.zip) {
    const length = axes[0]?.values.length ?? 0
    const other = axes.find((axis) => axis.values.length !== length)
    if (other) {
      throw new SweepError(
        'AXES_UNEQUAL',
        `--zip pairs the axes' values one by one, so each needs as many: ${axes.map((a) => `${a.key} has ${String(a.values.length)}`).join(', ')}.`,
      )
    }
    return Array.from({ length }, (_, index) => ({
      index,
      at: axes.map(() => index),
      values: Object.fromEntries(axes.map((axis) => [axis.key, axis.values[index] as AxisValue])),
    }))
  }
  const total = axes.reduce((product, axis) => product * axis.values.length, 1)
  if (total > MAX_CELLS) {
    throw new SweepError(
      'SWEEP_TOO_LARGE',
      `The axes make ${String(total)} cells (${axes.map((a) => String(a.values.length)).join(' × ')}), more than the ${String(MAX_CELLS)} a sweep can hold; sweep fewer values, or pair them with --zip.`,
    )
  }
  const cells: SweepCell[] = []
  for (let index = 0; index < total; index++) {
    const at: number[] = []
    let rest = index
    for (let i = axes.length - 1; i >= 0; i--) {
      const size = axes[i]?.values.length ?? 1
      at[i] = rest % size
      rest = Math.floor(rest / size)
    }
    const values = Object.fromEntries(
      axes.map((axis, i) => [axis.key, axis.values[at[i] ?? 0] as AxisValue]),
    )
    cells.push({ index, at, values })
  }
  return cells
}

import { createHash } from 'node:crypto'
import { local, type BuiltinStep } from './context'
import { BuiltinError } from './errors'
import { describeNode, show } from './ports'

/**
 * `pick_from_list`: one line of `items` (blank lines and the spaces around each line dropped), the
 * one at `index` counting from 0 and wrapping around, as the service's built-in does. With no
 * index the pick is random but reproducible: it is drawn from a hash of the node's `config.seed`
 * (any number or text), the node's id and the attempt, so re-running the flow with the same seed
 * picks the same lines, and a quality gate's next attempt draws afresh. Without `config.seed`
 * the flow run's id stands in: resuming a flow run picks what it picked before it stopped, a new
 * flow run picks again. `items` may also be a list of texts (a fanned-out output).
 */

const INDEX_RANGE = { min: 0, max: 1_000_000 }

export function linesOf(items: string | readonly string[]): string[] {
  const lines = typeof items === 'string' ? items.split(/\r?\n/) : items
  return lines.map((line) => line.trim()).filter((line) => line !== '')
}

/** An index below `count` drawn from the first 48 bits of sha256(material). */
export function seededIndex(material: string, count: number): number {
  const digest = createHash('sha256').update(material).digest()
  return Math.floor((digest.readUIntBE(0, 6) / 2 ** 48) * count)
}

function seedOf(run: Parameters<BuiltinStep>[0]): string {
  const seed = run.node.config.seed
  if (seed === undefined || seed === null) return `run:${run.flowRunId}`
  if ((typeof seed === 'number' && Number.isFinite(seed)) || typeof seed === 'string') {
    return `seed:${String(seed)}`
  }
  throw new BuiltinError(
    'CONFIG_INVALID',
    `The setting seed of node ${describeNode(run.node)} must be a number or a text, but it is ${show(seed)}.`,
  )
}

export const runPickFromList: BuiltinStep = (run) => {
  const raw = run.ports.raw('items')
  let items: string[]
  if (Array.isArray(raw)) {
    if (!raw.every((item): item is string => typeof item === 'string')) {
      throw run.ports.invalid('items', 'text with one item per line, or a list of texts')
    }
    items = linesOf(raw)
  } else {
    items = linesOf(run.ports.text('items', { required: true }))
  }
  const index = run.ports.integer('index', { range: INDEX_RANGE })
  if (items.length === 0) {
    throw new BuiltinError(
      'LIST_EMPTY',
      `The items of node ${describeNode(run.node)} have no line to pick from; put one item per line.`,
    )
  }
  const picked =
    index === undefined
      ? seededIndex(`${seedOf(run)}:${run.node.id}:${run.attempt}`, items.length)
      : index % items.length
  const item = items[picked] ?? ''
  run.emit({
    type: 'log',
    level: 'info',
    message: `Picked line ${picked + 1} of ${items.length}${index === undefined ? ' at random' : ''}: ${item}`,
  })
  return Promise.resolve(local({ item }))
}

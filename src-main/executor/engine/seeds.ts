import { createHash } from 'node:crypto'
import { SEED_TYPE, seedModeOf } from '../../../src-shared/domain/flow'
import type { PortValue } from '../types'
import type { FlowCatalog, PlannedNode } from '../validate'

/**
 * Seeds are inputs (issue 19). A model node's seed input left on the dice (`seedModeOf`) is not
 * left for the service to pick, where it would be known only to its log: the client draws it
 * before dispatch and sends it, so the service's run records it as an input like any other, the
 * run page shows it, and a re-run of that run makes the same picture.
 *
 * Why the cache key leaves the drawn seed out: the dice says "any seed will do". An unchanged
 * re-run is then served from the cache, with the result and the seed it was made with (the
 * "same seed" re-run costs nothing), and a "new seed" is asked for by running the node anyway
 * (`force`). A locked seed is a value like any other and is part of the key.
 *
 * Why the draw is derived from the flow run's id (random, made once per flow run), the node and
 * the attempt instead of a fresh random number: a resumed flow run must send exactly what it sent
 * before, or the remote runner would not recognise its own earlier dispatch and would pay twice.
 * A new flow run, and a quality gate's next attempt, still get a new seed.
 */
export interface SeedDraw {
  /** The inputs as the cache key sees them: without the seeds left on the dice. */
  keyed: Record<string, PortValue>
  /** The drawn seeds, by input name; sent with `keyed` when the node runs. */
  drawn: Record<string, number>
}

/** Seeds run from 0 to 2^32 - 1, the range the service's seed inputs accept. */
const SEED_BYTES = 4

/**
 * `given`: seeds to send instead of drawing, by input name (a re-run from a picture's record
 * sends the seeds the picture was made with). They stay out of the cache key like any seed on
 * the dice, so an unchanged flow is still served from the cache.
 */
export function drawSeeds(
  planned: PlannedNode | undefined,
  inputs: Readonly<Record<string, PortValue>>,
  catalog: FlowCatalog,
  run: { flowRunId: string; nodeId: string; attempt: number },
  given: Readonly<Record<string, number>> = {},
): SeedDraw {
  const names = planned ? randomSeedInputs(planned, catalog) : []
  if (names.length === 0) return { keyed: { ...inputs }, drawn: {} }
  const keyed = Object.fromEntries(Object.entries(inputs).filter(([name]) => !names.includes(name)))
  const drawn = Object.fromEntries(
    names.map((name) => {
      const seed = given[name]
      return [name, seed !== undefined && Number.isInteger(seed) ? seed : seedFor(run, name)]
    }),
  )
  return { keyed, drawn }
}

/**
 * The seeds among what a node sends, by input name, however they were decided (drawn, locked,
 * wired): what a picture's record keeps so the flow can make the same picture again.
 */
export function seedsSent(
  planned: PlannedNode | undefined,
  sent: Readonly<Record<string, PortValue>>,
  catalog: FlowCatalog,
): Record<string, number> {
  if (!planned) return {}
  const seeds: Record<string, number> = {}
  for (const name of seedInputs(planned, catalog)) {
    const value = sent[name]
    if (typeof value === 'number' && Number.isInteger(value)) seeds[name] = value
  }
  return seeds
}

/** A model node's inputs typed `seed`, on the node or in the model's catalog entry. */
function seedInputs(planned: PlannedNode, catalog: FlowCatalog): string[] {
  const { node } = planned
  if (node.type_code !== 'model') return []
  const declared = node.model_id ? (catalog.model(node.model_id)?.inputs ?? []) : []
  const names = new Set([
    ...node.inputs.filter((port) => port.variable_type_code === SEED_TYPE).map((p) => p.name),
    ...declared.filter((port) => port.variable_type_code === SEED_TYPE).map((p) => p.name),
  ])
  return [...names]
}

/**
 * The seed inputs of a model node that are on the dice: typed `seed` on the node or in the
 * model's catalog entry, and given by the node itself (a value, the model's default, or nothing)
 * rather than wired from another node or a flow input, which decide the seed themselves.
 */
function randomSeedInputs(planned: PlannedNode, catalog: FlowCatalog): string[] {
  const { node } = planned
  return seedInputs(planned, catalog).filter((name) => {
    const binding = planned.inputs.get(name)
    if (binding?.from === 'edge' || binding?.from === 'flow_input') return false
    return seedModeOf(node.inputs.find((port) => port.name === name)) === 'random'
  })
}

function seedFor(run: { flowRunId: string; nodeId: string; attempt: number }, name: string) {
  const digest = createHash('sha256')
    .update(`${run.flowRunId}\n${run.nodeId}\n${run.attempt}\n${name}`)
    .digest()
  return digest.readUIntBE(0, SEED_BYTES)
}

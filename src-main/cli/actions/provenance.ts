import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MEDIA_CAP_BYTES, MEDIA_DIR } from '../../core/steps'
import { MIRROR_FILE, openDatabases } from '../../db'
import { MediaStore } from '../../media-store'
import { ProvenanceError, readProvenance } from '../../provenance'
import { provenanceOfAsset, provenanceOfRun } from '../../provenance/records'
import { ledgerPins } from '../../sync'
import type { ProvenanceReading, ProvenanceRecord } from '../../../src-shared/domain/provenance'
import { EXIT } from '../exit-codes'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** What the command prints for scripts: the reading, with the record when there is one. */
type Shown = { state: ProvenanceReading['state']; message?: string; record?: ProvenanceRecord }

function flowName(flow: Record<string, unknown>): string {
  for (const key of ['name', 'slug', 'id']) {
    const value = flow[key]
    if (typeof value === 'string' && value !== '') return value
  }
  return 'an unnamed flow'
}

const STATE_LINE: Record<ProvenanceReading['state'], string> = {
  intact: 'intact',
  changed: 'changed since it was made',
  damaged: 'damaged',
  foreign: 'foreign',
  none: 'no record',
}

/** The record as a few lines a person reads at a glance. */
export function summary(record: ProvenanceRecord, state: ProvenanceReading['state']): string {
  const version = record.flow_version === null ? '' : ` (version ${record.flow_version})`
  const model = record.model
    ? `${record.model.slug}${record.model.version === null ? '' : `, version ${record.model.version}`}`
    : null
  const evaluation = record.evaluation
    ? [
        record.evaluation.verdict ?? 'no verdict yet',
        record.evaluation.score === null ? null : `score ${record.evaluation.score}`,
      ]
        .filter((part) => part !== null)
        .join(', ')
    : null
  const rows: [string, string | null][] = [
    ['Flow', `${flowName(record.flow)}${version}`],
    ['Node', record.node ? `${record.node.label} (${record.node.id})` : null],
    ['Model', model],
    ['Seed', record.seed === null ? null : String(record.seed)],
    ['Cost', record.cost === null ? null : `${record.cost} credits`],
    ['Run', record.run_id],
    ['Created', record.created_at],
    ['Evaluation', evaluation],
    [
      'Output',
      `${record.output.name}${record.output.index > 0 ? ` #${record.output.index + 1}` : ''} (${record.output.media_type})`,
    ],
    ['State', STATE_LINE[state]],
  ]
  return rows
    .filter((row): row is [string, string] => row[1] !== null)
    .map(([label, value]) => `${`${label}:`.padEnd(12)}${value}`)
    .join('\n')
}

function readFile(context: CommandContext, path: string): void {
  let bytes: Uint8Array
  try {
    bytes = readFileSync(path)
  } catch (error) {
    const why = error instanceof Error && 'code' in error ? ` (${String(error.code)})` : ''
    throw new CliError(
      `Cannot read ${path}${why}; give a picture file that exists, or a run or asset id.`,
      EXIT.usage,
      'FILE_UNREADABLE',
    )
  }
  let reading: ProvenanceReading
  try {
    reading = readProvenance(bytes)
  } catch (error) {
    if (!(error instanceof ProvenanceError)) throw error
    throw new CliError(`${path}: ${error.message}`, EXIT.usage, error.code)
  }
  const shown: Shown = { state: reading.state }
  if ('message' in reading) shown.message = reading.message
  if ('record' in reading) shown.record = reading.record
  if (reading.state === 'damaged' || reading.state === 'foreign') {
    // Said plainly, and not a success: a script must not take this file's origin for known.
    if (context.globals().json) context.io.stdout(`${JSON.stringify(shown)}\n`)
    throw new CliError(
      reading.message,
      EXIT.failed,
      reading.state === 'damaged' ? 'PROVENANCE_DAMAGED' : 'PROVENANCE_FOREIGN',
      true,
    )
  }
  const text =
    reading.state === 'none'
      ? reading.message
      : reading.state === 'changed'
        ? `${summary(reading.record, reading.state)}\n\n${reading.message}`
        : summary(reading.record, reading.state)
  context.print(shown, text)
}

/**
 * A run's or asset's record, from this machine's databases: what would be written into its file.
 * Nothing to check it against, so it is shown as whole (`intact`).
 */
async function readById(context: CommandContext, id: string): Promise<void> {
  const { home } = context.globals()
  const unknown = new CliError(
    `No run or asset ${id} is known on this machine; run \`atelier sync\` to bring the service's runs and assets here, then try again.`,
    EXIT.failed,
    'PROVENANCE_NOT_FOUND',
  )
  if (!existsSync(join(home, MIRROR_FILE))) throw unknown
  const dbs = openDatabases(home)
  // The media store knows which run made an asset the ledger has no node run for.
  const media = new MediaStore({
    dir: join(home, MEDIA_DIR),
    maxBytes: MEDIA_CAP_BYTES,
    isPinned: ledgerPins(dbs.ledger),
  })
  let record: ProvenanceRecord | null
  try {
    const sources = { ledger: dbs.ledger, mirror: dbs.mirror, media }
    record = provenanceOfRun(sources, id) ?? provenanceOfAsset(sources, id)
  } finally {
    await media.close()
    dbs.close()
  }
  if (record === null) throw unknown
  context.print({ state: 'intact', record } satisfies Shown, summary(record, 'intact'))
}

/** `atelier provenance FILE|RUN_ID|ASSET_ID`. */
export async function provenance(context: CommandContext, target: string): Promise<void> {
  // A file of that name wins over an id: a picture may well be named after its run.
  if (!existsSync(target) && UUID.test(target)) {
    await readById(context, target)
    return
  }
  readFile(context, target)
}

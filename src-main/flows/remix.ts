import {
  provenanceMediaSchema,
  type ProvenanceReading,
  type ProvenanceRecord,
} from '../../src-shared/domain/provenance'
import { RANDOM_SEED_BEHAVIOR } from '../../src-shared/domain/flow'
import type { StoredFlow } from '../../src-shared/domain/flow-editor'
import type {
  ImportedWorkflow,
  RemixAs,
  RemixOpened,
  RemixInspection,
  RemixSource,
} from '../../src-shared/domain/remix'
import { CodedError } from '../errors/coded'
import type { FlowDocument, MediaRef } from '../executor'
import { asJson, readFlow } from './documents'
import type { FlowEditor } from './types'

/**
 * Remix (issue 20): the flow that made a picture, recreated exactly as it ran, from its
 * provenance record. One entry, `openRemix`; `remixRecord` is the part that needs no source.
 *
 * Decisions, and why:
 *
 * - The record's flow document is the flow as it ran, so it is taken as it is; only what a run
 *   decides at run time is written into it: each flow input's default becomes the recorded
 *   value, and every seed the run used (`record.seeds`, drawn or given) is locked to its value
 *   (no dice), so running the remix makes the same pictures again.
 * - A recorded picture is named by content. It becomes its asset id when it has one (what the
 *   service's nodes take), else the media store's file when this machine still holds those
 *   bytes (read by sha256, no network), else the input is left empty with a note: a remix
 *   that silently pointed at other bytes would not be the run it claims to be.
 * - "New flow" goes through the library's import (a new id, a unique name "<name> (remix)");
 *   "new version" only for a flow of this profile's own: what was current is kept first as a
 *   version ("Before the remix of run …"), then the remix is saved and kept as "Remix of run …",
 *   so nothing is ever overwritten.
 * - A picture edited after it was made (`changed`) still opens, with the reading's warning: the
 *   person asked for it, and the record is what made the original, whatever was edited since.
 */

type Awaitable<T> = T | Promise<T>

/** Stable codes of a remix the window branches on. */
export type RemixErrorCode =
  | 'NO_PROVENANCE'
  | 'PROVENANCE_DAMAGED'
  | 'PROVENANCE_FOREIGN'
  /** A PNG, WebP or JPEG too broken to read at all. */
  | 'PROVENANCE_MALFORMED_FILE'
  | 'REMIX_NOT_LOCAL'

export class RemixError extends CodedError<RemixErrorCode> {
  override readonly name = 'RemixError'
}

/** Where the records come from: the provenance module's readers, and the file reader. */
export interface ProvenanceSources {
  ofRun: (runId: string, index: number) => Awaitable<ProvenanceRecord | null>
  ofAsset: (assetId: string) => Awaitable<ProvenanceRecord | null>
  ofOutput: (output: {
    flowRunId: string
    nodeId: string
    output: string
    index: number
  }) => Awaitable<ProvenanceRecord | null>
  ofFile: (bytes: Buffer) => Awaitable<ProvenanceReading>
}

/** ComfyUI files with no Atelier record become workflow-engine workflows (`src-main/workflows`). */
export interface WorkflowImporter {
  looksLikeWorkflow: (bytes: Buffer) => boolean
  importFile: (file: { bytes: Buffer; fileName: string }) => Promise<ImportedWorkflow>
}

export interface RemixOptions {
  flows: Pick<FlowEditor, 'import' | 'save' | 'saveVersion' | 'get'>
  /** The flow, when it is this profile's own and out of the trash: only then a version of it. */
  localFlow: (id: string) => { id: string; name: string } | null
  /** The media store's file for these bytes, when this machine holds them. */
  localMedia: (sha256: string) => string | null
  sources: ProvenanceSources
  workflows: WorkflowImporter
}

export interface Remix {
  open(request: { source: RemixSource; as: RemixAs }): Promise<RemixOpened>
  inspect(request: { source: RemixSource }): Promise<RemixInspection>
}

export function openRemix(options: RemixOptions): Remix {
  return {
    open: async ({ source, as }) => {
      const found = await recordOf(options, source)
      if ('bytes' in found) return { workflow: await options.workflows.importFile(found) }
      const { flow, notes } = await remixRecord(options, found.record, as)
      const note = [found.warning, ...notes].filter((line) => line !== null).join(' ')
      return { flow, reading: found.warning === null ? 'intact' : 'changed', ...noteOf(note) }
    },
    inspect: async ({ source }) => {
      const found = await recordOf(options, source)
      if ('bytes' in found) return { workflow: true }
      const { record, warning } = found
      // Said in the dialog, before any button: a record whose flow cannot be read opens nothing.
      readFlow(record.flow, 'The flow inside the record')
      return {
        reading: warning === null ? 'intact' : 'changed',
        warning,
        flowName: flowNameOf(record),
        localFlow: options.localFlow(flowIdOf(record)),
        seed: record.seed,
        model: record.model,
        runId: record.run_id,
        nodeLabel: record.node?.label ?? null,
        createdAt: record.created_at,
      }
    },
  }
}

const noteOf = (note: string) => (note === '' ? {} : { note })

type Found =
  | { record: ProvenanceRecord; warning: string | null }
  /** A ComfyUI workflow file with no record of ours. */
  | { bytes: Buffer; fileName: string }

/** The record a source names; a ComfyUI file with none becomes a workflow to import. */
async function recordOf({ sources, workflows }: RemixOptions, source: RemixSource): Promise<Found> {
  if ('file' in source) {
    const bytes = Buffer.from(source.file.base64, 'base64')
    const reading = await sources.ofFile(bytes)
    switch (reading.state) {
      case 'intact':
        return { record: reading.record, warning: null }
      case 'changed':
        return { record: reading.record, warning: reading.message }
      case 'damaged':
        throw new RemixError('PROVENANCE_DAMAGED', reading.message)
      case 'foreign':
        throw new RemixError('PROVENANCE_FOREIGN', reading.message)
      case 'none':
        if (!workflows.looksLikeWorkflow(bytes)) throw noProvenance()
        return { bytes, fileName: source.file.name }
    }
  }
  const record =
    'runId' in source
      ? await sources.ofRun(source.runId, source.index ?? 0)
      : 'assetId' in source
        ? await sources.ofAsset(source.assetId)
        : await sources.ofOutput(source)
  if (record === null) {
    throw new RemixError(
      'NO_PROVENANCE',
      'Atelier has no record of the flow that made this, so it cannot be opened in the editor. Only outputs of flows run here or synced from the service can.',
    )
  }
  return { record, warning: null }
}

function noProvenance(): RemixError {
  return new RemixError(
    'NO_PROVENANCE',
    'This picture carries no Atelier record or ComfyUI workflow. Drop a picture Atelier saved (an export, a download, a saved output) or one ComfyUI saved.',
  )
}

const flowIdOf = (record: ProvenanceRecord): string =>
  typeof record.flow.id === 'string' ? record.flow.id : ''

const flowNameOf = (record: ProvenanceRecord): string =>
  typeof record.flow.name === 'string' && record.flow.name.trim() !== ''
    ? record.flow.name
    : 'Untitled flow'

/** "Remix of run 1a2b3c4d": the run's short id, or the flow run's when it ran outside the service. */
function shortRunOf(record: ProvenanceRecord): string {
  const id = record.run_id ?? record.node_run?.flow_run_id ?? record.created_at
  return id.slice(0, 8)
}

/**
 * The flow exactly as the record says it ran, stored as a new flow or as a new version of the
 * original; `notes` says what could not be recreated (a picture not on this machine).
 */
export async function remixRecord(
  options: Pick<RemixOptions, 'flows' | 'localFlow' | 'localMedia'>,
  record: ProvenanceRecord,
  as: RemixAs,
): Promise<{ flow: StoredFlow; notes: string[] }> {
  const ran = readFlow(record.flow, 'The flow inside the record')
  const { flow, notes } = remixedDocument(ran, record, options.localMedia)
  const run = shortRunOf(record)
  if (as === 'version') {
    const original = options.localFlow(ran.id)
    if (!original) {
      throw new RemixError(
        'REMIX_NOT_LOCAL',
        `“${ran.name}” is not one of your flows on this computer, so the remix cannot be a version of it. Open it as a new flow.`,
      )
    }
    await options.flows.saveVersion({ id: ran.id, name: `Before the remix of run ${run}` })
    await options.flows.save({ id: ran.id, flow: asJson(flow) })
    await options.flows.saveVersion({ id: ran.id, name: `Remix of run ${run}` })
    return { flow: await options.flows.get({ id: ran.id }), notes }
  }
  const named = { ...flow, name: `${ran.name} (remix)`.slice(0, 200) }
  return { flow: await options.flows.import({ json: JSON.stringify(named) }), notes }
}

/** The document with the recorded inputs as defaults and every recorded seed locked. */
function remixedDocument(
  ran: FlowDocument,
  record: ProvenanceRecord,
  localMedia: (sha256: string) => string | null,
): { flow: FlowDocument; notes: string[] } {
  const notes: string[] = []
  const inputs = ran.inputs.map((input) => {
    if (!(input.name in record.flow_inputs)) return input
    const value = valueOf(record.flow_inputs[input.name], localMedia, (sha256) => {
      notes.push(
        `The picture ${sha256.slice(0, 12)}… for the input “${input.display_name ?? input.name}” is not on this machine; choose it again before running.`,
      )
    })
    return { ...input, default_value: value }
  })
  const nodes = ran.nodes.map((node) => {
    const seeds = record.seeds[node.id]
    if (!seeds) return node
    return {
      ...node,
      inputs: node.inputs.map((input) => {
        const seed = seeds[input.name]
        if (seed === undefined) return input
        const behavior = input.behavior_code === RANDOM_SEED_BEHAVIOR ? null : input.behavior_code
        return { ...input, value: seed, behavior_code: behavior }
      }),
    }
  })
  return { flow: { ...ran, inputs, nodes }, notes }
}

/** A recorded value as a flow input takes it: media by asset id, else the local file, else null. */
function valueOf(
  value: unknown,
  localMedia: (sha256: string) => string | null,
  missing: (sha256: string) => void,
): unknown {
  if (Array.isArray(value)) return value.map((item) => valueOf(item, localMedia, missing))
  const parsed = provenanceMediaSchema.safeParse(value)
  if (!parsed.success) return value
  const { sha256, asset_id: assetId, media_type: mediaType } = parsed.data.media
  if (assetId !== null) return assetId
  const path = localMedia(sha256)
  if (path === null) {
    missing(sha256)
    return null
  }
  const ref: MediaRef = {
    kind: 'media',
    sha256,
    content_type: mediaType ?? 'application/octet-stream',
    url: path,
  }
  return ref
}

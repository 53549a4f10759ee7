import { readFileSync } from 'node:fs'
import type { Evaluation, Run } from '../../src-shared/api'
import type { NodeRunRecord } from '../../src-shared/domain/flow-run'
import {
  PROVENANCE_FORMAT,
  PROVENANCE_VERSION,
  provenanceRecordSchema,
  type ProvenanceRecord,
} from '../../src-shared/domain/provenance'
import type { Ledger, Mirror } from '../db'
import type { MediaStore } from '../media-store'
import { oneNodeFlow, type OneNodePort } from '../flows/one-node'
import { readProvenance } from './index'
import { cleanValue, mediaOutputsOf, type FoundMedia } from './records-values'

/**
 * The provenance record of an output (issue 20): what Atelier writes inside every picture it
 * puts on the user's disk. Three ways in, one per thing a person can point at: an output of a
 * flow run on this machine, a service run, an asset.
 *
 * Decisions, and why:
 *
 * - The ledger is the first source: it alone knows the flow document as it ran (unsaved edits
 *   included), the inputs each node sent and every seed. The mirror adds what the service knows
 *   (the run's cost, its evaluation, the model) and stands in for a run made elsewhere (another
 *   machine, the API): that run's record is a one-node flow built from its model and inputs.
 * - A record names media by content, never by address: every value goes through `cleanValue`,
 *   which turns media into `{media: {sha256, asset_id, media_type}}` and drops URLs, local paths
 *   and anything named like a key, so a record is safe to share.
 * - A cached output's record is the record of the node run that made it (its run, its seeds, its
 *   cost), with this flow run's document and inputs: that is what recreating it needs.
 * - Every record is checked against the fixed schema before it is returned: a record that does
 *   not parse would be written into a file and read back as damaged.
 */

/** What the records are read from; the CLI and the app's core both have these. */
export interface RecordSources {
  ledger: Pick<Ledger, 'flowRuns'>
  mirror: Pick<Mirror, 'runs' | 'evaluations' | 'assets' | 'models'>
  /** For asset ids of media inputs and for which run made an asset; optional. */
  media?: Pick<MediaStore, 'owners' | 'has' | 'path'> | null
}

export interface OutputRef {
  flowRunId: string
  nodeId: string
  /** The node's output name. */
  output: string
  /** The item of a list output; 0 for a single value. */
  index: number
}

const DONE = new Set(['succeeded', 'cached'])

/** The record of one output of a node run of a flow run on this machine. */
export function provenanceOfOutput(
  sources: RecordSources,
  ref: OutputRef,
): ProvenanceRecord | null {
  const { flowRuns } = sources.ledger
  const flowRun = flowRuns.get(ref.flowRunId)
  if (!flowRun) return null
  const nodeRun = lastDone(flowRuns.nodes(ref.flowRunId), ref.nodeId)
  if (!nodeRun?.outputs) return null
  const found = mediaOutputsOf(nodeRun.outputs).find(
    (media) => media.name === ref.output && media.index === ref.index,
  )
  if (!found) return null
  return recordOfNodeRun(sources, nodeRun, found)
}

/**
 * The record of a picture a flow run made, found by its bytes: what the "Save to assets" node
 * writes into the file it saves. The node run of this flow run that output it comes first; one
 * of another flow run stands in (a cached output was made there).
 */
export function provenanceOfMedia(
  sources: RecordSources,
  sha256: string,
  flowRunId: string,
): ProvenanceRecord | null {
  const nodeRuns = sources.ledger.flowRuns.mentioning(sha256)
  const ordered = [
    ...nodeRuns.filter((run) => run.flowRunId === flowRunId),
    ...nodeRuns.filter((run) => run.flowRunId !== flowRunId),
  ]
  for (const nodeRun of ordered) {
    const found = mediaOutputsOf(nodeRun.outputs ?? {}).find((media) => media.sha256 === sha256)
    if (found && DONE.has(nodeRun.state)) return recordOfNodeRun(sources, nodeRun, found)
  }
  return null
}

/**
 * The record of a service run's output (`index`: its place among the run's media outputs): from
 * the node run that made it when there is one here, else from the mirror's run alone.
 */
export function provenanceOfRun(
  sources: RecordSources,
  runId: string,
  index = 0,
): ProvenanceRecord | null {
  const nodeRun = sources.ledger.flowRuns.byRemoteRunId(runId)
  if (nodeRun?.outputs) {
    const found = mediaOutputsOf(nodeRun.outputs)[index]
    if (found) return recordOfNodeRun(sources, nodeRun, found)
  }
  const run = sources.mirror.runs.get(runId)
  if (!run?.output) return null
  const found = mediaOutputsOf(run.output)[index]
  return found ? recordOfMirroredRun(sources, run, found) : null
}

/** The record of the output an asset holds, when the run that made it is known here. */
export function provenanceOfAsset(
  sources: RecordSources,
  assetId: string,
): ProvenanceRecord | null {
  const asset = sources.mirror.assets.get(assetId)
  if (!asset) return null
  const { sha256 } = asset
  for (const nodeRun of sources.ledger.flowRuns.mentioning(sha256)) {
    const found = mediaOutputsOf(nodeRun.outputs ?? {}).find((media) => media.sha256 === sha256)
    if (found) return recordOfNodeRun(sources, nodeRun, found)
  }
  for (const owner of sources.media?.owners(sha256) ?? []) {
    if (owner.kind !== 'run-output') continue
    const run = sources.mirror.runs.get(owner.id)
    const found = mediaOutputsOf(run?.output ?? {}).findIndex((media) => media.sha256 === sha256)
    if (found >= 0) return provenanceOfRun(sources, owner.id, found)
  }
  return recordInside(sources, sha256)
}

/**
 * The record an asset's own file carries, when this computer holds the file: an asset saved by
 * a flow's "Save to assets" node has the record inside, so its bytes are no output's bytes.
 */
function recordInside(sources: RecordSources, sha256: string): ProvenanceRecord | null {
  const media = sources.media
  if (!media?.has(sha256)) return null
  try {
    const reading = readProvenance(new Uint8Array(readFileSync(media.path(sha256))))
    return reading.state === 'intact' || reading.state === 'changed' ? reading.record : null
  } catch {
    // Evicted since the look, or not a picture at all: no record to show.
    return null
  }
}

/** A node's last attempt that finished with outputs. */
function lastDone(nodes: readonly NodeRunRecord[], nodeId: string): NodeRunRecord | null {
  let last: NodeRunRecord | null = null
  for (const node of nodes) {
    if (node.nodeId !== nodeId || !DONE.has(node.state)) continue
    if (!last || node.attempt > last.attempt) last = node
  }
  return last
}

/** For a cached node run, the node run that made its outputs (same cache key, succeeded). */
function maker(sources: RecordSources, nodeRun: NodeRunRecord): NodeRunRecord {
  if (nodeRun.state !== 'cached' || !nodeRun.cachedFrom) return nodeRun
  const origin = sources.ledger.flowRuns
    .nodes(nodeRun.cachedFrom)
    .find((node) => node.state === 'succeeded' && node.cacheKey === nodeRun.cacheKey)
  return origin ?? nodeRun
}

function recordOfNodeRun(
  sources: RecordSources,
  nodeRun: NodeRunRecord,
  found: FoundMedia,
): ProvenanceRecord | null {
  const { flowRuns } = sources.ledger
  const flowRun = flowRuns.get(nodeRun.flowRunId)
  if (!flowRun) return null
  const made = maker(sources, nodeRun)
  const clean = cleaner(sources)
  const document = flowRuns.document(flowRun.id) ?? {
    id: flowRun.flowId,
    version: flowRun.flowVersion,
  }
  const node = nodeOf(document, nodeRun.nodeId)
  const sent = flowRuns.sent(nodeRun.flowRunId, nodeRun.nodeId, nodeRun.attempt)
  const run = made.remoteRunId ? sources.mirror.runs.get(made.remoteRunId) : null
  const model = modelOf(sources, run, node, flowRun.orgId)
  const seeds = flowRuns.seeds(flowRun.id)
  return checked({
    format: PROVENANCE_FORMAT,
    version: PROVENANCE_VERSION,
    flow: clean(document) as Record<string, unknown>,
    flow_version: flowRun.flowVersion,
    node: { id: nodeRun.nodeId, label: labelOf(node, nodeRun.nodeId) },
    node_inputs: clean(sent?.inputs ?? run?.input ?? {}) as Record<string, unknown>,
    flow_inputs: clean(flowRun.inputs) as Record<string, unknown>,
    run_id: made.remoteRunId,
    node_run: { flow_run_id: made.flowRunId, node_id: made.nodeId, attempt: made.attempt },
    model,
    seed: firstSeed(sent?.seeds ?? seeds[nodeRun.nodeId] ?? {}),
    seeds,
    cost: run?.cost ?? (made.remoteRunId || made.costMicro > 0 ? decimal(made.costMicro) : null),
    created_at: new Date(made.endedMs ?? made.startedMs ?? flowRun.startedMs).toISOString(),
    evaluation: evaluationOf(sources, made.remoteRunId, flowRun.orgId),
    output: outputOf(found),
  })
}

/** A run made outside any flow run here: a one-node flow of its model and inputs. */
function recordOfMirroredRun(
  sources: RecordSources,
  run: Run,
  found: FoundMedia,
): ProvenanceRecord | null {
  const clean = cleaner(sources)
  const inputs = clean(run.input) as Record<string, unknown>
  const model = run.model_id ? sources.mirror.models.get({ orgId: run.org_id }, run.model_id) : null
  const label = model?.name ?? run.model_slug ?? 'Model'
  // The flow carries the ports only; the run's values are its flow inputs, cleaned like every
  // value of a record (the flow's defaults would carry the run's addresses along).
  const flow = oneNodeFlow({
    key: `run:${run.id}`,
    name: label,
    node: {
      label,
      slug: run.model_slug,
      type_code: run.target_type_code === 'wfengine_workflow' ? 'wfengine_workflow' : 'model',
      model_id: run.model_id,
      wfengine_workflow_id: run.wfengine_workflow_id,
    },
    inputs: model?.inputs ?? portsOf(run.input),
    outputs: model?.outputs ?? portsOf(run.output),
  })
  const nodeId = flow.nodes[0]?.id ?? ''
  const seeds = Object.fromEntries(
    Object.entries(run.input).filter(
      ([name, value]) => /seed/i.test(name) && Number.isInteger(value),
    ),
  ) as Record<string, number>
  return checked({
    format: PROVENANCE_FORMAT,
    version: PROVENANCE_VERSION,
    flow: flow as unknown as Record<string, unknown>,
    flow_version: null,
    node: { id: nodeId, label },
    node_inputs: inputs,
    flow_inputs: inputs,
    run_id: run.id,
    node_run: null,
    model: modelOf(sources, run, null, run.org_id),
    seed: firstSeed(seeds),
    seeds: Object.keys(seeds).length > 0 ? { [nodeId]: seeds } : {},
    cost: run.cost,
    created_at: run.completed_at ?? run.created_at,
    evaluation: evaluationOf(sources, run.id, run.org_id),
    output: outputOf(found),
  })
}

function cleaner(sources: RecordSources) {
  const assetOf = (sha256: string): string | null =>
    sources.media?.owners(sha256).find((owner) => owner.kind === 'asset')?.id ?? null
  return (value: unknown) => cleanValue(value, assetOf)
}

function checked(record: ProvenanceRecord): ProvenanceRecord | null {
  const parsed = provenanceRecordSchema.safeParse(record)
  return parsed.success ? parsed.data : null
}

interface DocumentNode {
  id?: unknown
  label?: unknown
  slug?: unknown
  model_id?: unknown
}

/** The node in the document; inside a sub-flow (`<sub-flow node>/<node>`), the sub-flow node. */
function nodeOf(document: Record<string, unknown>, nodeId: string): DocumentNode | null {
  const nodes = Array.isArray(document.nodes) ? (document.nodes as DocumentNode[]) : []
  return (
    nodes.find((node) => node.id === nodeId) ??
    nodes.find((node) => node.id === nodeId.split('/')[0]) ??
    null
  )
}

function labelOf(node: DocumentNode | null, nodeId: string): string {
  if (typeof node?.label === 'string' && node.label !== '') return node.label
  if (typeof node?.slug === 'string' && node.slug !== '') return node.slug
  return nodeId
}

function modelOf(
  sources: RecordSources,
  run: Run | null,
  node: DocumentNode | null,
  orgId: string,
): ProvenanceRecord['model'] {
  const modelId = run?.model_id ?? (typeof node?.model_id === 'string' ? node.model_id : null)
  const model = modelId ? sources.mirror.models.get({ orgId }, modelId) : undefined
  const slug = run?.model_slug ?? model?.slug ?? null
  if (slug === null) return null
  return { slug, version: model?.version ?? null }
}

function evaluationOf(
  sources: RecordSources,
  runId: string | null,
  orgId: string,
): ProvenanceRecord['evaluation'] {
  if (!runId) return null
  const newest: Evaluation | undefined = sources.mirror.evaluations.list({
    orgId,
    runId,
    limit: 1,
  }).items[0]
  if (!newest?.id) return null
  return {
    id: newest.id,
    verdict: newest.overall_passed === null ? null : newest.overall_passed ? 'passed' : 'failed',
    score: newest.weighted_pass_rate,
  }
}

function outputOf(found: FoundMedia): ProvenanceRecord['output'] {
  return {
    name: found.name,
    index: found.index,
    sha256: found.sha256,
    media_type: found.mediaType,
  }
}

/** The first seed by input name: the record's `seed`. */
function firstSeed(seeds: Record<string, number>): number | null {
  const names = Object.keys(seeds).sort()
  return names.length > 0 ? (seeds[names[0] as string] ?? null) : null
}

/** Micro-credits as the service writes money: a decimal string. */
function decimal(micro: number): string {
  return (micro / 1_000_000).toFixed(6)
}

/** Ports for a run whose model this machine does not know, from the values it was given. */
function portsOf(values: unknown): OneNodePort[] {
  if (values === null || typeof values !== 'object' || Array.isArray(values)) return []
  return Object.entries(values).map(([name, value], index) => ({
    name,
    variable_type_code:
      typeof value === 'number'
        ? /seed/i.test(name)
          ? 'seed'
          : 'number'
        : typeof value === 'boolean'
          ? 'boolean'
          : 'text',
    sort_order: index,
  }))
}

import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import { provenanceRecordSchema } from '../../src-shared/domain/provenance'
import { openDatabases, type Databases } from '../../src-main/db'
import {
  BuiltinRunner,
  mirrorModels,
  onlineCatalog,
  parseFlowDocument,
  RemoteRunner,
  runFlow,
  type FlowDocument,
  type MediaRef,
  type OnlineCatalog,
} from '../../src-main/executor'
import { MediaStore } from '../../src-main/media-store'
import { readProvenance } from '../../src-main/provenance'
import {
  provenanceOfAsset,
  provenanceOfMedia,
  provenanceOfOutput,
  provenanceOfRun,
  type RecordSources,
} from '../../src-main/provenance/records'
import { cleanValue } from '../../src-main/provenance/records-values'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The provenance record of an output (issue 20), built from a real flow run on the sandbox and
 * the real ledger and mirror: every field, and nothing in it that could open a door or name a
 * place on this disk.
 */

let sandbox: TestSandbox
let client: ServiceClient
let home: string
let dbs: Databases
let online: OnlineCatalog
let remote: RemoteRunner
let sources: RecordSources
let textToImage: string
const PROFILE = 'provenance'

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 5 })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  home = mkdtempSync(join(tmpdir(), 'atelier-provenance-records-'))
  dbs = openDatabases(home)
  const page = await client.get('/v1/models', { params: { query: { limit: 100 } } })
  const model = page.items.find((item) => item.slug === 'atelier/text-to-image')
  if (!model) throw new Error('The sandbox has no text-to-image model.')
  textToImage = model.id
  online = onlineCatalog({ mirror: dbs.mirror, client, orgId: sandbox.orgId })
  remote = new RemoteRunner({
    client,
    ledger: dbs.ledger,
    profile: PROFILE,
    orgId: sandbox.orgId,
    models: mirrorModels(dbs.mirror, sandbox.orgId),
    poll: { initialMs: 10, maxMs: 100 },
  })
  sources = { ledger: dbs.ledger, mirror: dbs.mirror }
}, 60_000)

afterAll(async () => {
  dbs.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

/** A flow input `prompt` into one text-to-image node whose seed is on the dice. */
function pictureFlow(): { flow: FlowDocument; nodeId: string } {
  const nodeId = randomUUID()
  const parsed = parseFlowDocument({
    id: randomUUID(),
    name: 'Harbour pictures',
    version: 3,
    inputs: [{ id: randomUUID(), name: 'prompt', variable_type_code: 'text' }],
    nodes: [
      {
        id: nodeId,
        label: 'Picture',
        type_code: 'model',
        model_id: textToImage,
        config: { flow_inputs: { prompt: 'prompt' }, flow_outputs: { image: 'picture' } },
        inputs: [
          { id: randomUUID(), name: 'prompt', variable_type_code: 'text' },
          { id: randomUUID(), name: 'seed', variable_type_code: 'seed' },
        ],
        outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
      },
    ],
    outputs: [{ id: randomUUID(), name: 'picture', variable_type_code: 'image' }],
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return { flow: parsed.flow, nodeId }
}

const runIt = (flow: FlowDocument, inputs: Record<string, unknown>, extra = {}) =>
  runFlow({
    flow,
    inputs,
    runners: { model: remote },
    catalog: online,
    ledger: dbs.ledger,
    client,
    profile: PROFILE,
    orgId: sandbox.orgId,
    ...extra,
  })

/** Every string anywhere in a value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(strings)
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => [key, ...strings(item)])
  }
  return []
}

function expectNothingToHide(record: unknown): void {
  for (const text of strings(record)) {
    expect(text).not.toMatch(/http/i)
    expect(text).not.toContain('/tmp')
    expect(text).not.toContain(home)
    expect(text).not.toContain('X-Amz')
    expect(text).not.toContain(sandbox.keys.admin)
  }
}

describe('the record of a flow run output', () => {
  const prompt = `a teal harbour at dusk ${randomUUID().slice(0, 8)}`
  let flow: FlowDocument
  let nodeId: string
  let flowRunId: string
  let image: MediaRef
  let runId: string
  let seed: number

  it('names the flow as it ran, the node, its inputs, the run, the model, the seed and the cost', async () => {
    ;({ flow, nodeId } = pictureFlow())
    const result = await runIt(flow, { prompt })
    expect(result.state).toBe('succeeded')
    flowRunId = result.flowRunId
    image = result.outputs.picture as MediaRef
    const nodeRun = result.nodes.find((node) => node.nodeId === nodeId)
    runId = nodeRun?.remoteRunId as string
    expect(runId).toEqual(expect.any(String))

    const record = provenanceOfOutput(sources, { flowRunId, nodeId, output: 'image', index: 0 })
    expect(record).not.toBeNull()
    if (!record) return
    expect(provenanceRecordSchema.parse(record)).toEqual(record)
    expect(record.format).toBe('atelier.provenance')
    expect(record.version).toBe(1)
    // The whole document as it ran: it parses back into the same flow.
    const reparsed = parseFlowDocument(record.flow)
    expect(reparsed.ok && reparsed.flow.nodes.map((node) => node.id)).toEqual([nodeId])
    expect(record.flow.name).toBe('Harbour pictures')
    expect(record.flow_version).toBe(3)
    expect(record.node).toEqual({ id: nodeId, label: 'Picture' })
    expect(record.flow_inputs).toEqual({ prompt })
    seed = record.node_inputs.seed as number
    expect(Number.isInteger(seed)).toBe(true)
    expect(record.node_inputs).toMatchObject({ prompt, seed })
    expect(record.seed).toBe(seed)
    expect(record.seeds).toEqual({ [nodeId]: { seed } })
    expect(record.run_id).toBe(runId)
    expect(record.node_run).toEqual({ flow_run_id: flowRunId, node_id: nodeId, attempt: 1 })
    expect(record.model?.slug).toBe('atelier/text-to-image')
    expect(record.cost).toMatch(/^\d+\.\d+$/)
    expect(Number(record.cost)).toBeCloseTo(result.totals.costMicro / 1_000_000, 6)
    expect(Number.isNaN(Date.parse(record.created_at))).toBe(false)
    expect(record.evaluation).toBeNull()
    expect(record.output).toEqual({
      name: 'image',
      index: 0,
      sha256: image.sha256,
      media_type: image.content_type,
    })
    // The service sent the seed the record names: the run it made says so.
    const run: Run = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: runId } } })
    expect(run.input.seed).toBe(seed)
    expectNothingToHide(record)
  }, 60_000)

  it('is the same record from the service run id', () => {
    const byOutput = provenanceOfOutput(sources, {
      flowRunId,
      nodeId,
      output: 'image',
      index: 0,
    })
    expect(provenanceOfRun(sources, runId)).toEqual(byOutput)
  })

  it('for an output served from the cache, names the run and the seed that made it', async () => {
    const again = await runIt(flow, { prompt })
    expect(again.totals.dispatched).toBe(0)
    expect(again.totals.cached).toBe(1)
    const record = provenanceOfOutput(sources, {
      flowRunId: again.flowRunId,
      nodeId,
      output: 'image',
      index: 0,
    })
    expect(record?.run_id).toBe(runId)
    expect(record?.seed).toBe(seed)
    expect(record?.seeds).toEqual({ [nodeId]: { seed } })
    expect(record?.node_run?.flow_run_id).toBe(flowRunId)
    expect(record?.flow_inputs).toEqual({ prompt })
    expect(record?.output.sha256).toBe(image.sha256)
  }, 60_000)

  it('sends the seeds it is given for seeds on the dice, still from the cache when unchanged', async () => {
    const given = await runIt(flow, { prompt }, { seeds: { [nodeId]: { seed } } })
    expect(given.totals.dispatched).toBe(0)
    // A seed given to a flow with nothing cached for it is what the service is sent.
    const fresh = pictureFlow()
    const other = await runIt(
      fresh.flow,
      { prompt: `${prompt} again` },
      {
        seeds: { [fresh.nodeId]: { seed: 424242 } },
      },
    )
    expect(other.totals.dispatched).toBe(1)
    const record = provenanceOfOutput(sources, {
      flowRunId: other.flowRunId,
      nodeId: fresh.nodeId,
      output: 'image',
      index: 0,
    })
    expect(record?.seed).toBe(424242)
    const run: Run = await client.get('/v1/runs/{run_id}', {
      params: { path: { run_id: record?.run_id as string } },
    })
    expect(run.input.seed).toBe(424242)
  }, 60_000)

  it('keeps the flow document once however many runs ran it', () => {
    const count = dbs.ledger.db
      .prepare(
        `SELECT count(*) AS n FROM flow_documents WHERE sha256 IN (
        SELECT document_sha256 FROM flow_runs WHERE flow_id = ?)`,
      )
      .get(flow.id) as { n: number }
    expect(count.n).toBe(1)
  })

  it('names a local file by content, never by its path, and drops addresses and keys', () => {
    const local: MediaRef = {
      kind: 'media',
      sha256: 'a'.repeat(64),
      content_type: 'image/png',
      url: join(home, 'photo.png'),
    }
    const given = {
      photo: local,
      note: 'https://example.com/x?X-Amz-Signature=1',
      folder: '/tmp/pictures/out.png',
      api_key: 'k',
      words: 'a harbour at dusk',
    }
    expect(cleanValue(given, () => 'asset-1')).toEqual({
      photo: { media: { sha256: local.sha256, asset_id: 'asset-1', media_type: 'image/png' } },
      note: null,
      folder: null,
      words: 'a harbour at dusk',
    })
  })
})

describe('the record of a run made outside any flow run here', () => {
  it('is a one-node flow of the run’s model and inputs', async () => {
    const created = await client.post('/v1/models/{provider}/{model}/runs', {
      params: {
        path: { provider: 'atelier', model: 'text-to-image' },
        header: { 'Idempotency-Key': randomUUID() },
      },
      body: { input: { prompt: 'a lighthouse', seed: 77 } },
    })
    let run: Run = created
    const deadline = Date.now() + 30_000
    while (run.status_code !== 'succeeded' && Date.now() < deadline) {
      run = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: created.id } } })
      expect(['queued', 'running', 'pending', 'starting', 'succeeded']).toContain(run.status_code)
    }
    expect(run.status_code).toBe('succeeded')
    dbs.mirror.runs.upsertPage([run])
    const record = provenanceOfRun(sources, run.id)
    expect(record).not.toBeNull()
    if (!record) return
    expect(record.run_id).toBe(run.id)
    expect(record.node_run).toBeNull()
    expect(record.node?.label).toBe('Atelier Text to Image')
    expect(record.node_inputs).toMatchObject({ prompt: 'a lighthouse', seed: 77 })
    expect(record.seed).toBe(77)
    expect(record.model?.slug).toBe('atelier/text-to-image')
    expect(record.cost).toBe(run.cost)
    const first = (run.output as { images: { sha256: string }[] }).images[0]
    expect(record.output.sha256).toBe(first?.sha256)
    // A flow file the editor can open: the model's ports as flow inputs, the run's values as
    // the record's flow inputs (never as the flow's defaults, which would carry addresses).
    const parsed = parseFlowDocument(record.flow)
    expect(parsed.ok).toBe(true)
    if (!parsed.ok) return
    expect(parsed.flow.nodes).toHaveLength(1)
    expect(parsed.flow.nodes[0]?.model_id).toBe(run.model_id)
    expect(parsed.flow.inputs.map((input) => input.name)).toContain('prompt')
    expect(record.flow_inputs).toEqual(record.node_inputs)
    expectNothingToHide(record)
  }, 60_000)
})

describe('a picture a flow saves to the assets', () => {
  it('is saved with its record inside, naming the picture as the service made it', async () => {
    const { flow: base, nodeId } = pictureFlow()
    const imageOutput = base.nodes[0]?.outputs[0]?.id ?? ''
    const parsed = parseFlowDocument({
      ...base,
      nodes: [
        ...base.nodes,
        {
          id: randomUUID(),
          label: 'Keep it',
          type_code: 'builtin',
          builtin_node_code: 'save_to_assets',
          inputs: [
            {
              id: randomUUID(),
              name: 'image',
              variable_type_code: 'image',
              source_output_id: imageOutput,
            },
          ],
          outputs: [{ id: randomUUID(), name: 'asset_id', variable_type_code: 'text' }],
        },
      ],
    })
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
    const media = new MediaStore({ dir: join(home, 'media'), maxBytes: 64 * 1024 * 1024 })
    try {
      const builtin = new BuiltinRunner({
        media,
        service: client,
        recordOf: (sha256, flowRunId) => provenanceOfMedia(sources, sha256, flowRunId),
      })
      const result = await runIt(
        parsed.flow,
        { prompt: `a lighthouse kept ${randomUUID().slice(0, 8)}` },
        { runners: { model: remote, builtin } },
      )
      expect(result.state).toBe('succeeded')
      const nodes = dbs.ledger.flowRuns.nodes(result.flowRunId)
      const picture = nodes.find((node) => node.nodeId === nodeId)?.outputs?.image as MediaRef
      const kept = nodes.find((node) => node.nodeId !== nodeId)?.outputs?.asset_id
      expect(typeof kept).toBe('string')
      const asset = await client.get('/v1/assets/{asset_id}', {
        params: { path: { asset_id: String(kept) } },
      })
      // Not the picture's own bytes: the record is inside, so the asset's sha256 differs...
      expect(asset.sha256).not.toBe(picture.sha256)
      const bytes = new Uint8Array(await (await fetch(String(asset.url))).arrayBuffer())
      const reading = readProvenance(bytes)
      expect(reading.state).toBe('intact')
      if (reading.state !== 'intact') return
      // ...and taking it out again gives back the picture exactly as the service made it.
      expect(reading.record.output.sha256).toBe(picture.sha256)
      expect(reading.record.node?.id).toBe(nodeId)
      expect(reading.record.node_run?.flow_run_id).toBe(result.flowRunId)
      expectNothingToHide(reading.record)
      // The asset's details open the same record: its own file, on this computer, carries it.
      dbs.mirror.assets.upsertPage([asset])
      expect(provenanceOfAsset(sources, asset.id)).toBeNull()
      expect(provenanceOfAsset({ ...sources, media }, asset.id)).toEqual(reading.record)
    } finally {
      await media.close()
    }
  }, 60_000)
})

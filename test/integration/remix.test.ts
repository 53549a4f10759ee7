import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openCore, type Core } from '../../src-main/core'
import { parseFlowDocument, type FlowDocument } from '../../src-main/executor'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import { embedProvenance } from '../../src-main/provenance'
import { provenanceOfOutput } from '../../src-main/provenance/records'
import { sandboxBackend } from '../../src-main/workspace'
import type { FlowRunEventMessage, StoredFlow } from '../../src-shared/domain/flow-editor'
import type { ProvenanceRecord } from '../../src-shared/domain/provenance'
import type { RemixOpened } from '../../src-shared/domain/remix'
import type { IpcArgs, IpcChannel, IpcError, IpcValue } from '../../src-shared/ipc'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Remix (issue 20) through the window's channels: a real core over a real sandbox, a flow run
 * whose seed was on the dice, and its record opened again as a new flow and as a version, from
 * the run and from a picture file carrying the record.
 */

let sandbox: TestSandbox
let home: string
let logger: Logger
let core: Core
const messages: FlowRunEventMessage[] = []
const listeners = new Set<() => void>()

const handlers = () =>
  createHandlers({
    platform: 'linux',
    backend: () => null,
    openExternal: () => Promise.resolve(),
    core: () => core,
  })

const call = <C extends IpcChannel>(channel: C, args: IpcArgs<C>) =>
  dispatchIpc(handlers(), channel, args, { shell: 'web' })

async function ok<C extends IpcChannel>(channel: C, args: IpcArgs<C>): Promise<IpcValue<C>> {
  const result = await call(channel, args)
  if (!result.ok) throw new Error(`${channel}: ${result.error.code}: ${result.error.message}`)
  return result.value as IpcValue<C>
}

async function fails<C extends IpcChannel>(channel: C, args: IpcArgs<C>): Promise<IpcError> {
  const result = await call(channel, args)
  if (result.ok) throw new Error(`${channel} answered ${JSON.stringify(result.value)}`)
  return result.error
}

/** Resolves once the flow run has finished; fails after 30 s with what it saw. */
function finished(flowRunId: string): Promise<FlowRunEventMessage[]> {
  return new Promise((resolve, reject) => {
    const mine = () => messages.filter((m) => m.flowRunId === flowRunId)
    const check = () => {
      if (!mine().some((m) => m.event.type === 'flow-finished')) return
      listeners.delete(check)
      clearTimeout(timer)
      resolve(mine())
    }
    const timer = setTimeout(() => {
      listeners.delete(check)
      reject(new Error(`flow run ${flowRunId}: ${JSON.stringify(mine())}`))
    }, 30_000)
    listeners.add(check)
    check()
  })
}

function flowOf(stored: StoredFlow): FlowDocument {
  const parsed = parseFlowDocument(stored.flow)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.flow
}

function opened(value: RemixOpened): Extract<RemixOpened, { flow: unknown }> {
  if (!('flow' in value)) throw new Error(`a workflow was imported: ${JSON.stringify(value)}`)
  return value
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

let original: StoredFlow
let nodeId: string
let seedInputId: string
let flowRunId: string
let record: ProvenanceRecord
let madeSha256: string
const prompt = `a lighthouse in fog ${randomUUID().slice(0, 8)}`

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 5 })
  home = mkdtempSync(join(tmpdir(), 'atelier-remix-'))
  logger = openLogger({ home, level: 'info' })
  core = openCore({ home, logger, backend: { ...sandboxBackend(sandbox), close: async () => {} } })
  core.onEvent((name, payload) => {
    if (name !== 'flowRuns.event') return
    messages.push(payload as FlowRunEventMessage)
    for (const listener of [...listeners]) listener()
  })
  expect((await core.syncNow()).last?.outcome).toBe('ok')
  const model = core.databases.mirror.models.withSlug(
    { orgId: sandbox.orgId },
    'atelier/text-to-image',
  )
  if (!model) throw new Error('The sandbox has no text-to-image model.')

  // A local flow: prompt (flow input) → text-to-image, its seed on the dice.
  original = await ok('flows.create', { name: 'Lighthouse' })
  nodeId = randomUUID()
  seedInputId = randomUUID()
  const flow = {
    ...original.flow,
    inputs: [{ id: randomUUID(), name: 'prompt', variable_type_code: 'text', is_required: true }],
    outputs: [{ id: randomUUID(), name: 'picture', variable_type_code: 'image' }],
    nodes: [
      {
        id: nodeId,
        label: 'Picture',
        type_code: 'model',
        model_id: model.id,
        config: { flow_inputs: { prompt: 'prompt' }, flow_outputs: { image: 'picture' } },
        inputs: [
          { id: randomUUID(), name: 'prompt', variable_type_code: 'text' },
          {
            id: seedInputId,
            name: 'seed',
            variable_type_code: 'seed',
            value: 7,
            behavior_code: 'randomize',
          },
        ],
        outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
      },
    ],
  }
  await ok('flows.save', { id: original.id, flow })
  original = await ok('flows.get', { id: original.id })

  const started = await ok('flowRuns.start', { flow: original.flow, inputs: { prompt } })
  flowRunId = started.flowRunId
  const events = await finished(flowRunId)
  expect(events.at(-1)?.event).toMatchObject({ type: 'flow-finished', state: 'succeeded' })
  const found = provenanceOfOutput(core.databases, { flowRunId, nodeId, output: 'image', index: 0 })
  if (!found) throw new Error('The flow run has no record.')
  record = found
  madeSha256 = record.output.sha256
}, 90_000)

afterAll(async () => {
  await core.close()
  logger.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

/** What a remix must be: the flow as it ran, with the prompt as default and the seed locked. */
function expectRemixOf(remixed: FlowDocument, id: string, name: string): void {
  const ran = flowOf(original)
  const seed = record.seeds[nodeId]?.seed
  expect(seed).toEqual(expect.any(Number))
  expect(seed).not.toBe(7) // drawn at run time, not the value left under the dice
  expect(remixed).toEqual({
    ...ran,
    id,
    name,
    updated_at: remixed.updated_at,
    inputs: ran.inputs.map((input) => ({ ...input, flow_id: id, default_value: prompt })),
    outputs: ran.outputs.map((output) => ({ ...output, flow_id: id })),
    nodes: ran.nodes.map((node) => ({
      ...node,
      flow_id: id,
      inputs: node.inputs.map((input) =>
        input.id === seedInputId ? { ...input, value: seed, behavior_code: null } : input,
      ),
    })),
  })
}

describe('remix of a flow run', () => {
  it('opens as a new flow: the flow as it ran, its inputs set and its seed locked', async () => {
    const answer = opened(
      await ok('remix.open', {
        source: { flowRunId, nodeId, output: 'image', index: 0 },
        as: 'new',
      }),
    )
    expect(answer.reading).toBe('intact')
    expect(answer.note).toBeUndefined()
    expect(answer.flow.source).toBe('local')
    expect(answer.flow.id).not.toBe(original.id)
    expect(answer.flow.name).toBe('Lighthouse (remix)')
    expectRemixOf(flowOf(answer.flow), answer.flow.id, 'Lighthouse (remix)')
    // It is stored: the list has it, and it opens as it was answered.
    expect(await ok('flows.get', { id: answer.flow.id })).toEqual(answer.flow)

    // Run with nothing given, it makes the same picture again, from the cache.
    const again = await ok('flowRuns.start', { flow: answer.flow.flow, inputs: {} })
    const events = await finished(again.flowRunId)
    expect(events.at(-1)?.event).toMatchObject({ type: 'flow-finished', state: 'succeeded' })
    const remade = provenanceOfOutput(core.databases, {
      flowRunId: again.flowRunId,
      nodeId,
      output: 'image',
      index: 0,
    })
    expect(remade?.output.sha256).toBe(madeSha256)
  }, 60_000)

  it('opens from the service run id the same way', async () => {
    if (!record.run_id) throw new Error('The record names no run.')
    const preview = await ok('remix.inspect', { source: { runId: record.run_id } })
    expect(preview).toMatchObject({
      reading: 'intact',
      warning: null,
      flowName: 'Lighthouse',
      localFlow: { id: original.id, name: 'Lighthouse' },
      seed: record.seeds[nodeId]?.seed,
      model: { slug: 'atelier/text-to-image' },
      runId: record.run_id,
      nodeLabel: 'Picture',
    })
    const answer = opened(await ok('remix.open', { source: { runId: record.run_id }, as: 'new' }))
    // Opened twice, the second is told apart by its name.
    expect(answer.flow.name).toBe('Lighthouse (remix) (2)')
    expectRemixOf(flowOf(answer.flow), answer.flow.id, 'Lighthouse (remix) (2)')
  })

  it('opens as a new version of the original, keeping what was current as a version first', async () => {
    const answer = opened(
      await ok('remix.open', {
        source: { flowRunId, nodeId, output: 'image', index: 0 },
        as: 'version',
      }),
    )
    expect(answer.flow.id).toBe(original.id)
    const short = (record.run_id ?? '').slice(0, 8)
    expect(answer.flow.versions.map((v) => v.name)).toEqual([
      `Remix of run ${short}`,
      `Before the remix of run ${short}`,
    ])
    expectRemixOf(flowOf(answer.flow), original.id, 'Lighthouse')
    // What was current before the remix is kept as it was.
    const restored = await ok('flows.restoreVersion', {
      id: original.id,
      version: answer.flow.versions[1]?.version ?? 0,
    })
    expect(flowOf(restored).nodes).toEqual(flowOf(original).nodes)
  })

  it('refuses a version of a flow that is not local, and a run it has no record of', async () => {
    // The same flow under an id that is not one of this profile's flows.
    const otherId = randomUUID()
    const moved = JSON.parse(JSON.stringify(record.flow).replaceAll(original.id, otherId)) as object
    const foreign = { ...record, flow: { ...moved } }
    const png = await sharp({
      create: { width: 8, height: 8, channels: 3, background: '#336699' },
    })
      .png()
      .toBuffer()
    const file = { name: 'foreign.png', base64: base64(embedProvenance(png, foreign)) }
    const refused = await fails('remix.open', { source: { file }, as: 'version' })
    expect(refused.code).toBe('REMIX_NOT_LOCAL')
    expect(refused.message).toContain('Open it as a new flow')
    const unknown = await fails('remix.open', { source: { runId: randomUUID() }, as: 'new' })
    expect(unknown.code).toBe('NO_PROVENANCE')
  })
})

describe('remix of a dropped picture', () => {
  /** The output's bytes as the service made them, downloaded from the run. */
  async function madePicture(): Promise<Buffer> {
    const detail = await ok('runs.refresh', { runId: record.run_id ?? '' })
    const url = JSON.stringify(detail).match(/https?:\/\/[^"]+/)?.[0]
    if (!url) throw new Error('The run has no output URL.')
    return Buffer.from(await (await fetch(url)).arrayBuffer())
  }

  it('opens an intact picture as the flow that made it', async () => {
    const bytes = embedProvenance(await madePicture(), record)
    const answer = opened(
      await ok('remix.open', { source: { file: { name: 'x.png', base64: base64(bytes) } } }),
    )
    expect(answer.reading).toBe('intact')
    expect(answer.flow.name).toMatch(/^Lighthouse \(remix\)/)
    expectRemixOf(flowOf(answer.flow), answer.flow.id, answer.flow.name)
  })

  it('opens a picture changed since it was made, with the warning, and says which pictures are missing', async () => {
    const reference = randomUUID()
    const missing = 'ab'.repeat(32)
    const withPictures: ProvenanceRecord = {
      ...record,
      flow: {
        ...record.flow,
        inputs: [
          ...(record.flow.inputs as unknown[]),
          { id: reference, name: 'reference', variable_type_code: 'image' },
          { id: randomUUID(), name: 'style', variable_type_code: 'image' },
        ],
      },
      flow_inputs: {
        ...record.flow_inputs,
        reference: { media: { sha256: missing, asset_id: null, media_type: 'image/png' } },
        style: { media: { sha256: 'cd'.repeat(32), asset_id: 'asset-7', media_type: null } },
      },
    }
    // Edited after it was made: other pixels than the record's sha256 names.
    const edited = await sharp({
      create: { width: 16, height: 16, channels: 3, background: '#aa3300' },
    })
      .png()
      .toBuffer()
    const file = { name: 'edited.png', base64: base64(embedProvenance(edited, withPictures)) }
    const preview = await ok('remix.inspect', { source: { file } })
    expect(preview).toMatchObject({ reading: 'changed', warning: expect.stringMatching(/changed/) })
    const answer = opened(await ok('remix.open', { source: { file }, as: 'new' }))
    expect(answer.reading).toBe('changed')
    expect(answer.note).toContain('changed after Atelier made it')
    expect(answer.note).toContain(`The picture ${missing.slice(0, 12)}… for the input “reference”`)
    expect(answer.note).toContain('is not on this machine')
    const inputs = flowOf(answer.flow).inputs
    expect(inputs.find((i) => i.name === 'reference')?.default_value).toBeNull()
    expect(inputs.find((i) => i.name === 'style')?.default_value).toBe('asset-7')
    expect(inputs.find((i) => i.name === 'prompt')?.default_value).toBe(prompt)
  })

  it('says plainly when a file carries nothing, or a record it cannot trust', async () => {
    const plain = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
      .png()
      .toBuffer()
    const none = await fails('remix.open', {
      source: { file: { name: 'plain.png', base64: base64(plain) } },
    })
    expect(none).toMatchObject({
      code: 'NO_PROVENANCE',
      message: expect.stringContaining('carries no Atelier record or ComfyUI workflow'),
    })
    const text = await fails('remix.open', {
      source: { file: { name: 'notes.txt', base64: base64(Buffer.from('hello')) } },
    })
    expect(text.code).toBe('NO_PROVENANCE')

    const foreign = embedProvenance(plain, record)
    const swapped = Buffer.from(
      Buffer.from(foreign)
        .toString('latin1')
        .replace('"atelier.provenance"', '"atelier.provenancf"'),
      'latin1',
    )
    // The chunk's checksum no longer matches: damaged, not trusted.
    const damaged = await fails('remix.open', {
      source: { file: { name: 'swapped.png', base64: base64(swapped) } },
    })
    expect(damaged.code).toBe('PROVENANCE_DAMAGED')
    expect(damaged.message).toContain('damaged')
    // A picture too broken to read is said so, not reported as Atelier's own failure.
    const broken = await fails('remix.open', {
      source: { file: { name: 'broken.png', base64: base64(plain.subarray(0, 20)) } },
    })
    expect(broken.code).toBe('PROVENANCE_MALFORMED_FILE')
  })

  it('imports a ComfyUI workflow file as a workflow', async () => {
    const workflow = {
      '3': {
        class_type: 'KSampler',
        inputs: {
          seed: 5,
          steps: 20,
          cfg: 7,
          sampler_name: 'euler',
          scheduler: 'normal',
          denoise: 1,
          model: ['4', 0],
          positive: ['6', 0],
          negative: ['7', 0],
          latent_image: ['5', 0],
        },
      },
      '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'sd.safetensors' } },
      '5': { class_type: 'EmptyLatentImage', inputs: { width: 512, height: 512, batch_size: 1 } },
      '6': { class_type: 'CLIPTextEncode', inputs: { text: 'a fox', clip: ['4', 1] } },
      '7': { class_type: 'CLIPTextEncode', inputs: { text: 'blurry', clip: ['4', 1] } },
      '8': { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
      '9': { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'fox' } },
    }
    const file = {
      name: 'fox_txt2img.json',
      base64: base64(Buffer.from(JSON.stringify(workflow))),
    }
    expect(await ok('remix.inspect', { source: { file } })).toEqual({ workflow: true })
    const answer = await ok('remix.open', { source: { file }, as: 'new' })
    expect(answer).toEqual({ workflow: { id: expect.any(String), name: 'Fox txt2img' } })
  })
})

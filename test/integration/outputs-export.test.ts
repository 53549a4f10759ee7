import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandboxBackend } from '../../src-main/workspace'
import { openCore, type Core } from '../../src-main/core'
import { createHandlers, dispatchIpc } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import { readProvenance, stripProvenance } from '../../src-main/provenance'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { IpcArgs, IpcChannel, IpcValue } from '../../src-shared/ipc'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Downloads from the app carry their history (issue 20): `outputs.export` through the real
 * dispatcher and handlers over a real core on the sandbox, the bytes read back intact.
 */

let sandbox: TestSandbox
let home: string
let logger: Logger
let core: Core
const finished = new Map<string, Extract<FlowRunEvent, { type: 'flow-finished' }>>()
const waiting = new Map<string, () => void>()

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

/** Resolves when the flow run's `flow-finished` event has come. */
function end(flowRunId: string): Promise<Extract<FlowRunEvent, { type: 'flow-finished' }>> {
  return new Promise((resolve) => {
    const check = () => {
      const event = finished.get(flowRunId)
      if (!event) return
      waiting.delete(flowRunId)
      resolve(event)
    }
    waiting.set(flowRunId, check)
    check()
  })
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 5 })
  home = mkdtempSync(join(tmpdir(), 'atelier-outputs-export-'))
  logger = openLogger({ home, level: 'info' })
  core = openCore({ home, logger, backend: { ...sandboxBackend(sandbox), close: async () => {} } })
  core.onEvent((name, payload) => {
    if (name !== 'flowRuns.event') return
    const { flowRunId, event } = payload as FlowRunEventMessage
    if (event.type === 'flow-finished') finished.set(flowRunId, event)
    waiting.get(flowRunId)?.()
  })
  expect((await core.syncNow()).last?.outcome).toBe('ok')
}, 60_000)

afterAll(async () => {
  await core.close()
  logger.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

describe('outputs.export', () => {
  let flowRunId: string
  let nodeId: string
  let picture: { sha256: string; content_type: string }
  let runId: string

  it('gives a flow run output as a file named for the flow, with its record inside', async () => {
    const model = core.databases.mirror.models.withSlug(
      { orgId: sandbox.orgId },
      'atelier/text-to-image',
    )
    nodeId = randomUUID()
    const flow = {
      id: randomUUID(),
      name: 'Kites over the bay',
      inputs: [],
      outputs: [{ id: randomUUID(), name: 'picture', variable_type_code: 'image' }],
      nodes: [
        {
          id: nodeId,
          label: 'Kite',
          type_code: 'model',
          model_id: model?.id,
          config: { flow_outputs: { image: 'picture' } },
          inputs: [
            { id: randomUUID(), name: 'prompt', variable_type_code: 'text', value: 'a red kite' },
            { id: randomUUID(), name: 'seed', variable_type_code: 'seed' },
          ],
          outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
        },
      ],
    }
    const started = await ok('flowRuns.start', {
      flow: flow,
      inputs: {},
    })
    flowRunId = started.flowRunId
    const done = await end(flowRunId)
    expect(done.state).toBe('succeeded')
    picture = done.outputs.picture as { sha256: string; content_type: string }

    const file = await ok('outputs.export', { flowRunId, nodeId, output: 'image', index: 0 })
    expect(file.fileName).toBe('kites-over-the-bay-image-1.png')
    expect(file.mediaType).toBe('image/png')
    expect(file.recorded).toBe(true)
    const bytes = Buffer.from(file.base64, 'base64')
    const reading = readProvenance(bytes)
    expect(reading.state).toBe('intact')
    if (reading.state !== 'intact') return
    expect(reading.record.output.sha256).toBe(picture.sha256)
    expect(reading.record.node).toEqual({ id: nodeId, label: 'Kite' })
    expect(reading.record.node_inputs.prompt).toBe('a red kite')
    expect(reading.record.seed).toEqual(expect.any(Number))
    runId = reading.record.run_id as string
    // The picture is the one the service made: the same pixels, still a PNG for any viewer.
    expect(stripProvenance(bytes).length).toBeGreaterThan(0)
    const meta = await sharp(bytes).metadata()
    expect(meta.format).toBe('png')
  }, 60_000)

  it('gives a run’s output by run id, with the same record', async () => {
    const byOutput = await ok('outputs.export', { flowRunId, nodeId, output: 'image', index: 0 })
    const byRun = await ok('outputs.export', { runId, index: 0 })
    expect(byRun.base64).toBe(byOutput.base64)
    expect(byRun.fileName).toBe('kites-over-the-bay-image-1.png')
  })

  it('answers NOT_FOUND, with what to do, for an output this computer does not know', async () => {
    const missing = await call('outputs.export', {
      flowRunId: randomUUID(),
      nodeId,
      output: 'image',
      index: 0,
    })
    expect(missing).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
    if (!missing.ok) expect(missing.error.message).toContain('sync')
    const bad = await call('outputs.export', { runId: '', index: -1 })
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } })
  })
})

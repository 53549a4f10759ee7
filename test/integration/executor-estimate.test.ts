import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import { openDatabases, type Databases } from '../../src-main/db'
import {
  mirrorModels,
  onlineCatalog,
  parseFlowDocument,
  RemoteRunner,
  runFlow,
  type FlowDocument,
  type OnlineCatalog,
} from '../../src-main/executor'
import { estimateFlow } from '../../src-main/executor/engine/estimate'
import { checkFlow } from '../../src-main/flows/check'
import { openLogger, type Logger } from '../../src-main/log'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { runAtelier } from '../helpers/cli'
import { secretServiceAvailability, startSecretService } from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The estimate knows the cache (issue 19): a node a run will take from the cache costs 0 and is
 * counted as such, in `runFlow`'s estimate (what `atelier run` prints) and the editor's check
 * alike, predicted with the scheduler's own key. Against the sandbox, with a real ledger.
 */

let sandbox: TestSandbox
let client: ServiceClient
let home: string
let dbs: Databases
let logger: Logger
let online: OnlineCatalog
let remote: RemoteRunner
const PROFILE = 'estimate'
const models = new Map<string, string>()

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 10 })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  home = mkdtempSync(join(tmpdir(), 'atelier-executor-estimate-'))
  dbs = openDatabases(home)
  logger = openLogger({ home, level: 'info' })
  const page = await client.get('/v1/models', { params: { query: { limit: 100 } } })
  for (const slug of ['atelier/text-to-image', 'atelier/upscale']) {
    const model = page.items.find((item) => item.slug === slug)
    if (!model) throw new Error(`The sandbox has no model ${slug}.`)
    models.set(slug, model.id)
  }
  online = onlineCatalog({ mirror: dbs.mirror, client, orgId: sandbox.orgId })
  remote = new RemoteRunner({
    client,
    ledger: dbs.ledger,
    profile: PROFILE,
    orgId: sandbox.orgId,
    models: mirrorModels(dbs.mirror, sandbox.orgId),
    poll: { initialMs: 10, maxMs: 100 },
  })
}, 60_000)

afterAll(async () => {
  dbs.close()
  logger.close()
  rmSync(home, { recursive: true, force: true })
  await sandbox.close()
})

/**
 * `draw` (text to image, its seed on the dice) feeding `enlarge` (upscale), and `other`, a
 * second picture on its own. The ids stay the same across `prompt`s: the same flow, edited.
 */
function threeNodes(ids: { flow: string; draw: string; enlarge: string; other: string }) {
  const drawn = randomUUID()
  return (prompt: string, otherPrompt: string): FlowDocument => {
    const picture = (id: string, label: string, text: string, output: string) => ({
      id,
      label,
      slug: label,
      type_code: 'model',
      model_id: models.get('atelier/text-to-image'),
      inputs: [
        { id: randomUUID(), name: 'prompt', variable_type_code: 'text', value: text },
        { id: randomUUID(), name: 'width', variable_type_code: 'integer', value: 64 },
        { id: randomUUID(), name: 'height', variable_type_code: 'integer', value: 64 },
      ],
      outputs: [{ id: output, name: 'image', variable_type_code: 'image' }],
    })
    const parsed = parseFlowDocument({
      id: ids.flow,
      name: 'Estimate test',
      nodes: [
        picture(ids.draw, 'draw', prompt, drawn),
        {
          id: ids.enlarge,
          label: 'enlarge',
          slug: 'enlarge',
          type_code: 'model',
          model_id: models.get('atelier/upscale'),
          inputs: [
            {
              id: randomUUID(),
              name: 'image',
              variable_type_code: 'image',
              source_output_id: drawn,
            },
          ],
          outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
        },
        picture(ids.other, 'other', otherPrompt, randomUUID()),
      ],
    })
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
    return parsed.flow
  }
}

async function estimate(flow: FlowDocument, force: readonly string[] = []) {
  await online.complete(flow, new AbortController().signal)
  return estimateFlow({
    flow,
    inputs: {},
    runners: { model: remote },
    catalog: online.catalog,
    cache: {
      flowRuns: dbs.ledger.flowRuns,
      scope: { profile: PROFILE, orgId: sandbox.orgId },
      forced: (id) => force.includes(id),
    },
  })
}

async function run(flow: FlowDocument, force: readonly string[] = []) {
  const events: FlowRunEvent[] = []
  const result = await runFlow({
    flow,
    runners: { model: remote },
    catalog: online,
    ledger: dbs.ledger,
    client,
    profile: PROFILE,
    orgId: sandbox.orgId,
    force,
    onEvent: (event) => events.push(event),
  })
  const started = events.find((event) => event.type === 'flow-started')
  if (started?.type !== 'flow-started') throw new Error('The flow run did not start.')
  expect(result.state).toBe('succeeded')
  return { result, started }
}

describe('an estimate that knows the cache', () => {
  const ids = {
    flow: randomUUID(),
    draw: randomUUID(),
    enlarge: randomUUID(),
    other: randomUUID(),
  }
  const edit = threeNodes(ids)
  const tag = randomUUID().slice(0, 8)
  // Made once the sandbox runs: the models' ids are known only then.
  let flow: FlowDocument
  beforeAll(() => {
    flow = edit(`a lighthouse ${tag}`, `a windmill ${tag}`)
  })

  it('prices every paid node before the first run, and the run costs what it said', async () => {
    const before = await estimate(flow)
    expect(before.cachedNodes).toBe(0)
    for (const id of [ids.draw, ids.enlarge, ids.other]) {
      expect(before.byNode[id], `node ${id}`).toBeGreaterThan(0)
    }
    const { result, started } = await run(flow)
    expect(started.estimateMicro).toBe(before.totalMicro)
    expect(started.cachedNodes).toBe(0)
    expect(result.totals).toMatchObject({ dispatched: 3, cached: 0 })
    expect(result.totals.costMicro).toBe(before.totalMicro)
  }, 60_000)

  it('says 0 with every node from the cache when nothing changed, as the run then costs', async () => {
    const after = await estimate(flow)
    expect(after).toEqual({
      byNode: { [ids.draw]: 0, [ids.enlarge]: 0, [ids.other]: 0 },
      totalMicro: 0,
      cachedNodes: 3,
    })
    const { result, started } = await run(flow)
    expect(started).toMatchObject({ estimateMicro: 0, cachedNodes: 3 })
    expect(result.estimateCachedNodes).toBe(3)
    expect(result.totals).toMatchObject({ dispatched: 0, cached: 3, costMicro: 0 })
  }, 60_000)

  it('counts again only the node whose input changed and what it feeds', async () => {
    const changed = edit(`a lighthouse at dusk ${tag}`, `a windmill ${tag}`)
    const estimated = await estimate(changed)
    expect(estimated.cachedNodes).toBe(1)
    expect(estimated.byNode[ids.other]).toBe(0)
    expect(estimated.byNode[ids.draw]).toBeGreaterThan(0)
    // Downstream of a node that will run: what it will be given is not known, so it counts.
    expect(estimated.byNode[ids.enlarge]).toBeGreaterThan(0)
    const { result, started } = await run(changed)
    expect(started.estimateMicro).toBe(estimated.totalMicro)
    expect(result.totals).toMatchObject({ dispatched: 2, cached: 1 })
    expect(result.totals.costMicro).toBe(estimated.totalMicro)
  }, 60_000)

  it('counts a forced node and what it feeds, and no other', async () => {
    const forcedDraw = await estimate(flow, [ids.draw, ids.enlarge])
    expect(forcedDraw.cachedNodes).toBe(1)
    expect(forcedDraw.byNode[ids.other]).toBe(0)

    // Through the run: --force names one node, what it feeds runs again too.
    const { result, started } = await run(flow, ['other'])
    expect(started.cachedNodes).toBe(2)
    expect(started.estimateByNode[ids.other]).toBeGreaterThan(0)
    expect(started.estimateByNode[ids.draw]).toBe(0)
    expect(result.totals).toMatchObject({ dispatched: 1, cached: 2 })
    expect(result.totals.costMicro).toBe(started.estimateMicro)
  }, 60_000)

  it('gives the editor’s check the same estimate, with the nodes from the cache', async () => {
    const closing = new AbortController()
    const check = await checkFlow(
      {
        catalog: online,
        runners: () => ({ model: remote }),
        client,
        orgId: sandbox.orgId,
        logger,
        signal: closing.signal,
        cache: {
          flowRuns: dbs.ledger.flowRuns,
          scope: { profile: PROFILE, orgId: sandbox.orgId },
        },
      },
      flow,
      undefined,
    )
    expect(check.problems).toEqual([])
    expect(check.estimate).toEqual({
      totalMicro: 0,
      byNode: { [ids.draw]: 0, [ids.enlarge]: 0, [ids.other]: 0 },
    })
    expect(check.cachedNodes).toBe(3)

    // Another profile's cache is not this one's: the same flow costs its full price there.
    const elsewhere = await checkFlow(
      {
        catalog: online,
        runners: () => ({ model: remote }),
        client,
        orgId: sandbox.orgId,
        logger,
        signal: closing.signal,
        cache: {
          flowRuns: dbs.ledger.flowRuns,
          scope: { profile: 'someone-else', orgId: sandbox.orgId },
        },
      },
      flow,
      undefined,
    )
    expect(elsewhere.cachedNodes).toBe(0)
    expect(elsewhere.estimate?.totalMicro).toBeGreaterThan(0)
  }, 60_000)
})

describe.skipIf(!secretServiceAvailability().available)(
  'atelier run’s estimate line',
  { timeout: 180_000 },
  () => {
    it('says how many nodes come from the cache, and that they cost nothing', async () => {
      const keyring = await startSecretService()
      const scratch = mkdtempSync(join(tmpdir(), 'atelier-estimate-cli-'))
      try {
        const cli = (args: string[], input = '') =>
          runAtelier(['--home', join(scratch, 'home'), ...args], { env: keyring.env, input })
        const added = await cli(
          ['profile', 'add', 'work', '--base-url', sandbox.url],
          sandbox.keys.admin,
        )
        expect(added.code).toBe(0)
        const file = join(scratch, 'flow.json')
        const ids = {
          flow: randomUUID(),
          draw: randomUUID(),
          enlarge: randomUUID(),
          other: randomUUID(),
        }
        writeFileSync(
          file,
          JSON.stringify(threeNodes(ids)(`a barn ${randomUUID()}`, `a mill ${randomUUID()}`)),
        )

        const first = await cli(['run', file])
        expect(first.stderr).toBe('')
        expect(first.stdout).toMatch(/Estimate: 0\.\d{4} credits\n/)
        expect(first.stdout).not.toContain('from the cache')

        const again = await cli(['run', file])
        expect(again.code).toBe(0)
        expect(again.stdout).toContain('Estimate: 0.0000 credits (3 nodes from the cache)')
        expect(again.stdout).toMatch(/succeeded: 0 dispatched, 3 cached, 0 skipped; cost 0\.0000/)

        const forced = await cli(['run', file, '--force', 'other'])
        expect(forced.code).toBe(0)
        expect(forced.stdout).toMatch(
          /Estimate: (?!0\.0000)\d+\.\d{4} credits \(2 nodes from the cache\)/,
        )
      } finally {
        await keyring.close()
        rmSync(scratch, { recursive: true, force: true })
      }
    })
  },
)

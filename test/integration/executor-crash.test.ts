import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../src-shared/api'
import { openDatabases } from '../../src-main/db'
import {
  mirrorModels,
  onlineCatalog,
  parseFlowDocument,
  RemoteRunner,
  runFlow,
  type FlowDocument,
} from '../../src-main/executor'
import type { DispatchPoint } from '../../src-main/executor/remote'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * The flow-level crash test: a child process runs a whole flow with `runFlow` and is killed
 * with SIGKILL at one moment of one of its dispatches; this process then resumes the same flow
 * run (`flowRunId`) on the ledger the child left. Whatever the moment, the sandbox holds exactly
 * one run per intent, no node has more than one intent, and the flow completes with every node
 * run succeeded. The moments are the four, with "after the intent commit, before the
 * request" taken at both of its ends (the intent just written, and marked sending).
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CHILD = join(root, 'test', 'helpers', 'executor-flow-child.ts')
const PROFILE = 'default'

let sandbox: TestSandbox
let client: ServiceClient
const modelIds = new Map<string, string>()

beforeAll(async () => {
  sandbox = await startTestSandbox({ latencyMs: 30 })
  client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.keys.admin,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  })
  for (const slug of ['atelier/text-to-image', 'atelier/caption']) {
    const page = await client.get('/v1/models', { params: { query: { q: `slug=${slug}` } } })
    const id = page.items[0]?.id
    if (!id) throw new Error(`The sandbox has no model ${slug}.`)
    modelIds.set(slug, id)
  }
})

afterAll(async () => {
  await sandbox.close()
})

/**
 * A diamond of four model nodes: a picture, two captions of it (brief, detailed), and a second
 * picture prompted by the one and steered away from the other. The seed makes each case's
 * prompts its own.
 */
function diamond(seed: number): FlowDocument {
  const out = { a: randomUUID(), b: randomUUID(), c: randomUUID(), d: randomUUID() }
  const input = (name: string, type: string, fields: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    name,
    variable_type_code: type,
    source_output_id: null,
    value: null,
    ...fields,
  })
  const node = (
    key: keyof typeof out,
    slug: string,
    inputs: ReturnType<typeof input>[],
    output: [string, string],
  ) => ({
    id: randomUUID(),
    label: key,
    slug: key,
    type_code: 'model',
    model_id: modelIds.get(slug),
    config: {},
    inputs,
    outputs: [{ id: out[key], name: output[0], variable_type_code: output[1] }],
  })
  const parsed = parseFlowDocument({
    id: randomUUID(),
    name: `Crash diamond ${seed}`,
    inputs: [],
    outputs: [],
    nodes: [
      node(
        'a',
        'atelier/text-to-image',
        [
          input('prompt', 'text', { value: `a teal harbour, crash seed ${seed}` }),
          input('width', 'integer', { value: 64 }),
          input('height', 'integer', { value: 64 }),
          input('seed', 'seed', { value: seed }),
        ],
        ['image', 'image'],
      ),
      node(
        'b',
        'atelier/caption',
        [input('image', 'image', { source_output_id: out.a })],
        ['caption', 'text'],
      ),
      node(
        'c',
        'atelier/caption',
        [
          input('image', 'image', { source_output_id: out.a }),
          input('detail', 'enum', { value: 'detailed' }),
        ],
        ['caption', 'text'],
      ),
      node(
        'd',
        'atelier/text-to-image',
        [
          input('prompt', 'text', { source_output_id: out.b }),
          input('negative_prompt', 'text', { source_output_id: out.c }),
          input('width', 'integer', { value: 64 }),
          input('height', 'integer', { value: 64 }),
          input('seed', 'seed', { value: seed }),
        ],
        ['image', 'image'],
      ),
    ],
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.flow
}

function runChild(
  job: object,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(job)], {
      cwd: root,
      env: { ...process.env, ATELIER_TEST_KEY: sandbox.keys.admin },
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stderr })
    })
  })
}

/** The sandbox's runs of one flow run, by the intent their metadata names. */
async function runsByIntent(flowRunId: string): Promise<Map<string, Run[]>> {
  const byIntent = new Map<string, Run[]>()
  for await (const run of client.list('/v1/runs', { params: { query: { limit: 500 } } })) {
    const meta = run.metadata as { atelier_intent_id?: string; atelier_flow_run_id?: string } | null
    if (meta?.atelier_flow_run_id !== flowRunId) continue
    const key = meta.atelier_intent_id ?? ''
    byIntent.set(key, [...(byIntent.get(key) ?? []), run])
  }
  return byIntent
}

describe('a flow run killed at any point of a dispatch', () => {
  const POINTS: (DispatchPoint | 'request-sent')[] = [
    'before-intent',
    'intent-committed',
    'sending-committed',
    'request-sent',
    'answered',
  ]
  // The seed names the case's prompts and which dispatch dies: the first (node a), one of the
  // two captions that run side by side, or the last (node d).
  const SEEDS = [
    { seed: 1, hit: 0 },
    { seed: 2, hit: 2 },
    { seed: 3, hit: 3 },
  ]

  it('resumes under the same flow run id: one run per intent, every node run succeeded', async () => {
    const cases = POINTS.flatMap((point) => SEEDS.map((entry) => ({ point, ...entry })))
    // Two children at a time: the machine is shared, and each case has its own home.
    for (let i = 0; i < cases.length; i += 2) {
      await Promise.all(
        cases.slice(i, i + 2).map(async ({ point, seed, hit }) => {
          const label = `${point}, seed ${seed}, dispatch #${hit}`
          const home = mkdtempSync(join(tmpdir(), 'atelier-flow-crash-'))
          try {
            const flow = diamond(seed)
            const flowRunId = randomUUID()
            const child = await runChild({
              url: sandbox.url,
              orgId: sandbox.orgId,
              home,
              profile: PROFILE,
              flowRunId,
              point,
              hit,
              flow,
            })
            expect(child.signal, `${label}: ${child.stderr}`).toBe('SIGKILL')

            const dbs = openDatabases(home)
            try {
              expect(dbs.ledger.flowRuns.get(flowRunId)?.state, label).toBe('running')
              // What the kill left, before anything is resumed: the state the case is about.
              const before = await runsByIntent(flowRunId)
              const left = flow.nodes.flatMap((n) => dbs.ledger.intents.forNode(flowRunId, n.id))
              const made = (id: string) => (before.get(id) ?? []).length
              if (point === 'before-intent') {
                expect(left.length, label).toBeLessThanOrEqual(hit)
              } else if (point === 'intent-committed') {
                expect(
                  left.some((intent) => intent.state === 'prepared' && made(intent.id) === 0),
                  label,
                ).toBe(true)
              } else if (point === 'sending-committed') {
                expect(
                  left.some((intent) => intent.state === 'sending' && made(intent.id) === 0),
                  label,
                ).toBe(true)
              } else {
                // The service made the run; the ledger does not know it yet.
                expect(
                  left.some((intent) => intent.state === 'sending' && made(intent.id) === 1),
                  label,
                ).toBe(true)
              }
              const remote = new RemoteRunner({
                client,
                ledger: dbs.ledger,
                profile: PROFILE,
                orgId: sandbox.orgId,
                models: mirrorModels(dbs.mirror, sandbox.orgId),
                poll: { initialMs: 10, maxMs: 100 },
              })
              const result = await runFlow({
                flow,
                runners: { model: remote },
                catalog: onlineCatalog({ mirror: dbs.mirror, client, orgId: sandbox.orgId }),
                ledger: dbs.ledger,
                client,
                profile: PROFILE,
                orgId: sandbox.orgId,
                flowRunId,
                concurrency: 4,
              })
              expect(result.error, label).toBeNull()
              expect(result.state, label).toBe('succeeded')
              expect(result.resumed, label).toBe(true)
              expect(result.flowRunId, label).toBe(flowRunId)

              const nodes = dbs.ledger.flowRuns.nodes(flowRunId)
              expect(nodes.map((n) => n.nodeId).sort(), label).toEqual(
                flow.nodes.map((n) => n.id).sort(),
              )
              expect(
                nodes.map((n) => n.state),
                label,
              ).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded'])
              expect(dbs.ledger.flowRuns.get(flowRunId)?.state, label).toBe('succeeded')

              const byIntent = await runsByIntent(flowRunId)
              const intents = flow.nodes.flatMap((n) => dbs.ledger.intents.forNode(flowRunId, n.id))
              // One intent per node, each succeeded, each with exactly one run at the sandbox.
              expect(intents.map((intent) => intent.nodeId).sort(), label).toEqual(
                flow.nodes.map((n) => n.id).sort(),
              )
              for (const intent of intents) {
                expect(intent.state, label).toBe('succeeded')
                const runs = byIntent.get(intent.id) ?? []
                expect(runs, `${label}, node ${intent.nodeId}`).toHaveLength(1)
                expect(runs[0]?.id, label).toBe(intent.remoteRunId)
              }
              // No run names an intent the ledger does not know of.
              expect([...byIntent.keys()].sort(), label).toEqual(
                intents.map((intent) => intent.id).sort(),
              )
            } finally {
              dbs.close()
            }
          } finally {
            rmSync(home, { recursive: true, force: true })
          }
        }),
      )
    }
  }, 300_000)
})

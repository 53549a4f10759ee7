import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NodeRun, Page, Run, RunLog } from '../../src-shared/api'
import { MODEL_CATALOG } from '../../src-main/sandbox/models'
import { seedHistory, type HistoryContext } from '../../src-main/sandbox/runs'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const COUNT = 3_000
const DAY = 24 * 60 * 60 * 1000
let sandbox: TestSandbox
let seen: HistoryContext | undefined
let summary: Awaited<ReturnType<typeof seedHistory>>

beforeAll(async () => {
  sandbox = await startTestSandbox()
  summary = await seedHistory(sandbox.services, sandbox.teamOrgId, COUNT, [
    (context) => {
      seen = context
    },
  ])
})

afterAll(async () => {
  await sandbox.close()
})

async function list<T>(path: string): Promise<T[]> {
  const items: T[] = []
  let pq: string | null = null
  for (let page = 0; page < 20; page++) {
    const separator = path.includes('?') ? '&' : '?'
    const response = await sandbox.call(
      'GET',
      `${path}${separator}limit=500${pq ? `&pq=${encodeURIComponent(pq)}` : ''}`,
      { headers: { 'X-Organization-Id': sandbox.teamOrgId } },
    )
    expect(response.status, response.text).toBe(200)
    const body = response.body as Page<T>
    items.push(...body.items)
    pq = body.next
    if (!pq) break
  }
  return items
}

describe('seedHistory', () => {
  it('writes finished runs of every model over the last 90 days, valid against the contract', async () => {
    expect(summary).toMatchObject({ runs: COUNT, node_runs: COUNT })
    expect(summary.logs).toBeGreaterThan(COUNT / 10)
    const runs = await list<Run>('/v1/runs')
    expect(runs).toHaveLength(COUNT)
    expect(new Set(runs.map((run) => run.model_slug))).toEqual(
      new Set(MODEL_CATALOG.map((model) => model.slug)),
    )
    const statuses = new Map<string, number>()
    for (const run of runs) statuses.set(run.status_code, (statuses.get(run.status_code) ?? 0) + 1)
    expect([...statuses.keys()].sort()).toEqual(['canceled', 'failed', 'succeeded'])
    expect(statuses.get('succeeded')).toBeGreaterThan(COUNT * 0.7)
    const times = runs.map((run) => Date.parse(run.created_at))
    expect(Math.min(...times)).toBeGreaterThan(Date.now() - 91 * DAY)
    expect(Math.max(...times)).toBeLessThan(Date.now())
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(80 * DAY)
    expect(new Set(runs.map((run) => run.cost)).size).toBeGreaterThan(3)
    for (const run of runs.slice(0, 200)) {
      expect(Date.parse(run.completed_at ?? '')).toBeGreaterThanOrEqual(Date.parse(run.created_at))
      expect(run.duration_ms).toBe(Date.parse(run.completed_at ?? '') - Date.parse(run.created_at))
    }
    expect(runs.some((run) => run.source_code === 'rerun' && run.parent_run_id !== null)).toBe(true)
    // None of it shows in the main organization.
    const main = await sandbox.call('GET', '/v1/runs?limit=10')
    expect((main.body as Page<Run>).items).toHaveLength(0)
  })

  it('gives succeeded runs real outputs and failed ones the failure their model gives', async () => {
    const headers = { 'X-Organization-Id': sandbox.teamOrgId }
    const q = encodeURIComponent('status_code=succeeded and model_slug=atelier/upscale')
    const upscaled = (await sandbox.call('GET', `/v1/runs?q=${q}&limit=1`, { headers }))
      .body as Page<Run>
    const file = (upscaled.items[0]?.output?.images as { url: string; width: number }[])[0]
    const response = await fetch(file?.url ?? '')
    expect(response.status).toBe(200)
    const metadata = await sharp(Buffer.from(await response.arrayBuffer())).metadata()
    expect(metadata.width).toBe(file?.width)

    const failedQ = encodeURIComponent('status_code=failed and model_slug=atelier/text-to-image')
    const failed = (await sandbox.call('GET', `/v1/runs?q=${failedQ}&limit=1`, { headers }))
      .body as Page<Run>
    expect(failed.items[0]).toMatchObject({
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
      failure_message: expect.stringContaining('Prompt is required'),
      cost: '0.0000',
    })
  })

  it('writes one node run per run and the log lines of a sample', async () => {
    const runs = await list<Run>('/v1/runs?fields=id')
    const withLogs = (
      await Promise.all(
        runs.slice(0, 40).map(async (run) => ({
          run,
          logs: await list<RunLog>(`/v1/runs/${run.id}/logs`),
          nodes: await list<NodeRun>(`/v1/runs/${run.id}/node-runs`),
        })),
      )
    ).filter((entry) => {
      expect(entry.nodes).toHaveLength(1)
      return entry.logs.length > 0
    })
    expect(withLogs.length).toBeGreaterThan(0)
    for (const { logs, nodes } of withLogs) {
      expect(logs[0]?.message).toMatch(/^Queued/)
      expect(logs.some((log) => log.node_run_id === nodes[0]?.id)).toBe(true)
    }
  })

  it('feeds the model stats and hands the runs to extra seeders', async () => {
    const model = MODEL_CATALOG.find((m) => m.slug === 'atelier/flaky')
    const stats = await sandbox.call('GET', `/v1/models/${model?.id ?? ''}/stats`, {
      headers: { 'X-Organization-Id': sandbox.teamOrgId },
    })
    const body = stats.body as { run_count: number; success_rate: number }
    expect(body.run_count).toBeGreaterThan(50)
    expect(body.success_rate).toBeGreaterThan(0.5)
    expect(body.success_rate).toBeLessThan(0.9)

    expect(seen?.orgId).toBe(sandbox.teamOrgId)
    expect(seen?.runs).toHaveLength(COUNT)
    // Text models (a caption) succeed with no media output: only image and video runs have one.
    const withOutput = (seen?.runs ?? []).filter(
      (run) => run.status_code === 'succeeded' && run.output_sha256 !== null,
    )
    expect(withOutput.length).toBeGreaterThan(0)
    for (const run of withOutput) expect(run.output_sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it('can be re-run on its history: the seeded input runs again', async () => {
    const q = encodeURIComponent('model_slug=atelier/text-to-image')
    const headers = { 'X-Organization-Id': sandbox.teamOrgId }
    const page = (await sandbox.call('GET', `/v1/runs?q=${q}&limit=1`, { headers }))
      .body as Page<Run>
    const [run] = page.items
    const rerun = await sandbox.call('POST', `/v1/runs/${run?.id ?? ''}/rerun`, { headers })
    expect(rerun.status).toBe(201)
    const id = (rerun.body as Run).id
    let status = 'queued'
    for (let i = 0; i < 200 && !['succeeded', 'failed'].includes(status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      status = ((await sandbox.call('GET', `/v1/runs/${id}`, { headers })).body as Run).status_code
    }
    expect(status).toBe(run?.status_code === 'failed' ? 'failed' : 'succeeded')
  })
})

describe('atelier sandbox --seed-runs', () => {
  it('seeds the main organization before it prints its ready line', async () => {
    const root = join(import.meta.dirname, '..', '..')
    const child = spawn(
      process.execPath,
      [join(root, 'bin', 'atelier.mjs'), 'sandbox', '--seed-runs', '250'],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    try {
      const ready = await new Promise<{ url: string; keys: { admin: string } }>(
        (resolve, reject) => {
          createInterface({ input: child.stdout }).once('line', (line) => {
            resolve(JSON.parse(line) as { url: string; keys: { admin: string } })
          })
          child.once('exit', (code) => {
            reject(new Error(`exited with ${code}`))
          })
        },
      )
      const response = await fetch(`${ready.url}/v1/runs?limit=500&fields=id`, {
        headers: { Authorization: `Bearer ${ready.keys.admin}` },
      })
      expect(((await response.json()) as Page<Run>).items).toHaveLength(250)
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  })
})

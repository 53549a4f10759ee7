import type { Run, RunStatusCode } from '../../src-shared/api'

/**
 * Runs as the service sends them, made in bulk and deterministically for tests and benchmarks
 * that fill a mirror straight through its repositories (`mirror.runs.upsertPage`).
 */

export const MODELS = ['atelier/text-to-image', 'atelier/upscale', 'atelier/portrait'] as const
export const FLOW_ID = '0f10a000-0000-7000-8000-000000000001'
const STATUSES: readonly RunStatusCode[] = [
  'succeeded',
  'succeeded',
  'succeeded',
  'failed',
  'canceled',
  'running',
  'queued',
]
const SUBJECTS = ['harbour', 'lighthouse', 'orchard', 'glacier', 'market', 'observatory', 'dune']
const MOODS = ['at dusk', 'in fog', 'under snow', 'in spring rain', 'at noon', 'by lantern light']

export const runId = (n: number) => `0a000000-0000-7000-8000-${String(n).padStart(12, '0')}`

export interface RunsOptions {
  orgId: string
  /** Epoch ms of the newest run; each older one is a minute earlier. */
  newestMs: number
}

/** Run `n` of a deterministic history: n = 0 is the newest. */
export function makeRun(n: number, { orgId, newestMs }: RunsOptions): Run {
  const createdMs = newestMs - n * 60_000
  const at = new Date(createdMs).toISOString()
  const status = STATUSES[n % STATUSES.length] ?? 'succeeded'
  const flow = n % 10 === 9
  const model = flow ? null : (MODELS[n % MODELS.length] ?? MODELS[0])
  const done = status === 'succeeded' || status === 'failed' || status === 'canceled'
  const durationMs = done ? 800 + ((n * 37) % 4000) : null
  const cost = done ? `0.${String(100 + ((n * 13) % 900)).padStart(4, '0')}` : null
  const subject = SUBJECTS[n % SUBJECTS.length] ?? 'harbour'
  const mood = MOODS[Math.floor(n / SUBJECTS.length) % MOODS.length] ?? 'at dusk'
  return {
    id: runId(n),
    org_id: orgId,
    target_type_code: flow ? 'flow' : 'model',
    source_code: 'api',
    model_id: null,
    model_slug: model,
    flow_id: flow ? FLOW_ID : null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: status,
    input: { prompt: `a ${subject} ${mood}, study ${String(n)}`, width: 512, height: 512 },
    output:
      status === 'succeeded'
        ? { images: [{ url: `https://example.invalid/${String(n)}.png`, width: 512 }] }
        : null,
    metadata: null,
    callback_url: null,
    idempotency_key: null,
    progress: done ? 1 : 0,
    cost,
    estimated_cost: cost,
    failure_code: status === 'failed' ? 'MODEL_ERROR' : null,
    failure_stage: status === 'failed' ? 'inference' : null,
    failure_message: status === 'failed' ? 'The model ran out of memory.' : null,
    duration_ms: durationMs,
    created_at: at,
    queued_at: at,
    started_at: done ? at : null,
    completed_at: done ? new Date(createdMs + (durationMs ?? 0)).toISOString() : null,
    updated_at: at,
  }
}

/** Runs 0 to `count - 1`, newest first, in pages of `page` for `upsertPage`. */
export function* runPages(
  count: number,
  options: RunsOptions,
  page = 1_000,
): Generator<Run[], void, undefined> {
  for (let start = 0; start < count; start += page) {
    const runs: Run[] = []
    for (let n = start; n < Math.min(count, start + page); n++) runs.push(makeRun(n, options))
    yield runs
  }
}

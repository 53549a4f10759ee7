import type Database from 'better-sqlite3'
import { isoTime } from '../clock'
import { seedEvaluations, type SeededRun } from '../evaluations'
import { seedAssets } from '../media'
import {
  findModel,
  microToDecimal,
  priceRun,
  runModel,
  validateInput,
  type CatalogModel,
  type ModelLog,
} from '../models'
import type { SandboxServices } from '../services'
import { BulkIds } from './ids'
import { normalizedOutput } from './model-target'

// SeededRun is declared beside seedEvaluations, which judges these runs: the evaluations area sits
// below the runs area (runs judge images and seed evaluations), so it names nothing of runs/.
export type { SeededRun }

export interface HistoryContext {
  services: SandboxServices
  orgId: string
  /** Oldest first. */
  runs: readonly SeededRun[]
  random: () => number
}

/**
 * The extension point of history seeding: other areas (evaluations, assets) pass seeders that
 * add their own records about the seeded runs; they run in order after the runs are written.
 */
export type HistorySeeder = (context: HistoryContext) => void | Promise<void>

export interface HistorySummary {
  runs: number
  logs: number
  node_runs: number
  evaluations: number
  assets: number
  asset_folders: number
  elapsed_ms: number
}

/**
 * What a history of `runs` runs comes with: one evaluation per four runs (at most 25,000) and one
 * asset per ten (at most 5,000, each with its own bytes on disk). `--seed-runs` documents this.
 */
export function historyShares(runs: number): { evaluations: number; assets: number } {
  return {
    evaluations: Math.min(25_000, Math.floor(runs / 4)),
    assets: Math.min(5_000, Math.floor(runs / 10)),
  }
}

const DAY_MS = 24 * 60 * 60 * 1000
const WINDOW_MS = 90 * DAY_MS
/** Rows per transaction: large enough to amortize the commit, small enough to keep memory flat. */
const BATCH = 10_000
/** One run in this many gets the full set of log lines. */
const LOG_SAMPLE = 10
/**
 * The image input of seeded runs: a neutral address, as in the catalog examples, that seeding
 * never fetches (their outputs come from a picture rendered here). Re-running one of those runs
 * fails with INPUT_FETCH_FAILED, as it would for a picture that is gone.
 */
const EXAMPLE_IMAGE = 'https://assets.atelier.invalid/examples/poppy-field.png'

/** How each model appears in the history: its share of runs and two typical inputs. */
const MIX: readonly { slug: string; weight: number; inputs: Record<string, unknown>[] }[] = [
  {
    slug: 'atelier/text-to-image',
    weight: 35,
    inputs: [
      { prompt: 'a red sunset over the sea', width: 256, height: 256, seed: 7 },
      { prompt: 'teal geometry', width: 384, height: 256, style: 'geometric', seed: 42 },
    ],
  },
  {
    slug: 'atelier/image-to-image',
    weight: 12,
    inputs: [
      { image: EXAMPLE_IMAGE, prompt: 'gold evening light', strength: 0.5, seed: 3 },
      { image: EXAMPLE_IMAGE, prompt: 'navy ink wash', strength: 0.8, seed: 9 },
    ],
  },
  {
    slug: 'atelier/upscale',
    weight: 12,
    inputs: [
      { image: EXAMPLE_IMAGE, scale: 2 },
      { image: EXAMPLE_IMAGE, scale: 4 },
    ],
  },
  {
    slug: 'atelier/remove-background',
    weight: 10,
    inputs: [
      { image: EXAMPLE_IMAGE, tolerance: 48 },
      { image: EXAMPLE_IMAGE, tolerance: 20, feather: false },
    ],
  },
  {
    slug: 'atelier/caption',
    weight: 10,
    inputs: [{ image: EXAMPLE_IMAGE }, { image: EXAMPLE_IMAGE, detail: 'detailed' }],
  },
  {
    slug: 'atelier/text-to-video',
    weight: 8,
    inputs: [
      { prompt: 'blue bubbles drifting', duration_seconds: 1, fps: 8, seed: 11 },
      { prompt: 'green waves', width: 128, height: 128, duration_seconds: 2, fps: 6, seed: 5 },
    ],
  },
  {
    slug: 'atelier/slow-render',
    weight: 5,
    inputs: [
      { prompt: 'orange sunrise', width: 256, height: 256, seed: 5 },
      { prompt: 'violet dusk', width: 256, height: 384, seed: 6 },
    ],
  },
  { slug: 'atelier/flaky', weight: 8, inputs: [{ seed: 1 }, { prompt: 'a lucky run', seed: 2 }] },
]

const METADATA = [
  'null',
  'null',
  '{"project":"Spring campaign"}',
  '{"project":"Product shots","client":"Nordlys"}',
  '{"campaign":"Autumn lookbook","round":2}',
]

/** Everything about one input of one model that every run of it shares, as JSON text. */
interface Variant {
  model: CatalogModel
  seed: number
  workMs: number
  costMicro: number
  outputSha: string | null
  json: {
    modelHead: string
    input: string
    nodeInput: string
    /** A failed run's input: the one that really fails (its required input left out). */
    failedInput: string
    failedNodeInput: string
    output: string
    cost: string
    failure: string
  }
  logs: { ok: string[]; failed: string[] }
  failure: { code: string; stage: string; message: string }
}

const str = (value: string) => JSON.stringify(value)

function logLines(logs: readonly ModelLog[]): string[] {
  return logs.map((log) => `"level_code":${str(log.level_code)},"message":${str(log.message)}`)
}

/** Renders each input once for real: the seeded runs share these outputs, costs and logs. */
async function buildVariants(
  services: SandboxServices,
): Promise<{ weight: number; variants: Variant[] }[]> {
  const picture = await runModel(
    'atelier/text-to-image',
    { prompt: 'poppy field', width: 256, height: 192, seed: 4 },
    { seed: 4 },
  )
  if (!picture.ok || !picture.files[0]) throw new Error('could not render the history picture')
  const pictureBytes = picture.files[0].bytes
  const fetchImage = () => Promise.resolve(pictureBytes)
  const mix = []
  for (const entry of MIX) {
    const model = findModel(entry.slug)
    if (!model) throw new Error(`the history names an unknown model ${entry.slug}`)
    const variants: Variant[] = []
    for (const input of entry.inputs) {
      const seed = typeof input.seed === 'number' ? input.seed : 1
      const result = await runModel(model.slug, input, {
        seed,
        fetchImage,
        failureRate: 0,
        random: services.random,
      })
      if (!result.ok) throw new Error(`${model.slug} failed: ${result.failure_message}`)
      const output = normalizedOutput(services, model, result, seed)
      const cost = priceRun(model, input, result).micro
      // The failure each model really gives: its required input left out (flaky: its crash).
      const { prompt: _prompt, image: _image, ...withoutRequired } = input
      const failedInput = model.slug === 'atelier/flaky' ? input : withoutRequired
      const rejected = await runModel(model.slug, failedInput, { seed, failureRate: 1 })
      const failure = rejected.ok
        ? { code: 'MODEL_ERROR', stage: 'inference', message: 'The model failed.' }
        : {
            code: rejected.failure_code,
            stage: rejected.failure_stage,
            message: rejected.failure_message,
          }
      const images = (output.images as { sha256: string }[] | undefined) ?? []
      const video = output.video as { sha256: string } | null | undefined
      variants.push({
        model,
        seed,
        workMs: result.workMs,
        costMicro: cost,
        outputSha: images[0]?.sha256 ?? video?.sha256 ?? null,
        json: {
          modelHead: `"model_id":"${model.id}","model_slug":"${model.slug}","flow_id":null,"wfengine_workflow_id":null,"batch_id":null`,
          input: JSON.stringify(input),
          nodeInput: JSON.stringify({ ...validateInput(model, input).input, seed }),
          failedInput: JSON.stringify(failedInput),
          failedNodeInput: JSON.stringify({ ...validateInput(model, failedInput).input, seed }),
          output: JSON.stringify(output),
          cost: str(microToDecimal(cost)),
          failure: `"failure_code":${str(failure.code)},"failure_stage":${str(failure.stage)},"failure_message":${str(failure.message)}`,
        },
        logs: {
          ok: logLines(result.logs),
          failed: logLines(rejected.logs),
        },
        failure,
      })
    }
    mix.push({ weight: entry.weight, variants })
  }
  return mix
}

const NO_FAILURE = '"failure_code":null,"failure_stage":null,"failure_message":null'

/**
 * Fills an organization with `count` finished runs spread over the last 90 days: every catalog
 * model, mostly succeeded, some failed (the failure each model really gives) or canceled, with
 * real output files (rendered once per input and shared), one node run each and the full log
 * lines for one run in ten. Rows are written with one prepared INSERT in transactions of 10,000
 * and their JSON assembled from pre-rendered pieces, which is what keeps 100,000 runs in seconds.
 * Then the evaluations and media areas add their share (`historyShares`): evaluations, many about
 * these runs, and a media library. The balance is not touched: this is history, not new spending.
 */
export async function seedHistory(
  services: SandboxServices,
  orgId: string,
  count: number,
  extras: readonly HistorySeeder[] = [],
  /** Other amounts of evaluations and assets than `historyShares` gives (benchmarks). */
  sizes: Partial<ReturnType<typeof historyShares>> = {},
): Promise<HistorySummary> {
  const started = performance.now()
  const random = services.random
  const mix = await buildVariants(services)
  const totalWeight = mix.reduce((sum, entry) => sum + entry.weight, 0)
  const pick = (): Variant => {
    let draw = random() * totalWeight
    for (const entry of mix) {
      draw -= entry.weight
      if (draw < 0) return entry.variants[Math.floor(random() * entry.variants.length)] as Variant
    }
    return mix[0]?.variants[0] as Variant
  }

  const now = services.clock()
  const created: number[] = []
  for (let i = 0; i < count; i++) created.push(now - Math.floor(random() * WINDOW_MS) - 60_000)
  created.sort((a, b) => a - b)

  const ids = new BulkIds()
  const insert = services.db.prepare(
    `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )
  const lastRunOf = new Map<string, string>()
  const seeded: SeededRun[] = []
  let logs = 0
  let nodeRuns = 0

  const writeLog = (
    runId: string,
    nodeRunId: string | null,
    at: number,
    line: string,
    data = 'null',
  ) => {
    const id = ids.at(at)
    const time = isoTime(at)
    const node = nodeRunId ? `"${nodeRunId}"` : 'null'
    insert.run(
      'run_logs',
      id,
      orgId,
      runId,
      time,
      time,
      `{"id":"${id}","run_id":"${runId}","node_run_id":${node},${line},"data":${data},"created_at":"${time}"}`,
    )
    logs++
  }

  const writeRun = (index: number, createdMs: number) => {
    const variant = pick()
    const draw = random()
    const flaky = variant.model.slug === 'atelier/flaky'
    const status: SeededRun['status_code'] =
      draw < (flaky ? 0.3 : 0.08) ? 'failed' : draw > 0.95 ? 'canceled' : 'succeeded'
    const queuedMs = 20 + Math.floor(random() * random() * 4000)
    const startMs = createdMs + queuedMs
    const runMs =
      status === 'succeeded'
        ? Math.round(variant.workMs * (0.7 + random() * 1.1))
        : Math.round(50 + random() * variant.workMs)
    const endMs = startMs + runMs
    const id = ids.at(createdMs)
    const nodeRunId = ids.at(startMs)
    const c = isoTime(createdMs)
    const s = isoTime(startMs)
    const e = isoTime(endMs)
    const slug = variant.model.slug
    const sourceDraw = random()
    const parent = sourceDraw < 0.05 ? lastRunOf.get(slug) : undefined
    const source = parent ? 'rerun' : sourceDraw > 0.9 ? 'platform' : 'api'
    const succeeded = status === 'succeeded'
    const cost = succeeded ? variant.json.cost : '"0.0000"'
    const failure = status === 'failed' ? variant.json.failure : NO_FAILURE
    const output = succeeded ? variant.json.output : 'null'
    const input = status === 'failed' ? variant.json.failedInput : variant.json.input
    const nodeInput = status === 'failed' ? variant.json.failedNodeInput : variant.json.nodeInput
    const progress = succeeded ? '1' : status === 'failed' ? '0.25' : '0.5'
    const metadata = METADATA[index % METADATA.length] ?? 'null'
    insert.run(
      'runs',
      id,
      orgId,
      variant.model.id,
      c,
      e,
      `{"id":"${id}","org_id":"${orgId}","target_type_code":"model","source_code":"${source}",${variant.json.modelHead},"parent_run_id":${parent ? `"${parent}"` : 'null'},"status_code":"${status}","input":${input},"output":${output},"metadata":${metadata},"callback_url":null,"idempotency_key":null,"progress":${progress},"cost":${cost},"estimated_cost":${variant.json.cost},${failure},"duration_ms":${endMs - createdMs},"created_at":"${c}","queued_at":"${c}","started_at":"${s}","completed_at":"${e}","updated_at":"${e}","_sandbox":{"seed":${variant.seed},"held_micro":${variant.costMicro},"callback_secret_id":null,"target":{"type":"model","model":"${slug}"}}}`,
    )
    insert.run(
      'node_runs',
      nodeRunId,
      orgId,
      id,
      s,
      e,
      `{"id":"${nodeRunId}","run_id":"${id}","flow_node_id":null,"wfengine_node_id":null,"status_code":"${status}","input":${nodeInput},"output":${output},"cost":${cost},${failure},"started_at":"${s}","completed_at":"${e}","created_at":"${s}","updated_at":"${e}"}`,
    )
    nodeRuns++
    if (index % LOG_SAMPLE === 0) {
      writeLog(
        id,
        null,
        createdMs,
        `"level_code":"info","message":${str(`Queued a run of ${slug}.`)}`,
      )
      writeLog(
        id,
        null,
        startMs,
        '"level_code":"info","message":"A worker picked up the run and is loading the model."',
      )
      writeLog(id, null, startMs, '"level_code":"info","message":"The run is running."')
      const lines = status === 'failed' ? variant.logs.failed : variant.logs.ok
      for (const line of lines) writeLog(id, nodeRunId, startMs + 1, line)
      const final =
        status === 'succeeded'
          ? `"level_code":"info","message":${str(`The run succeeded; it cost ${JSON.parse(cost) as string} credits.`)}`
          : status === 'failed'
            ? `"level_code":"error","message":${str(`The run failed at ${variant.failure.stage} (${variant.failure.code}). The held credits were refunded.`)}`
            : '"level_code":"warning","message":"The run was canceled while running; the held credits were refunded."'
      writeLog(id, null, endMs, final, `{"status_code":"${status}","cost":${cost}}`)
    }
    lastRunOf.set(slug, id)
    seeded.push({
      id,
      model_id: variant.model.id,
      model_slug: slug,
      status_code: status,
      created_at: c,
      completed_at: e,
      output_sha256: succeeded ? variant.outputSha : null,
    })
  }

  const batch = services.db.transaction((from: number, to: number) => {
    for (let index = from; index < to; index++) writeRun(index, created[index] ?? now)
  }) as Database.Transaction<(from: number, to: number) => void>
  for (let from = 0; from < count; from += BATCH) batch(from, Math.min(count, from + BATCH))

  const shares = { ...historyShares(count), ...sizes }
  const media = await seedAssets(services, orgId, shares.assets)
  const evaluations = await seedEvaluations(services, orgId, shares.evaluations, seeded)
  for (const seeder of extras) await seeder({ services, orgId, runs: seeded, random })
  return {
    runs: count,
    logs,
    node_runs: nodeRuns,
    evaluations: evaluations.evaluations,
    assets: media.assets,
    asset_folders: media.folders,
    elapsed_ms: Math.round(performance.now() - started),
  }
}

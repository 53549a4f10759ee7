import { randomBytes } from 'node:crypto'
import type { Sharp } from 'sharp'
import { sharp } from '../../native'
import type { Evaluation, Run } from '../../../src-shared/api'
import { isoTime, uuidv7 } from '../clock'
import { microToDecimal, runModel } from '../models'
import type { SandboxServices } from '../services'
import type { BaseRecord } from '../store'
import { analyseImage, type ImageFacts } from './analyse'
import { cuesOf } from './cues'
import { EvaluationFailure, type FailureCode } from './failure'
import { runJudges, type JudgeContext, type JudgeOutcome } from './judges'
import { COLLECTION, linksOf, PRICE_MICRO, type JobClass } from './record'
import { ACTIONS, buildVerdict, type VerdictFields } from './verdict'

/**
 * One run written by the runs area's `seedHistory`, for the seeders that add records about runs
 * (evaluations…). Declared here, beside its first reader, so that evaluations/ names nothing of
 * runs/: the runs area sits above this one (its built-in nodes judge images with it).
 */
export interface SeededRun {
  id: string
  model_id: string
  model_slug: string
  status_code: 'succeeded' | 'failed' | 'canceled'
  created_at: string
  completed_at: string
  /** The first output file of a succeeded image run (its blob), or null. */
  output_sha256: string | null
}

export interface EvaluationsSummary {
  evaluations: number
  /** Of which about seeded runs. */
  about_runs: number
  failed: number
  /** Re-evaluations: attempt 2 or later. */
  re_evaluations: number
  rated: number
}

const DAY_MS = 24 * 60 * 60 * 1000
const HOUR_MS = 60 * 60 * 1000
const WINDOW_MS = 90 * DAY_MS
const BATCH = 10_000
/** Evaluations about a seeded run, when there are enough of them; the rest are standalone. */
const RUN_SHARE = 0.75
const QUICK_SHARE = 0.2
const FAILED_SHARE = { run: 0.05, standalone: 0.16 }
const RATED_SHARE = 0.2
const MAX_ATTEMPTS = 3
/** How long a presigned output URL lives (what a run read hands out). */
const OUTPUT_URL_TTL_MS = HOUR_MS

/** Embedded by GET /v1/evaluations/{id} from other records, never stored. */
type Embedded = 'run' | 'model' | 'parent_evaluation'

/** One image the history's evaluations judge: measured once, shared by every row about it. */
interface Picture {
  key: string
  facts: ImageFacts
  contentType: string
  prompt: string | null
  /** What a run of it asked for (width, height): its input_attributes. */
  shape: Record<string, unknown> | null
  taskType: string | null
}

interface StandaloneBase {
  prompt: string
  style: string
  width: number
  height: number
  seed: number
  host: string
  folder: string
  stem: string
  taskType: string
  taskDescription: string
}

/** Images "generated anywhere": rendered here once, then judged as submitted by URL. */
const STANDALONE: readonly StandaloneBase[] = [
  {
    prompt: 'a lighthouse on a cliff at sunset, orange sky',
    style: 'abstract',
    width: 768,
    height: 512,
    seed: 14,
    host: 'renders.nordlys-studio.invalid',
    folder: 'campaign/spring',
    stem: 'lighthouse',
    taskType: 'illustration',
    taskDescription: 'Hero image for the spring landing page',
  },
  {
    prompt: 'a minimal product shot of a white mug on a plain backdrop',
    style: 'studio',
    width: 512,
    height: 512,
    seed: 22,
    host: 'cdn.halden-coffee.invalid',
    folder: 'shop/products',
    stem: 'mug',
    taskType: 'product_photo',
    taskDescription: 'Product tile for the web shop',
  },
  {
    prompt: 'teal and gold geometric poster',
    style: 'geometric',
    width: 512,
    height: 768,
    seed: 9,
    host: 'assets.poster-works.invalid',
    folder: 'posters/drafts',
    stem: 'poster',
    taskType: 'poster',
    taskDescription: 'Window poster, A2 portrait',
  },
]

/** Versions of a standalone image: as rendered, and the ways renders go wrong. */
const TREATMENTS: readonly {
  name: string
  weight: number
  apply: (image: Sharp, width: number) => Sharp
}[] = [
  { name: 'as-rendered', weight: 55, apply: (image) => image },
  { name: 'soft', weight: 18, apply: (image) => image.blur(3) },
  { name: 'dark', weight: 15, apply: (image) => image.linear(0.3, 0) },
  {
    name: 'small',
    weight: 12,
    apply: (image, width) => image.resize({ width: Math.round(width / 4) }),
  },
]

/** What people ask the evaluator to look for, besides the prompt. */
const INSTRUCTIONS: readonly (string | null)[] = [
  null,
  'Should feel bright and airy for the spring campaign.',
  'Hero banner: horizontal, detailed, no red.',
  'Must work as a square crop for social.',
  'Keep it minimal, on a plain backdrop.',
  'Moody night scene, dark tones.',
]

interface Request {
  /** The submission's input_attributes. */
  attributes: (facts: ImageFacts) => Record<string, unknown> | null
  /** The same, as the engine reads them for the judges. */
  requested: (facts: ImageFacts) => JudgeContext['requested']
}

const NO_REQUEST: Request = {
  attributes: () => null,
  requested: () => ({ width: null, height: null, aspectRatio: null }),
}

/** What a standalone submission says the image was meant to be. */
const REQUESTS: readonly Request[] = [
  NO_REQUEST,
  {
    attributes: (facts) => ({ width: facts.width, height: facts.height }),
    requested: (facts) => ({ width: facts.width, height: facts.height, aspectRatio: null }),
  },
  {
    attributes: () => ({ aspect_ratio: '16:9' }),
    requested: () => ({ width: null, height: null, aspectRatio: 16 / 9 }),
  },
  {
    attributes: () => ({ width: 1024, height: 1024 }),
    requested: () => ({ width: 1024, height: 1024, aspectRatio: null }),
  },
]

const TASK_TYPES: Readonly<Record<string, string>> = {
  'atelier/text-to-image': 'text_to_image',
  'atelier/slow-render': 'text_to_image',
  'atelier/image-to-image': 'image_to_image',
  'atelier/upscale': 'upscale',
  'atelier/remove-background': 'background_removal',
}

const FEEDBACK = {
  positive: [
    'Spot on, that is what the art director said too.',
    'Agree: the softness was the problem.',
    'Useful: caught the crop before it went out.',
    'Matches what we saw on the proof.',
  ],
  negative: [
    'Too strict: the dark mood is intended.',
    'Missed the banding in the sky.',
    'Passed, but the product is cut off at the edge.',
    'The prompt asked for teal and it is teal; the colour check is wrong here.',
    'Flagged the size, but we crop it anyway.',
  ],
}

const CLIENT_REFS = ['shot', 'job', 'ticket', 'asset']
const CALLBACK_URL = 'https://hooks.nordlys-studio.invalid/atelier/evaluations'

/** UUIDv7s at any instant, their random bits drawn in bulk (one call per id is a cost here). */
class Uuids {
  private pool = Buffer.alloc(0)
  private offset = 0

  at(ms: number): string {
    if (this.offset + 16 > this.pool.length) {
      this.pool = randomBytes(16 * 4096)
      this.offset = 0
    }
    const bytes = this.pool.subarray(this.offset, this.offset + 16)
    this.offset += 16
    return uuidv7(ms, bytes)
  }
}

async function readBlob(services: SandboxServices, sha256: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of services.blobs.open(sha256)) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/**
 * Width and height of a run's input: what the image was asked to be, and what a submission about
 * the run gets as input_attributes. (No catalog model takes an aspect ratio.)
 */
function shapeOf(input: Record<string, unknown>): Record<string, unknown> | null {
  const shape: Record<string, unknown> = {}
  for (const key of ['width', 'height']) {
    if (input[key] !== undefined && input[key] !== null) shape[key] = input[key]
  }
  return Object.keys(shape).length > 0 ? shape : null
}

const dimension = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null

/** The outputs of the seeded runs, each read and measured once. */
async function runPictures(
  services: SandboxServices,
  orgId: string,
  runs: readonly SeededRun[],
): Promise<Map<string, Picture>> {
  const firstRun = new Map<string, SeededRun>()
  for (const run of runs) {
    if (run.status_code === 'succeeded' && run.output_sha256 && !firstRun.has(run.output_sha256))
      firstRun.set(run.output_sha256, run)
  }
  const pictures = new Map<string, Picture>()
  for (const [sha256, run] of firstRun) {
    const stored = services.store.get<Run & BaseRecord>('runs', run.id, orgId)
    const images = (stored?.output?.images ?? []) as { sha256?: string; content_type?: string }[]
    const image = images.find((file) => file.sha256 === sha256)
    // Videos (and anything else that is not an image) are not what evaluations judge.
    if (!stored || !image?.content_type || !services.blobs.has(sha256)) continue
    const facts = await analyseImage(await readBlob(services, sha256))
    const prompt = stored.input.prompt
    pictures.set(sha256, {
      key: sha256,
      facts,
      contentType: image.content_type,
      prompt: typeof prompt === 'string' ? prompt : null,
      shape: shapeOf(stored.input),
      taskType: TASK_TYPES[run.model_slug] ?? null,
    })
  }
  return pictures
}

interface StandalonePicture extends Picture {
  base: StandaloneBase
  treatment: number
}

async function standalonePictures(): Promise<StandalonePicture[][]> {
  const all: StandalonePicture[][] = []
  for (const base of STANDALONE) {
    const rendered = await runModel(
      'atelier/text-to-image',
      {
        prompt: base.prompt,
        style: base.style,
        width: base.width,
        height: base.height,
        seed: base.seed,
      },
      { seed: base.seed },
    )
    if (!rendered.ok || !rendered.files[0]) throw new Error(`could not render "${base.prompt}"`)
    const bytes = rendered.files[0].bytes
    const versions: StandalonePicture[] = []
    for (const [index, treatment] of TREATMENTS.entries()) {
      const treated =
        index === 0 ? bytes : await treatment.apply(sharp(bytes), base.width).png().toBuffer()
      versions.push({
        key: `${base.stem}:${treatment.name}`,
        facts: await analyseImage(treated),
        contentType: 'image/png',
        prompt: base.prompt,
        shape: null,
        taskType: base.taskType,
        base,
        treatment: index,
      })
    }
    all.push(versions)
  }
  return all
}

/** The messages the evaluator really gives for images it cannot read. */
async function unreadableMessages(): Promise<string[]> {
  const messages: string[] = []
  const vector = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#0a7"/></svg>',
  )
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#0a7' } })
    .png()
    .toBuffer()
  for (const bytes of [vector, png.subarray(0, 60)]) {
    try {
      await analyseImage(bytes)
    } catch (error) {
      if (error instanceof EvaluationFailure) messages.push(error.message)
    }
  }
  return messages
}

/**
 * A verdict rendered once as JSON text, with holes for what differs per row: the evaluation id,
 * the completion time and the ids of judges and issues.
 */
interface VerdictTemplate {
  fields: Record<keyof VerdictFields, string[]>
  ids: number
  passed: boolean
}

const HOLE = /@@(eval|now|id\d+)@@/

function verdictTemplate(
  outcomes: readonly JudgeOutcome[],
  facts: ImageFacts,
  jobClass: JobClass,
): VerdictTemplate {
  let ids = 0
  const verdict = buildVerdict(outcomes, facts, jobClass, {
    evaluationId: '@@eval@@',
    newId: () => `@@id${String(ids++)}@@`,
    now: '@@now@@',
  })
  const fields = {} as Record<keyof VerdictFields, string[]>
  for (const [key, value] of Object.entries(verdict)) {
    fields[key as keyof VerdictFields] = JSON.stringify(value).split(HOLE)
  }
  return { fields, ids, passed: verdict.overall_passed === true }
}

function fillHoles(
  pieces: readonly string[],
  evaluationId: string,
  now: string,
  ids: readonly string[],
): string {
  let text = pieces[0] ?? ''
  for (let i = 1; i < pieces.length; i += 2) {
    const hole = pieces[i] ?? ''
    text +=
      hole === 'eval' ? evaluationId : hole === 'now' ? now : (ids[Number(hole.slice(2))] ?? '')
    text += pieces[i + 1] ?? ''
  }
  return text
}

interface Plan {
  id: string
  createdMs: number
  submittedMs: number
  completedMs: number
  picture: Picture
  run: SeededRun | null
  url: string
  jobClass: JobClass
  instructions: number
  request: number
  reference: StandalonePicture | null
  failure: { code: FailureCode; message: string } | null
  template: VerdictTemplate | null
  parent: Plan | null
  attempt: number
  child: Plan | null
  taskType: string | null
  taskDescription: string | null
  clientRef: string | null
  callbackUrl: string | null
  feedback: { positive: boolean; reason: string | null; atMs: number } | null
}

/** What the history's evaluations are about, each image measured once. */
interface Sources {
  byOutput: Map<string, Picture>
  standalone: StandalonePicture[][]
  /** The evaluator's messages for an SVG and for a truncated file. */
  unreadable: string[]
}

/** Failure codes cycle rather than being drawn, so that even a small history has each of them. */
const STANDALONE_FAILURES: readonly FailureCode[] = [
  'dispatch_failed',
  'invalid_media',
  'timed_out',
  'processing_failed',
  'dispatch_failed',
  'invalid_media',
]

const isStandalone = (picture: Picture): picture is StandalonePicture => 'base' in picture

/**
 * Decides every evaluation of the history, in memory, before anything is written: who submitted
 * what and when, how it ended, who rated it, what was re-evaluated. A parent has to know its
 * child (superseded_at, links.superseded_by) when it is written.
 */
class HistoryPlanner {
  private readonly templates = new Map<string, VerdictTemplate>()
  private readonly startMs: number
  private readonly endMs: number
  /** The evaluator's fetch timeout at this sandbox's latency (see EvaluationEngine). */
  private readonly timeoutMs: number
  private failureTurn = 0
  private failedTurn = 0
  private retryTurn = 0
  private fileNumber = 0

  constructor(
    private readonly services: SandboxServices,
    private readonly sources: Sources,
    private readonly uuids: Uuids,
  ) {
    const now = services.clock()
    this.startMs = now - WINDOW_MS
    this.endMs = now - 60_000
    this.timeoutMs = Math.min(30_000, Math.max(1_000, Math.round(services.config.latencyMs * 50)))
  }

  private get random(): () => number {
    return this.services.random
  }

  plan(count: number, runs: readonly SeededRun[]): Plan[] {
    const { random } = this
    // Runs to write about, in a random order; each is evaluated once (re-evaluations aside).
    const candidates = runs.filter(
      (run) => run.output_sha256 !== null && this.sources.byOutput.has(run.output_sha256),
    )
    for (let i = candidates.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      const swap = candidates[i] as SeededRun
      candidates[i] = candidates[j] as SeededRun
      candidates[j] = swap
    }
    const plans: Plan[] = []
    let next = 0
    while (plans.length < count) {
      let plan: Plan | null = null
      while (!plan && next < candidates.length && random() < RUN_SHARE) {
        plan = this.aboutRun(candidates[next++] as SeededRun)
      }
      plan ??= this.standalone()
      plans.push(plan)
      for (let last: Plan | null = plan; last && plans.length < count && this.wantsRetry(last);) {
        last = this.retry(last)
        if (last) plans.push(last)
      }
    }
    return plans
  }

  private aboutRun(run: SeededRun): Plan | null {
    const { random } = this
    const picture = this.sources.byOutput.get(run.output_sha256 ?? '')
    if (!picture || run.status_code !== 'succeeded') return null
    const runDone = Date.parse(run.completed_at)
    const failed = random() < FAILED_SHARE.run
    // Most are submitted within minutes of the run; a failed one sat past its URL's hour.
    const createdMs =
      runDone +
      (failed
        ? OUTPUT_URL_TTL_MS + Math.floor(random() * 6 * HOUR_MS)
        : 1_000 + Math.floor(random() * random() * 2 * HOUR_MS))
    if (createdMs + 60_000 > this.endMs) return null
    const plan = this.blank(picture)
    plan.run = run
    plan.taskType = random() < 0.4 ? picture.taskType : null
    if (failed) plan.failure = this.failureFor('run', null)
    plan.url = this.outputUrl(run, picture, failed ? runDone : createdMs - 500)
    this.finish(plan, createdMs)
    return plan
  }

  private standalone(): Plan {
    const { random } = this
    const all = this.sources.standalone
    const versions = all[Math.floor(random() * all.length)] ?? all[0] ?? []
    const picture = this.pickTreatment(versions)
    const plan = this.blank(picture)
    plan.request = random() < 0.5 ? 0 : 1 + Math.floor(random() * (REQUESTS.length - 1))
    plan.taskType = random() < 0.6 ? picture.taskType : null
    plan.taskDescription = random() < 0.35 ? picture.base.taskDescription : null
    if (picture.treatment !== 0 && random() < 0.35) plan.reference = versions[0] ?? null
    if (random() < FAILED_SHARE.standalone) this.fail(plan, 'standalone', picture)
    const span = this.endMs - 10 * 60_000 - this.startMs
    this.finish(plan, this.startMs + Math.floor(random() * span))
    return plan
  }

  /**
   * Every other evaluation that failed is submitted again, and a failed re-evaluation always is
   * (up to attempt 3); some that did not pass are re-checked. Turns, not draws, decide the
   * failures, so that even a small history has chains of every length.
   */
  private wantsRetry(plan: Plan): boolean {
    if (plan.attempt >= MAX_ATTEMPTS) return false
    if (plan.failure) return plan.attempt > 1 || this.failedTurn++ % 2 === 0
    return plan.template?.passed === false && this.random() < (plan.run ? 0.04 : 0.15)
  }

  /** A re-evaluation of `parent`: its context, the image submitted again (or fixed). */
  private retry(parent: Plan): Plan | null {
    const { random } = this
    const createdMs = parent.completedMs + 30_000 + Math.floor(random() * random() * 2 * DAY_MS)
    if (createdMs + 60_000 > this.endMs) return null
    const before = parent.picture
    // A standalone image that failed its verdict comes back re-rendered, as it was meant to be.
    const picture =
      isStandalone(before) && !parent.failure && before.treatment !== 0
        ? (this.sources.standalone.find((v) => v[0]?.base === before.base)?.[0] ?? before)
        : before
    const plan: Plan = {
      ...this.blank(picture),
      run: parent.run,
      jobClass: parent.jobClass,
      instructions: parent.instructions,
      request: parent.request,
      reference: parent.reference,
      parent,
      attempt: parent.attempt + 1,
      taskType: parent.taskType,
      taskDescription: parent.taskDescription,
      clientRef: parent.clientRef,
      callbackUrl: null,
    }
    // One re-evaluation in six fails again.
    if (this.retryTurn++ % 6 === 0) {
      this.fail(
        plan,
        parent.run ? 'run-again' : 'standalone',
        isStandalone(picture) ? picture : null,
      )
    }
    if (parent.run) plan.url = this.outputUrl(parent.run, picture, createdMs - 500)
    this.finish(plan, createdMs)
    parent.child = plan
    return plan
  }

  private blank(picture: Picture): Plan {
    const { random } = this
    const ref = CLIENT_REFS[Math.floor(random() * CLIENT_REFS.length)] ?? 'job'
    return {
      id: '',
      createdMs: 0,
      submittedMs: 0,
      completedMs: 0,
      picture,
      run: null,
      url: '',
      jobClass: random() < QUICK_SHARE ? 'quick' : 'standard',
      instructions: random() < 0.55 ? 0 : 1 + Math.floor(random() * (INSTRUCTIONS.length - 1)),
      request: 0,
      reference: null,
      failure: null,
      template: null,
      parent: null,
      attempt: 1,
      child: null,
      taskType: null,
      taskDescription: null,
      clientRef: random() < 0.3 ? `${ref}-${String(1000 + Math.floor(random() * 9000))}` : null,
      callbackUrl: random() < 0.05 ? CALLBACK_URL : null,
      feedback: null,
    }
  }

  /** Its id and times, its verdict (or none, when it failed), maybe a rating, its URL. */
  private finish(plan: Plan, createdMs: number): void {
    const { random } = this
    plan.id = this.uuids.at(createdMs)
    this.timeline(plan, createdMs)
    if (!plan.failure) plan.template = this.templateOf(plan)
    if (plan.template && random() < RATED_SHARE) {
      const positive = random() < (plan.template.passed ? 0.8 : 0.5)
      const reasons = positive ? FEEDBACK.positive : FEEDBACK.negative
      const afterMs = 60_000 + Math.floor(random() * random() * DAY_MS)
      plan.feedback = {
        positive,
        reason: random() < 0.6 ? (reasons[Math.floor(random() * reasons.length)] ?? null) : null,
        atMs: Math.min(this.endMs, plan.completedMs + afterMs),
      }
    }
    if (!plan.url && isStandalone(plan.picture)) plan.url = this.standaloneUrl(plan.picture)
  }

  /** Queue and judging times as the engine takes them at this sandbox's latency. */
  private timeline(plan: Plan, createdMs: number): void {
    const { random } = this
    const latency = this.services.config.latencyMs
    const queue = Math.round(latency * 0.5 * (0.8 + random() * 0.8)) + 2
    const work = !plan.failure
      ? Math.round(latency * (plan.jobClass === 'quick' ? 1.5 : 4) * (1 + random() * 0.3)) +
        30 +
        Math.floor(random() * 90)
      : plan.failure.code === 'timed_out'
        ? this.timeoutMs + Math.floor(random() * 40)
        : 20 + Math.floor(random() * 400)
    plan.createdMs = createdMs
    plan.submittedMs = createdMs + queue
    plan.completedMs = createdMs + queue + work
  }

  private pickTreatment(versions: readonly StandalonePicture[]): StandalonePicture {
    const total = TREATMENTS.reduce((sum, t) => sum + t.weight, 0)
    let draw = this.random() * total
    for (const version of versions) {
      draw -= TREATMENTS[version.treatment]?.weight ?? 0
      if (draw < 0) return version
    }
    return versions[0] as StandalonePicture
  }

  /**
   * Why an evaluation failed, in the evaluator's own words (source.ts, engine.ts, analyse.ts).
   * About a run: its output URL had expired (403) or the fetch was slow; a re-evaluation of a
   * run has a fresh URL, so only slowness. A standalone one: any code; an SVG submitted by
   * mistake has its own URL.
   */
  private fail(
    plan: Plan,
    about: 'run' | 'run-again' | 'standalone',
    picture: StandalonePicture | null,
  ): void {
    const failure = this.failureFor(about, picture)
    plan.failure = { code: failure.code, message: failure.message }
    if (failure.url) plan.url = failure.url
  }

  private failureFor(
    about: 'run' | 'run-again' | 'standalone',
    picture: StandalonePicture | null,
  ): { code: FailureCode; message: string; url?: string } {
    const turn = this.failureTurn++
    const timedOut = {
      code: 'timed_out' as const,
      message: `The image URL did not deliver the image within ${String(this.timeoutMs / 1000)} s.`,
    }
    const httpError = (status: number) => ({
      code: 'dispatch_failed' as const,
      message: `The image URL answered HTTP ${String(status)}; check that it is public and has not expired.`,
    })
    if (about === 'run-again') return timedOut
    if (about === 'run') return turn % 4 === 3 ? timedOut : httpError(403)
    const code = STANDALONE_FAILURES[turn % STANDALONE_FAILURES.length] ?? 'dispatch_failed'
    switch (code) {
      case 'timed_out':
        return timedOut
      case 'processing_failed':
        return {
          code,
          message:
            'The evaluator hit an unexpected problem (the worker restarted mid-evaluation); submit the image again.',
        }
      case 'invalid_media': {
        const [vector, truncated] = this.sources.unreadable
        if (turn % 2 === 0 && vector && picture) {
          return { code, message: vector, url: this.standaloneUrl(picture, 'svg') }
        }
        return { code, message: truncated ?? vector ?? 'The image could not be decoded.' }
      }
      default:
        return turn % 3 === 0
          ? {
              code,
              message:
                'The image URL could not be fetched (ENOTFOUND); check that the address is right and reachable.',
            }
          : httpError(404)
    }
  }

  /** The judges' verdict for this image in this context: built once, shared by the rows. */
  private templateOf(plan: Plan): VerdictTemplate {
    const { picture, jobClass, reference } = plan
    const key = [picture.key, jobClass, plan.instructions, plan.request, reference?.key].join('|')
    const known = this.templates.get(key)
    if (known) return known
    const texts = [picture.prompt, INSTRUCTIONS[plan.instructions]].filter(
      (text): text is string => typeof text === 'string' && text.trim() !== '',
    )
    const shape = picture.shape
    const context: JudgeContext = {
      jobClass,
      texts,
      cues: cuesOf(...texts),
      requested: shape
        ? { width: dimension(shape.width), height: dimension(shape.height), aspectRatio: null }
        : (REQUESTS[plan.request] ?? NO_REQUEST).requested(picture.facts),
      // Quick evaluations do not compare with references.
      references:
        reference && jobClass === 'standard'
          ? [{ label: 'Reference image 1', facts: reference.facts }]
          : [],
    }
    const template = verdictTemplate(runJudges(picture.facts, context), picture.facts, jobClass)
    this.templates.set(key, template)
    return template
  }

  /** The run's output URL as a run read hands it out at `mintedMs`: presigned, for an hour. */
  private outputUrl(run: SeededRun, picture: Picture, mintedMs: number): string {
    const { blobs, config } = this.services
    return blobs.presign(
      config.baseUrl,
      `/_storage/blobs/${run.output_sha256 ?? ''}?ct=${encodeURIComponent(picture.contentType)}`,
      mintedMs + OUTPUT_URL_TTL_MS,
    )
  }

  private standaloneUrl(picture: StandalonePicture, extension = 'png'): string {
    const { host, folder, stem } = picture.base
    return `https://${host}/${folder}/${stem}-${String(++this.fileNumber).padStart(4, '0')}.${extension}`
  }
}

const approvedUrl = ({ base }: StandalonePicture): string =>
  `https://${base.host}/${base.folder}/${base.stem}-approved.png`

/**
 * The stored document of a planned evaluation: what submitEvaluation stores, then what the
 * engine makes of it (verdict or failure), then a rating and a superseding, if any. The verdict's
 * JSON comes from its template with this row's ids.
 */
function documentOf(plan: Plan, orgId: string, uuids: Uuids): string {
  const completed = isoTime(plan.completedMs)
  const { run, failure, template, reference } = plan
  const links: Record<string, string> = linksOf(plan.id, {
    runId: run?.id ?? null,
    parentId: plan.parent?.id ?? null,
  })
  if (plan.child) links.superseded_by = `/v1/evaluations/${plan.child.id}`
  const verdict = (field: keyof VerdictFields) => `@@verdict:${field}@@`
  const record: Record<Exclude<keyof Evaluation, Embedded>, unknown> = {
    id: plan.id,
    org_id: orgId,
    run_id: run?.id ?? null,
    model_id: run?.model_id ?? null,
    flow_id: null,
    wfengine_workflow_id: null,
    parent_evaluation_id: plan.parent?.id ?? null,
    target_type_code: run ? 'model' : null,
    task_type: plan.taskType,
    task_description: plan.taskDescription,
    generation_prompt: plan.picture.prompt,
    generated_image_url: plan.url,
    evaluation_instructions: INSTRUCTIONS[plan.instructions] ?? null,
    override_reason: null,
    primary_action_code: template ? verdict('primary_action_code') : ACTIONS.resubmit.code,
    feedback_reason: plan.feedback?.reason ?? null,
    client_ref: plan.clientRef,
    callback_url: plan.callbackUrl,
    status_code: failure ? 'failed' : 'completed',
    source_code: 'api',
    failure_code: failure?.code ?? null,
    job_class_code: plan.jobClass,
    input_attributes:
      plan.picture.shape ?? (REQUESTS[plan.request] ?? NO_REQUEST).attributes(plan.picture.facts),
    check_summary: failure
      ? { failure_code: failure.code, failure_message: failure.message }
      : verdict('check_summary'),
    links,
    reference_images: reference
      ? [{ url: approvedUrl(reference), description: 'The approved render' }]
      : null,
    overall_passed: template ? verdict('overall_passed') : null,
    feedback_is_positive: plan.feedback?.positive ?? null,
    weighted_pass_rate: template ? verdict('weighted_pass_rate') : null,
    top_issues: failure ? [failure.message] : verdict('top_issues'),
    top_strengths: failure ? [] : verdict('top_strengths'),
    analysis_modules_executed: template ? verdict('analysis_modules_executed') : null,
    attempt_number: plan.attempt,
    eval_duration_ms: plan.completedMs - plan.submittedMs,
    superseded_at: plan.child ? isoTime(plan.child.createdMs) : null,
    created_at: isoTime(plan.createdMs),
    updated_at: isoTime(updatedMsOf(plan)),
    submitted_at: isoTime(plan.submittedMs),
    completed_at: completed,
    cost: microToDecimal(failure ? 0 : PRICE_MICRO[plan.jobClass]),
    judges: template ? verdict('judges') : null,
    gate_failures: template ? verdict('gate_failures') : null,
    action: failure ? { ...ACTIONS.resubmit } : verdict('action'),
  }
  const doc = JSON.stringify(record)
  if (!template) return doc
  // Judges and issues are made at completion, so their ids carry the completion time.
  const ids = Array.from({ length: template.ids }, () => uuids.at(plan.completedMs))
  return doc.replace(/"@@verdict:(\w+)@@"/g, (_, field: string) =>
    fillHoles(template.fields[field as keyof VerdictFields], plan.id, completed, ids),
  )
}

/** The last change: completion, a rating, or being superseded by a re-evaluation. */
const updatedMsOf = (plan: Plan): number =>
  Math.max(plan.completedMs, plan.feedback?.atMs ?? 0, plan.child?.createdMs ?? 0)

/**
 * Fills an organization with `count` finished evaluations over the last 90 days: most about the
 * image outputs of `runs` (run_id, model_id, the run's prompt and requested size), the rest
 * standalone images submitted by URL; most completed with the judges' verdict, some failed with
 * each failure code, some rated (thumbs up or down, often with a reason) and some re-evaluated
 * (attempt 2 or 3, the parent superseded). Every image is measured once and its verdict built
 * once per context by the evaluator's own judges; the rows share that JSON with fresh ids, which
 * keeps 25,000 evaluations to a few seconds. Nothing is charged: this is history.
 */
export async function seedEvaluations(
  services: SandboxServices,
  orgId: string,
  count: number,
  runs: readonly SeededRun[] = [],
): Promise<EvaluationsSummary> {
  const summary = { evaluations: 0, about_runs: 0, failed: 0, re_evaluations: 0, rated: 0 }
  if (count <= 0) return summary
  const sources: Sources = {
    byOutput: await runPictures(services, orgId, runs),
    standalone: await standalonePictures(),
    unreadable: await unreadableMessages(),
  }
  const uuids = new Uuids()
  const plans = new HistoryPlanner(services, sources, uuids).plan(count, runs)

  const insert = services.db.prepare(
    `INSERT INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )
  const batch = services.db.transaction((from: number, to: number) => {
    for (const plan of plans.slice(from, to)) {
      const parentId = plan.parent?.id ?? null
      const doc = documentOf(plan, orgId, uuids)
      const created = isoTime(plan.createdMs)
      insert.run(COLLECTION, plan.id, orgId, parentId, created, isoTime(updatedMsOf(plan)), doc)
      summary.evaluations++
      if (plan.run) summary.about_runs++
      if (plan.failure) summary.failed++
      if (plan.parent) summary.re_evaluations++
      if (plan.feedback) summary.rated++
    }
  })
  for (let from = 0; from < plans.length; from += BATCH) batch(from, from + BATCH)
  return summary
}

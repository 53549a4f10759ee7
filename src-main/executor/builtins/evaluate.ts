import { setTimeout as sleep } from 'node:timers/promises'
import type { Evaluation, EvaluationCreate, FlowNode } from '../../../src-shared/api'
import { isServiceError, type ServiceClient } from '../../service'
import type { MediaRef, PortValue } from '../types'
import { requireService, type BuiltinRun, type BuiltinStep, type EvaluationPrices } from './context'
import { abortedError, BuiltinError, throwIfAborted } from './errors'
import { imageSizeOf, localFileOf, mediaInput } from './media'
import {
  configChoice,
  configInteger,
  configNumber,
  configUuid,
  describeNode,
  isUuid,
} from './ports'
import { uploadAsset } from './upload'

/**
 * `evaluate`: has the service judge `image` (POST /v1/evaluations), waits for the verdict and
 * outputs it. Decisions:
 * - What is judged: a reference with an http(s) URL (a model run's output) goes as
 *   `generated_image_url`; anything only this machine can read (a file, a cropped or resized
 *   image) is first put among the assets (deduplicated by sha256, into `config.folder_id` or the
 *   root) and goes as `asset_id`: a data: URL would do, but would then sit in every copy of the
 *   evaluation record.
 * - `prompt` goes as `generation_prompt`, `instructions` as `evaluation_instructions`; a `run_id`
 *   input, when given, links the evaluation to the model run that made the image (the service then
 *   also judges it against what that run asked for). `config.job_class_code` picks `standard`
 *   (default) or `quick`.
 * - The gate: `passed` is `score >= min_score` when the `min_score` input has a value (as the
 *   service's own built-in decides; the service's default for it is 0.5), else
 *   `score >= config.pass_threshold` when set, else the service's own `overall_passed`. The other
 *   outputs: `score` (the weighted pass rate, 0 to 1), `issues` (the top issues, one per line),
 *   and, beyond the contract's ports, `evaluation_id`, `verdict` (the service's overall_passed)
 *   and `attempt` (the evaluation's attempt number).
 * - Retries: this node never loops. It reports `passed: false`; the scheduler follows
 *   `retry_source_output_id` and runs it again with `attempt` + 1, up to `config.max_attempts`
 *   (`gateOf`). Attempt n > 1 is a re-evaluation of attempt n − 1: its `parent_evaluation_id` is
 *   the `parent_evaluation_id` input when the scheduler gives one (the previous outcome's
 *   `evaluation_id`), else the previous attempt's evaluation found by its `client_ref`.
 * - Never paid twice: every evaluation carries `client_ref` `atelier:<flow run>:<node>:<attempt>`
 *   (the contract takes no Idempotency-Key here). Before submitting, the node looks that
 *   client_ref up and follows an evaluation it finds instead (a resumed flow run, a request
 *   whose answer was lost); a failed one is not reused (the service refunded it).
 * - Cancelling stops the waiting; the contract has no way to cancel an evaluation, so one already
 *   submitted still completes (and is found again by its client_ref if the node runs again).
 * - Cost: the evaluation's own `cost` once it has a verdict (a failed one is refunded: 0).
 */

export const DEFAULT_MAX_ATTEMPTS = 3
const ATTEMPTS = { min: 1, max: 20 }
const SCORE = { min: 0, max: 1 }
export const JOB_CLASSES = ['standard', 'quick'] as const
export type JobClass = (typeof JOB_CLASSES)[number]

/**
 * What the service charges for an evaluation, in micro-credits. The contract publishes no price
 * for evaluations (no pricing endpoint covers them, and an evaluation's `cost` is known only once
 * it is submitted); these are the sandbox's figures (0.0100 and 0.0040 credits), used for the
 * estimate until the service says otherwise. The actual cost is read from each evaluation.
 */
export const EVALUATION_PRICE_MICRO: EvaluationPrices = { standard: 10_000, quick: 4_000 }

export interface Gate {
  /** How many times the node may run in one flow run (1 = no retry). */
  maxAttempts: number
  jobClass: JobClass
  /** `config.pass_threshold`: the score the gate needs when `min_score` has no value. */
  passThreshold: number | null
}

/** The gate settings of an evaluate node's config, checked (CONFIG_INVALID). */
export function gateOf(node: FlowNode): Gate {
  return {
    maxAttempts: configInteger(node, 'max_attempts', ATTEMPTS, DEFAULT_MAX_ATTEMPTS),
    jobClass: configChoice(node, 'job_class_code', JOB_CLASSES, 'standard'),
    passThreshold: configNumber(node, 'pass_threshold', SCORE),
  }
}

export function clientRefOf(flowRunId: string, nodeId: string, attempt: number): string {
  return `atelier:${flowRunId}:${nodeId}:${attempt}`
}

/** Credits as the service writes them (`"0.0100"`) in micro-credits; 0 when unknown. */
export function microOf(cost: string | null): number {
  if (cost === null || cost.trim() === '') return 0
  const value = Number(cost)
  return Number.isFinite(value) ? Math.round(value * 1_000_000) : 0
}

const isTerminal = (evaluation: Evaluation) =>
  evaluation.status_code === 'completed' || evaluation.status_code === 'failed'

/** The newest evaluation with this client_ref that did not fail, if any. */
async function findByClientRef(
  service: ServiceClient,
  clientRef: string,
  signal: AbortSignal,
): Promise<Evaluation | null> {
  const page = await service.get('/v1/evaluations', {
    params: {
      query: {
        q: `client_ref="${clientRef}" and status_code!=failed`,
        sort_by: 'created_at:desc',
        limit: 1,
      },
    },
    signal,
  })
  return page.items[0] ?? null
}

function uuidInput(run: BuiltinRun, name: string): string | undefined {
  const value: PortValue = run.ports.raw(name)
  if (value === undefined || value === null || value === '') return undefined
  if (!isUuid(value)) throw run.ports.invalid(name, 'an id (a UUID)')
  return value.toLowerCase()
}

async function targetOf(
  run: BuiltinRun,
  service: ServiceClient,
  ref: MediaRef,
): Promise<Pick<EvaluationCreate, 'generated_image_url' | 'asset_id'>> {
  if (/^https?:\/\//i.test(ref.url)) return { generated_image_url: ref.url }
  // Checked here, not by the service: an evaluation of no image is refunded, but an asset of it
  // would stay.
  const file = await localFileOf(run, 'image', ref)
  await imageSizeOf(run, 'image', ref, file.path)
  const saved = await uploadAsset(run, service, {
    file: () => Promise.resolve(file),
    ref,
    filename: `${run.node.slug ?? 'evaluate'}-${ref.sha256.slice(0, 12)}.${ref.content_type.split('/')[1] ?? 'png'}`,
    folderId: configUuid(run.node, 'folder_id'),
  })
  return { asset_id: saved.assetId }
}

async function submit(
  run: BuiltinRun,
  service: ServiceClient,
  body: EvaluationCreate,
  clientRef: string,
): Promise<Evaluation> {
  try {
    return await service.post('/v1/evaluations', { body, signal: run.signal })
  } catch (error) {
    // The service may have taken (and charged) it: look before sending it again.
    if (!isServiceError(error) || !error.outcomeUnknown || run.signal.aborted) throw error
    const found = await findByClientRef(service, clientRef, run.signal)
    return found ?? (await service.post('/v1/evaluations', { body, signal: run.signal }))
  }
}

async function awaitVerdict(
  run: BuiltinRun,
  service: ServiceClient,
  first: Evaluation,
): Promise<Evaluation> {
  const { polling } = run.deps
  const deadline = Date.now() + polling.timeoutMs
  let wait = polling.initialMs
  let current = first
  let told: string | null = null
  while (!isTerminal(current)) {
    if (current.status_code !== told) {
      told = current.status_code
      run.emit({
        type: 'progress',
        fraction: current.status_code === 'running' ? 0.5 : 0.1,
        message: current.status_code === 'running' ? 'Being judged' : 'Waiting for a judge',
      })
    }
    if (Date.now() + wait > deadline) {
      throw new BuiltinError(
        'EVALUATION_TIMEOUT',
        `Evaluation ${String(current.id)} of node ${describeNode(run.node)} gave no verdict within ${Math.round(polling.timeoutMs / 1000)} s; it may still finish: run the node again later to pick its verdict up.`,
      )
    }
    try {
      await sleep(wait, undefined, { signal: run.signal })
    } catch {
      throw abortedError(run.signal)
    }
    wait = Math.min(polling.maxMs, wait * polling.factor)
    current = await service.get('/v1/evaluations/{evaluation_id}', {
      params: { path: { evaluation_id: current.id ?? '' } },
      signal: run.signal,
    })
  }
  return current
}

function failureOf(run: BuiltinRun, evaluation: Evaluation): BuiltinError {
  const said = evaluation.check_summary?.failure_message
  const why =
    typeof said === 'string' ? said : (evaluation.top_issues?.[0] ?? 'the service gave no reason')
  return new BuiltinError(
    'EVALUATION_FAILED',
    `The service could not judge the image of node ${describeNode(run.node)} (${evaluation.failure_code ?? 'failed'}): ${why} Nothing was charged; check the image and run the node again.`,
  )
}

export const runEvaluate: BuiltinStep = async (run) => {
  const service = requireService(run, 'has the image judged')
  const gate = gateOf(run.node)
  if (run.attempt > gate.maxAttempts) {
    throw new BuiltinError(
      'GATE_ATTEMPTS_EXHAUSTED',
      `Node ${describeNode(run.node)} allows ${gate.maxAttempts} attempt(s) and this would be attempt ${run.attempt}; raise max_attempts to try more.`,
    )
  }
  const prompt = run.ports.text('prompt')
  const instructions = run.ports.text('instructions')
  const minScore = run.ports.number('min_score', { range: SCORE })
  const runId = uuidInput(run, 'run_id')
  const givenParent = uuidInput(run, 'parent_evaluation_id')
  const image = await mediaInput(run, 'image', 'image', { required: true })
  if (!image) throw run.ports.missing('image', 'connect the image to judge')

  const clientRef = clientRefOf(run.flowRunId, run.node.id, run.attempt)
  let evaluation = await findByClientRef(service, clientRef, run.signal)
  if (evaluation) {
    run.emit({
      type: 'log',
      level: 'info',
      message: `Following evaluation ${String(evaluation.id)}, submitted for this attempt before.`,
    })
  } else {
    const parent =
      givenParent ??
      (run.attempt > 1
        ? (
            await findByClientRef(
              service,
              clientRefOf(run.flowRunId, run.node.id, run.attempt - 1),
              run.signal,
            )
          )?.id
        : null) ??
      undefined
    const body: EvaluationCreate = {
      ...(await targetOf(run, service, image)),
      client_ref: clientRef,
      job_class_code: gate.jobClass,
      ...(prompt !== undefined && prompt.trim() !== '' ? { generation_prompt: prompt } : {}),
      ...(instructions !== undefined && instructions.trim() !== ''
        ? { evaluation_instructions: instructions }
        : {}),
      ...(runId ? { run_id: runId } : {}),
      ...(parent ? { parent_evaluation_id: parent } : {}),
    } as EvaluationCreate
    throwIfAborted(run.signal)
    evaluation = await submit(run, service, body, clientRef)
    run.emit({
      type: 'log',
      level: 'info',
      message: `Submitted evaluation ${String(evaluation.id)}${parent ? ` (a re-evaluation of ${parent})` : ''}.`,
    })
  }

  const final = await awaitVerdict(run, service, evaluation)
  if (final.status_code === 'failed') throw failureOf(run, final)
  const costMicro = microOf(final.cost)
  run.emit({ type: 'cost', costMicro })
  const score = final.weighted_pass_rate ?? 0
  const verdict = final.overall_passed === true
  const threshold = minScore ?? gate.passThreshold
  const passed = threshold === null ? verdict : score >= threshold
  run.emit({
    type: 'log',
    level: passed ? 'info' : 'warning',
    message: `Score ${score}${threshold === null ? '' : ` ${passed ? 'reaches' : 'is below'} ${threshold}`}; the service's verdict: ${verdict ? 'passed' : 'failed'}; the gate ${passed ? 'passes' : `fails (attempt ${run.attempt} of ${gate.maxAttempts})`}.`,
  })
  run.emit({ type: 'progress', fraction: 1 })
  return {
    outputs: {
      passed,
      score,
      issues: (final.top_issues ?? []).join('\n'),
      evaluation_id: final.id,
      verdict,
      attempt: final.attempt_number ?? run.attempt,
    },
    costMicro,
  }
}

/** What one attempt of an evaluate node is expected to cost. */
export function estimateEvaluation(node: FlowNode, prices: EvaluationPrices): number {
  const value = node.config.job_class_code
  return value === 'quick' ? prices.quick : prices.standard
}

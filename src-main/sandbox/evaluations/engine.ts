import { setTimeout as sleep } from 'node:timers/promises'
import type { Evaluation } from '../../../src-shared/api'
import { decimalToMicro, microToDecimal } from '../models'
import type { SandboxServices } from '../services'
import type { BaseRecord } from '../store'
import { analyseImage, type ImageFacts } from './analyse'
import { cuesOf } from './cues'
import { EvaluationFailure, Halted } from './failure'
import { runJudges, type JudgeContext } from './judges'
import {
  COLLECTION,
  imageRefOf,
  isTerminal,
  jobClassOf,
  referenceRefOf,
  type JobClass,
} from './record'
import { loadImage, type LoadLimits } from './source'
import { ACTIONS, buildVerdict } from './verdict'

export interface EvaluationsOptions {
  /**
   * How long the evaluator waits for an image URL. By default 50 × the sandbox's nominal latency
   * (15 s at the default 300 ms), at least 1 s: a fast sandbox gives up on slow hosts sooner.
   */
  fetchTimeoutMs?: number
  /** The largest image (or reference image) accepted, in bytes; 32 MiB by default. */
  maxImageBytes?: number
}

type Stored = Evaluation & BaseRecord

/** Queue time (pending) and judging time (running), in units of the nominal latency. */
const QUEUE_FACTOR = 0.5
const WORK_FACTOR: Record<JobClass, number> = { standard: 4, quick: 1.5 }

function positive(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null
}

/** `16:9`, `16/9`, `1.78` or 1.78 → 1.78. */
function aspectRatioOf(value: unknown): number | null {
  if (typeof value === 'number') return positive(value)
  if (typeof value !== 'string') return null
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:[:/x]\s*(\d+(?:\.\d+)?))?\s*$/.exec(value)
  if (!match) return null
  const ratio = Number(match[1]) / Number(match[2] ?? 1)
  return positive(ratio)
}

function contextOf(evaluation: Evaluation, references: JudgeContext['references']): JudgeContext {
  const texts = [evaluation.generation_prompt, evaluation.evaluation_instructions].filter(
    (text): text is string => typeof text === 'string' && text.trim() !== '',
  )
  const attributes = evaluation.input_attributes ?? {}
  return {
    jobClass: jobClassOf(evaluation),
    texts,
    cues: cuesOf(...texts),
    requested: {
      width: positive(attributes.width),
      height: positive(attributes.height),
      aspectRatio: aspectRatioOf(attributes.aspect_ratio),
    },
    references,
  }
}

/**
 * The life cycle of evaluations: pending for a queue time, running while the image is fetched,
 * measured and judged, then completed with a verdict, or failed with a failure code (and the
 * credits refunded: a verdict is what is paid for). `submitted_at` is when the judges took the
 * image (pending → running). All waiting is on timers that `stop()` cancels; after `stop()`
 * nothing is written.
 */
export class EvaluationEngine {
  private readonly halt = new AbortController()
  private readonly inFlight = new Set<Promise<void>>()

  constructor(
    private readonly services: SandboxServices,
    private readonly options: EvaluationsOptions = {},
  ) {}

  start(orgId: string, id: string): void {
    if (this.halt.signal.aborted) return
    const work: Promise<void> = this.evaluate(orgId, id)
      .catch((error: unknown) => {
        console.error(`sandbox: evaluation ${id} could not be recorded`, error)
      })
      .finally(() => {
        this.inFlight.delete(work)
      })
    this.inFlight.add(work)
  }

  /**
   * A persisted sandbox may stop with evaluations under way. They start over (back through the
   * queue, the image fetched again): judging is deterministic, so the verdict is the one the
   * interrupted attempt would have given. A URL that has since died fails the evaluation with
   * dispatch_failed, as it would for a new submission.
   */
  resumeLeftovers(): number {
    const rows = this.services.db
      .prepare(
        `SELECT org_id, id FROM records WHERE collection = ? AND deleted_at IS NULL
           AND json_extract(doc, '$.status_code') IN ('pending', 'running')
         ORDER BY created_at, id`,
      )
      .all(COLLECTION) as { org_id: string; id: string }[]
    for (const row of rows) this.start(row.org_id, row.id)
    return rows.length
  }

  async stop(): Promise<void> {
    this.halt.abort()
    await Promise.allSettled([...this.inFlight])
  }

  private limits(): LoadLimits {
    const latency = this.services.config.latencyMs
    return {
      timeoutMs:
        this.options.fetchTimeoutMs ?? Math.min(30_000, Math.max(1_000, Math.round(latency * 50))),
      maxBytes: this.options.maxImageBytes ?? 32 * 1024 * 1024,
      halt: this.halt.signal,
    }
  }

  private async wait(ms: number): Promise<void> {
    if (ms <= 0) return
    try {
      await sleep(ms, undefined, { signal: this.halt.signal, ref: false })
    } catch {
      throw new Halted()
    }
  }

  /** Every write goes through here: once the sandbox stops, none happens. */
  private write<T>(change: () => T): T {
    if (this.halt.signal.aborted) throw new Halted()
    return change()
  }

  private update(orgId: string, id: string, change: (current: Stored) => Stored): Stored {
    return this.write(() =>
      this.services.store.update<Stored>(COLLECTION, id, orgId, change, 'The evaluation'),
    )
  }

  private async evaluate(orgId: string, id: string): Promise<void> {
    const { store, clock, config } = this.services
    let startedMs: number | null = null
    try {
      await this.wait(config.latencyMs * QUEUE_FACTOR)
      const pending = this.write(() => store.get<Stored>(COLLECTION, id, orgId))
      if (!pending || isTerminal(pending)) return
      const running = this.update(orgId, id, (current) => ({
        ...current,
        status_code: 'running',
        submitted_at: store.now(),
      }))
      startedMs = clock()
      const { facts, context } = await this.measure(orgId, running)
      const outcomes = runJudges(facts, context)
      await this.wait(config.latencyMs * WORK_FACTOR[context.jobClass] - (clock() - startedMs))
      const started = startedMs
      this.update(orgId, id, (current) => {
        const now = store.now()
        const verdict = buildVerdict(outcomes, facts, context.jobClass, {
          evaluationId: id,
          newId: () => store.newId(),
          now,
        })
        return {
          ...current,
          ...verdict,
          status_code: 'completed',
          failure_code: null,
          completed_at: now,
          eval_duration_ms: Math.max(0, clock() - started),
        }
      })
    } catch (error) {
      if (error instanceof Halted || this.halt.signal.aborted) return
      const failure =
        error instanceof EvaluationFailure
          ? error
          : new EvaluationFailure(
              'processing_failed',
              `The evaluator hit an unexpected problem (${error instanceof Error ? error.message : String(error)}); submit the image again.`,
            )
      this.fail(orgId, id, failure, startedMs)
    }
  }

  /** Fetches and measures the image (and, for standard evaluations, the reference images). */
  private async measure(
    orgId: string,
    evaluation: Evaluation,
  ): Promise<{ facts: ImageFacts; context: JudgeContext }> {
    const ref = imageRefOf(evaluation)
    if (!ref) {
      throw new EvaluationFailure(
        'processing_failed',
        'The evaluation names no image (neither generated_image_url nor an asset); submit it again.',
      )
    }
    const limits = this.limits()
    const facts = await analyseImage(
      await loadImage(this.services, orgId, ref, 'The image', limits),
    )
    const references: JudgeContext['references'] = []
    // Quick evaluations do not compare with references, so they do not fetch them either.
    if (jobClassOf(evaluation) === 'standard') {
      for (const [index, reference] of (evaluation.reference_images ?? []).entries()) {
        const referenceRef = referenceRefOf(reference)
        if (!referenceRef) continue
        const label = `Reference image ${String(index + 1)}`
        const bytes = await loadImage(this.services, orgId, referenceRef, label, limits)
        references.push({ label, facts: await analyseImage(bytes, label) })
      }
    }
    return { facts, context: contextOf(evaluation, references) }
  }

  private fail(
    orgId: string,
    id: string,
    failure: EvaluationFailure,
    startedMs: number | null,
  ): void {
    const { store, accounts, clock } = this.services
    try {
      this.write(() => {
        store.transaction(() => {
          const current = store.get<Stored>(COLLECTION, id, orgId)
          if (!current || isTerminal(current)) return
          const charged = current.cost ? decimalToMicro(current.cost) : 0
          if (charged > 0) accounts.refund(orgId, charged)
          this.update(orgId, id, (evaluation) => ({
            ...evaluation,
            status_code: 'failed',
            failure_code: failure.code,
            completed_at: store.now(),
            eval_duration_ms: startedMs === null ? null : Math.max(0, clock() - startedMs),
            cost: microToDecimal(0),
            top_issues: [failure.message],
            top_strengths: [],
            check_summary: { failure_code: failure.code, failure_message: failure.message },
            primary_action_code: ACTIONS.resubmit.code,
            action: { ...ACTIONS.resubmit },
          }))
        })
      })
    } catch (error) {
      if (!(error instanceof Halted)) throw error
    }
  }
}

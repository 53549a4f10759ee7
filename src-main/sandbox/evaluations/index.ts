// Evaluations: submit an image (by URL or asset), watch it go pending → running → completed |
// failed, read the verdict of deterministic judges computed from the real pixels, rate it.
//
// Choices the spec and the contract leave open, made here:
// - Price: a standard evaluation costs 0.0100 credits, a quick one 0.0040 (fewer judges, less
//   waiting). Charged at submission (402 INSUFFICIENT_CREDIT when the balance is short) and
//   refunded, with `cost` set to 0, when the evaluation fails: a verdict is what is paid for.
// - Failures: invalid_media (not a readable raster image, or too large), dispatch_failed (the URL
//   cannot be fetched or answers an error; the asset was deleted), timed_out (the URL did not
//   deliver in time), processing_failed (the evaluator's own trouble, e.g. an asset whose bytes
//   are gone). There is no failure message field, so the message is in
//   `check_summary.failure_message` and `top_issues`.
// - Re-evaluation: the parent must belong to the organization (404), be finished and not yet
//   superseded (422); the new one is attempt parent + 1, keeps the parent's context for fields it
//   leaves out, and the parent gets `superseded_at` and `links.superseded_by`.
// - Feedback: only a completed evaluation can be rated; pending, running or failed answer 409.
// - callback_url is stored, never called: the spec does not show evaluation events.
// - A persisted sandbox resumes evaluations left pending or running (see EvaluationEngine).
import type { SandboxArea } from '../handlers/types'
import type { SandboxServices } from '../services'
import { EvaluationEngine, type EvaluationsOptions } from './engine'
import { evaluationHandlers, type RunPresenter } from './handlers'

export { analyseImage } from './analyse'
export { cuesOf } from './cues'
export { runJudges, type JudgeContext } from './judges'
export { PRICE_MICRO as EVALUATION_PRICE_MICRO } from './record'
export { seedEvaluations, type SeededRun } from './history'
export type { EvaluationsOptions } from './engine'
export type { RunPresenter } from './handlers'

export function createEvaluationsArea(
  services: SandboxServices,
  presentRun: RunPresenter,
  options: EvaluationsOptions = {},
): SandboxArea {
  const engine = new EvaluationEngine(services, options)
  engine.resumeLeftovers()
  return {
    handlers: evaluationHandlers(engine, presentRun),
    stop: () => engine.stop(),
  }
}

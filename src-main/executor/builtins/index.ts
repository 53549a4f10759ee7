/**
 * The built-in nodes, run on this machine (`type_code: builtin`): `BuiltinRunner` implements
 * `NodeRunner` for text, number, image, prompt_template, image_resize, image_crop,
 * pick_from_list, compare, branch, evaluate and save_to_assets, with the ports and semantics of
 * the service's GET /v1/builtin-nodes, so a flow does the same here as in a service flow run.
 *
 * Decisions the modules share:
 * - Inputs are checked again at run time (what came through an edge escaped the checks before
 *   dispatch): INPUT_MISSING / INPUT_INVALID name the node and the input; each built-in adds its
 *   own codes (TEMPLATE_PLACEHOLDER_MISSING, LIST_EMPTY, CROP_OUT_OF_BOUNDS, …; see
 *   `BuiltinErrorCode`).
 * - Images are `MediaRef`s named by sha256; what a node makes goes into the media store and out
 *   as a ref to the stored file (`media.ts`).
 * - Local nodes cost 0 and `estimate` says so; evaluate costs what the evaluation costs
 *   (`EVALUATION_PRICE_MICRO` for the estimate: the contract publishes no price for it).
 * - The quality gate: evaluate reports `passed`; the scheduler re-runs through
 *   `retry_source_output_id` up to `gateOf(node).maxAttempts`, and may pass the previous
 *   attempt's `evaluation_id` output as the `parent_evaluation_id` input (the node otherwise finds
 *   it by its client_ref). See `evaluate.ts`.
 * - Paid or stored work is never repeated: evaluations are found again by client_ref, uploads
 *   by sha256 (the contract takes no Idempotency-Key for either).
 * - Cancel: the flow run's signal stops waiting, fetching and uploading at once (ABORTED).
 */
export { BUILTIN_CODES, BuiltinRunner, type BuiltinRunnerOptions } from './runner'
export { BuiltinError, isBuiltinError, type BuiltinErrorCode } from './errors'
export type { EvaluationPolling, EvaluationPrices } from './context'
export {
  clientRefOf,
  DEFAULT_MAX_ATTEMPTS,
  EVALUATION_PRICE_MICRO,
  gateOf,
  JOB_CLASSES,
  type Gate,
  type JobClass,
} from './evaluate'
export { isMediaRef } from './media'
export { fillTemplate, placeholdersOf } from './prompt-template'
export { linesOf, seededIndex } from './pick-from-list'
export { compareNumbers, OPERATORS, type Operator } from './compare'

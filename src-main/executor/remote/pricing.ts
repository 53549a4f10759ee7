import type { ModelPricing } from '../../../src-shared/api'
import { decimalMicro } from '../../db'
import type { ModelInfo } from './models'

/**
 * Twin of `src-main/sandbox/models/pricing.ts` (the service's side, as the sandbox plays it): kept
 * apart on purpose, since one shared rule would hide its own bugs from every test; checked as one
 * by `test/unit/twins/pricing.test.ts`, which runs the catalog's models through both and lists
 * where they differ and why. Change one side, run that table.
 */

const MICRO = 1_000_000

/** What a run is expected to measure, predicted from its input before it runs. */
interface Metrics {
  megapixels?: number
  seconds?: number
}

const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined

/** The input as the model will take it: the model's `default_value` for what is left out. */
function withDefaults(model: ModelInfo, given: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = { ...given }
  for (const def of model.inputs) {
    if ((input[def.name] === undefined || input[def.name] === null) && def.default_value != null) {
      input[def.name] = def.default_value
    }
  }
  return input
}

/**
 * Output megapixels from `width` × `height` (× `num_images`, one frame's worth for a video, which
 * has `fps`); output seconds from `duration_seconds`. Nothing is predicted for what depends on
 * an input image (an upscale's size): rules on those dimensions count 0, as the service's own
 * estimate does.
 */
function predict(input: Record<string, unknown>): Metrics {
  const metrics: Metrics = {}
  const width = num(input.width)
  const height = num(input.height)
  const fps = num(input.fps)
  if (width !== undefined && height !== undefined) {
    const images = fps === undefined ? Math.max(1, Math.round(num(input.num_images) ?? 1)) : 1
    metrics.megapixels = (width * height * images) / 1e6
  }
  const seconds = num(input.duration_seconds)
  if (seconds !== undefined) metrics.seconds = seconds
  return metrics
}

function quantity(rule: ModelPricing, metrics: Metrics): number {
  switch (rule.dimension_code) {
    case 'output_megapixels':
      return metrics.megapixels ?? 0
    case 'output_seconds':
      return metrics.seconds ?? 0
    default:
      // `run`, none, or a dimension this version does not know: once per run.
      return 1
  }
}

function applies(
  rule: ModelPricing,
  model: ModelInfo,
  input: Record<string, unknown>,
  amount: number,
): boolean {
  if (rule.disabled_at !== null) return false
  if (rule.model_input_id !== null) {
    const def = model.inputs.find((candidate) => candidate.id === rule.model_input_id)
    const value = def === undefined ? undefined : input[def.name]
    if (value === undefined || value === null) return false
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    if (rule.match_value !== null && text !== rule.match_value) return false
  }
  const min = decimalMicro(rule.min_value)
  const max = decimalMicro(rule.max_value)
  if (min !== null && amount * MICRO < min) return false
  if (max !== null && amount * MICRO > max) return false
  return true
}

/**
 * Micro-credits one run of `model` on `given` is expected to cost. The rule forms understood:
 *
 * - rules apply in `sort_order`; a rule with `disabled_at` set is skipped;
 * - `rule_effect_code` `add` (or none): adds price × quantity, the quantity being 1 for the
 *   `run` dimension (and any dimension not known here), the predicted output megapixels for
 *   `output_megapixels`, the predicted output seconds for `output_seconds`;
 * - `multiply`: multiplies the cost so far by price (a 2.5× surcharge is price `2.5`);
 * - `minimum`: raises the cost so far to at least price;
 * - `model_input_id` ties a rule to an input: it applies only when that input (or its default)
 *   is set and, with `match_value`, equals it (as text; JSON for non-strings);
 * - `min_value`/`max_value` bound the quantity a rule applies to.
 *
 * Prices are credits (`currency_code` is not converted). The result is rounded to a whole
 * micro-credit once, at the end.
 */
export function estimateRunMicro(model: ModelInfo, given: Record<string, unknown>): number {
  const input = withDefaults(model, given)
  const metrics = predict(input)
  const rules = [...model.pricing].sort((a, b) => a.sort_order - b.sort_order)
  let total = 0
  for (const rule of rules) {
    const amount = quantity(rule, metrics)
    if (!applies(rule, model, input, amount)) continue
    const price = decimalMicro(rule.price) ?? 0
    if (rule.rule_effect_code === 'multiply') total *= price / MICRO
    else if (rule.rule_effect_code === 'minimum') total = Math.max(total, price)
    else total += price * amount
  }
  // Float noise first (10485.759999 is 10485.76), then whole micro-credits.
  return Math.round(Number(total.toFixed(6)))
}

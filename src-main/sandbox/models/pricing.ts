import type { Model, ModelPricing } from '../../../src-shared/api'
import { predictMetrics } from './measure'
import type { ModelMetrics, ModelResult, RunCost } from './types'
import { validateInput } from './validate'

/**
 * Twin of `src-main/executor/remote/pricing.ts` (the client's estimate): kept apart on purpose,
 * since the sandbox stands in for a service we do not own and one shared rule would hide its own
 * bugs from every test; checked as one by `test/unit/twins/pricing.test.ts`, which runs the
 * catalog's models through both and lists where they differ and why.
 */

const MICRO = 1_000_000

/** Parses a decimal string (e.g. `0.0400`) into micro-units, rounding past six decimals. */
export function decimalToMicro(decimal: string): number {
  const match = /^([+-]?)0*(\d*)\.?(\d*)$/.exec(decimal.trim())
  if (!match || (match[2] === '' && match[3] === '')) {
    throw new Error(`Not a decimal: ${JSON.stringify(decimal)}`)
  }
  const sign = match[1] === '-' ? -1 : 1
  const whole = Number(match[2] || '0')
  const fraction = (match[3] ?? '').padEnd(7, '0')
  const micro = Number(fraction.slice(0, 6)) + (Number(fraction[6]) >= 5 ? 1 : 0)
  return sign * (whole * MICRO + micro)
}

/** Formats micro-units as a decimal string with four to six decimals, e.g. `0.0400`, `0.010486`. */
export function microToDecimal(micro: number): string {
  const sign = micro < 0 ? '-' : ''
  const abs = Math.abs(Math.round(micro))
  const whole = Math.floor(abs / MICRO)
  const fraction = String(abs % MICRO)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(4, '0')
  return `${sign}${whole}.${fraction}`
}

function quantity(rule: ModelPricing, metrics: ModelMetrics): number {
  switch (rule.dimension_code) {
    case 'output_megapixels':
      return metrics.megapixels ?? 0
    case 'output_seconds':
      return metrics.seconds ?? 0
    default:
      return 1
  }
}

function applies(
  rule: ModelPricing,
  model: Model,
  input: Record<string, unknown>,
  amount: number,
): boolean {
  if (rule.disabled_at !== null) return false
  if (rule.model_input_id !== null) {
    const def = model.inputs?.find((candidate) => candidate.id === rule.model_input_id)
    if (!def) return false
    const value = input[def.name]
    if (value === undefined || value === null) return false
    if (
      rule.match_value !== null &&
      (typeof value === 'string' ? value : JSON.stringify(value)) !== rule.match_value
    )
      return false
  }
  if (rule.min_value !== null && amount < Number(rule.min_value)) return false
  if (rule.max_value !== null && amount > Number(rule.max_value)) return false
  return true
}

/**
 * Applies a model's pricing rules, in sort_order, to measured metrics: `add` adds price × quantity
 * (1 per run, output megapixels or output seconds), `multiply` multiplies the cost so far by price,
 * `minimum` raises it to at least price. A rule tied to an input (model_input_id) applies only when
 * that input equals match_value; min_value/max_value bound the quantity a rule applies to.
 */
export function priceMetrics(
  model: Model,
  input: Record<string, unknown>,
  metrics: ModelMetrics,
): RunCost {
  const rules = [...(model.pricing ?? [])].sort((a, b) => a.sort_order - b.sort_order)
  let total = 0
  for (const rule of rules) {
    const amount = quantity(rule, metrics)
    if (!applies(rule, model, input, amount)) continue
    const price = decimalToMicro(rule.price)
    switch (rule.rule_effect_code) {
      case 'multiply':
        total *= price / MICRO
        break
      case 'minimum':
        total = Math.max(total, price)
        break
      default:
        total += price * amount
    }
  }
  // Round away float noise first (e.g. 10485.759999 → 10485.76), then to whole micro-credits.
  const micro = Math.round(Number(total.toFixed(6)))
  return { micro, cost: microToDecimal(micro) }
}

/** The cost of a finished run: its pricing rules applied to what it measured; 0 if it failed. */
export function priceRun(model: Model, input: unknown, result: ModelResult): RunCost {
  if (!result.ok) return { micro: 0, cost: microToDecimal(0) }
  return priceMetrics(model, validateInput(model, input).input, result.metrics)
}

/**
 * The expected cost of running `input`, before the run (for the INSUFFICIENT_CREDIT check). Exact
 * for models priced per run, per output megapixel of a width × height input, or per output second;
 * invalid inputs are estimated on their valid parts.
 */
export function estimateCost(model: Model, input: unknown): RunCost {
  const validated = validateInput(model, input).input
  return priceMetrics(model, validated, predictMetrics(validated))
}

import { describe, expect, it } from 'vitest'
import type { Model, ModelPricing } from '../../../src-shared/api'
import { estimateRunMicro } from '../../../src-main/executor/remote/pricing'
import type { ModelInfo } from '../../../src-main/executor/remote/models'
import {
  MODEL_CATALOG,
  PRICING_DIMENSION_CODES,
  estimateCost,
  priceRun,
  runModel,
  validateInput,
} from '../../../src-main/sandbox/models'

/**
 * The pricing twins, checked as one: how much of each priced quantity (runs, output megapixels,
 * output seconds) a run counts, as the executor predicts it before dispatching
 * (`src-main/executor/remote/pricing.ts`, for the credit check and the estimate shown) and as the
 * sandbox counts it (`src-main/sandbox/models/pricing.ts`, its estimate and its charge). They are
 * kept apart on purpose (the sandbox stands in for a service we do not own; one shared rule would
 * hide its own bugs from every test), so this table runs every model of the sandbox's catalog with
 * representative inputs through both.
 *
 * A quantity is read through each side's public entry by pricing the model with one rule, 1 credit
 * per unit of that dimension: the cost in micro-credits is then the quantity × 1e6.
 */

const info = (model: Model): ModelInfo => ({
  id: model.id,
  slug: model.slug,
  inputs: model.inputs ?? [],
  outputs: model.outputs ?? [],
  pricing: model.pricing ?? [],
})

/** The model priced at one credit per unit of `dimension` and nothing else. */
function perUnit(model: Model, dimension: string): Model {
  const [first] = model.pricing ?? []
  if (!first) throw new Error(`${model.slug} has no pricing rule to copy.`)
  const rule: ModelPricing = {
    ...first,
    dimension_code: dimension,
    rule_effect_code: 'add',
    price: '1',
    model_input_id: null,
    match_value: null,
    min_value: null,
    max_value: null,
    disabled_at: null,
    sort_order: 0,
  }
  return { ...model, pricing: [rule] }
}

/** Quantities in micro-units (so that 0.262144 megapixels reads 262144), by dimension. */
function quantities(model: Model, input: Record<string, unknown>) {
  const executor: Record<string, number> = {}
  const sandbox: Record<string, number> = {}
  for (const dimension of PRICING_DIMENSION_CODES) {
    const priced = perUnit(model, dimension)
    executor[dimension] = estimateRunMicro(info(priced), input)
    sandbox[dimension] = estimateCost(priced, input).micro
  }
  return { executor, sandbox }
}

const model = (slug: string): Model => {
  const found = MODEL_CATALOG.find((candidate) => candidate.slug === slug)
  if (!found) throw new Error(`The catalog has no model ${slug}.`)
  return found
}

/** Inputs every model meets: what is left out takes defaults, odd values, sizes, counts. */
const COMMON_INPUTS: readonly Record<string, unknown>[] = [
  {},
  { width: null, height: null, num_images: null },
  { width: 1024, height: 768 },
  { width: 1024, height: 768, num_images: 3 },
  { width: 64, height: 2048, num_images: 4 },
  { num_images: 2.6 },
  { num_images: 0 },
  { width: 10, height: 10 },
  { width: '1024', height: 768 },
  { width: NaN, height: 512 },
  { duration_seconds: 3 },
  { duration_seconds: 3, fps: 8 },
  { duration_seconds: 0.25, fps: 4, width: 1024, height: 1024 },
  { duration_seconds: 2, fps: 24 },
  { duration_seconds: 1, fps: 24, format: 'gif' },
  { duration_seconds: 4, fps: 1 },
  { scale: 4 },
  { scale: 2 },
  { scale: '4' },
  { scale: 3 },
]

const SWEEP = MODEL_CATALOG.flatMap((m) =>
  COMMON_INPUTS.map((input) => ({ model: m, input, label: `${m.slug} ${JSON.stringify(input)}` })),
)

/**
 * Where the twins disagree today, each on purpose or out of reach:
 * - `frames`: the sandbox counts the seconds of the video it makes, whole frames at whole
 *   milliseconds (24 fps for 2 s is 48 frames of 42 ms, 2.016 s; a GIF's delays are multiples of
 *   10 ms); the executor predicts `duration_seconds` as asked, as a service we do not know the
 *   frame timing of would be asked. The estimate is a little off, the charge is the service's.
 * - `refused`: an input the service refuses is never run nor charged, and the executor refuses
 *   it before dispatch (its value checks are the value twins), so its estimate of one is moot:
 *   the sandbox estimates on the valid parts, the executor on the values as given.
 */
function knownDifference(
  m: Model,
  input: Record<string, unknown>,
): 'frames' | 'refused' | undefined {
  if (
    validateInput(m, input).problems.some(
      (problem) => problem.field !== 'prompt' && problem.field !== 'image',
    )
  ) {
    return 'refused'
  }
  const validated = validateInput(m, input).input
  if (typeof validated.fps === 'number' && typeof validated.duration_seconds === 'number') {
    const frames = Math.max(2, Math.round(validated.duration_seconds * validated.fps))
    const exact = 1000 / validated.fps
    const delay =
      validated.format === 'gif' ? Math.max(10, Math.round(exact / 10) * 10) : Math.round(exact)
    if (frames * delay !== validated.duration_seconds * 1000) return 'frames'
  }
  return undefined
}

/** The `frames` differences, in micro-seconds of output: what each side counts. */
const FRAME_SECONDS = new Map([
  // At least two frames: 0.25 s at 4 fps is one frame asked, two made.
  [
    JSON.stringify({ duration_seconds: 0.25, fps: 4, width: 1024, height: 1024 }),
    { executor: 250_000, sandbox: 500_000 },
  ],
  // 48 frames of 42 ms (1000 / 24 rounded).
  [JSON.stringify({ duration_seconds: 2, fps: 24 }), { executor: 2_000_000, sandbox: 2_016_000 }],
  // A GIF's delays are whole centiseconds: 24 frames of 40 ms.
  [
    JSON.stringify({ duration_seconds: 1, fps: 24, format: 'gif' }),
    { executor: 1_000_000, sandbox: 960_000 },
  ],
])

/** Cases with the answer written out, in micro-units of each quantity and micro-credits. */
const EXPECTED: readonly {
  slug: string
  input: Record<string, unknown>
  quantities: Record<string, number>
  micro: number
}[] = [
  // 512 × 512 by default: 0.262144 MP at 0.04, above the 0.005 minimum.
  {
    slug: 'atelier/text-to-image',
    input: {},
    quantities: { run: 1_000_000, output_megapixels: 262_144, output_seconds: 0 },
    micro: 10_486,
  },
  {
    slug: 'atelier/text-to-image',
    input: { width: 1024, height: 768, num_images: 3 },
    quantities: { run: 1_000_000, output_megapixels: 2_359_296, output_seconds: 0 },
    micro: 94_372,
  },
  // 64 × 64 is 0.004096 MP, 164 micro-credits: the minimum of 0.005 applies.
  {
    slug: 'atelier/text-to-image',
    input: { width: 64, height: 64 },
    quantities: { run: 1_000_000, output_megapixels: 4_096, output_seconds: 0 },
    micro: 5_000,
  },
  {
    slug: 'atelier/upscale',
    input: { scale: 4 },
    quantities: { run: 1_000_000, output_megapixels: 0, output_seconds: 0 },
    micro: 25_000,
  },
  {
    slug: 'atelier/upscale',
    input: {},
    quantities: { run: 1_000_000, output_megapixels: 0, output_seconds: 0 },
    micro: 10_000,
  },
  // 1 s at 8 fps by default, 256 × 256: one frame's megapixels, 0.01 per run + 0.05 per second.
  {
    slug: 'atelier/text-to-video',
    input: {},
    quantities: { run: 1_000_000, output_megapixels: 65_536, output_seconds: 1_000_000 },
    micro: 60_000,
  },
  {
    slug: 'atelier/text-to-video',
    input: { duration_seconds: 3 },
    quantities: { run: 1_000_000, output_megapixels: 65_536, output_seconds: 3_000_000 },
    micro: 160_000,
  },
  {
    slug: 'atelier/caption',
    input: { detail: 'detailed' },
    quantities: { run: 1_000_000, output_megapixels: 0, output_seconds: 0 },
    micro: 2_000,
  },
]

describe('pricing quantities: executor and sandbox agree', () => {
  it('covers every model of the catalog and every pricing dimension it uses', () => {
    expect(new Set(SWEEP.map((c) => c.model.slug)).size).toBe(MODEL_CATALOG.length)
    const used = MODEL_CATALOG.flatMap((m) => m.pricing.map((rule) => rule.dimension_code))
    expect(PRICING_DIMENSION_CODES).toEqual(expect.arrayContaining(used))
  })

  it.each(EXPECTED)('$slug $input', ({ slug, input, quantities: want, micro }) => {
    const m = model(slug)
    expect(quantities(m, input)).toEqual({ executor: want, sandbox: want })
    expect({
      executor: estimateRunMicro(info(m), input),
      sandbox: estimateCost(m, input).micro,
    }).toEqual({ executor: micro, sandbox: micro })
  })

  it.each(SWEEP)('$label', ({ model: m, input }) => {
    const { executor, sandbox } = quantities(m, input)
    const difference = knownDifference(m, input)
    if (difference === undefined) {
      expect(executor).toEqual(sandbox)
      expect(estimateRunMicro(info(m), input)).toBe(estimateCost(m, input).micro)
    } else if (difference === 'frames') {
      // Runs and megapixels still agree; the seconds are the ones listed, no others.
      expect({ ...executor, output_seconds: 0 }).toEqual({ ...sandbox, output_seconds: 0 })
      expect({ executor: executor.output_seconds, sandbox: sandbox.output_seconds }).toEqual(
        FRAME_SECONDS.get(JSON.stringify(input)),
      )
    } else {
      expect(executor.run).toBe(sandbox.run)
    }
  })

  it.each([
    ['atelier/text-to-image', { prompt: 'a cat', width: 64, height: 96, num_images: 2 }],
    [
      'atelier/text-to-video',
      { prompt: 'a cat', width: 64, height: 64, duration_seconds: 0.5, fps: 4 },
    ],
  ] as const)('the sandbox charges what both estimate: %s %j', async (slug, input) => {
    const m = model(slug)
    const result = await runModel(slug, input, { seed: 1, random: () => 0.99 })
    expect(result.ok).toBe(true)
    const charged = priceRun(m, input, result).micro
    expect({
      executor: estimateRunMicro(info(m), input),
      sandbox: estimateCost(m, input).micro,
    }).toEqual({
      executor: charged,
      sandbox: charged,
    })
  })
})

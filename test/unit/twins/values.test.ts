import { describe, expect, it } from 'vitest'
import type { Model, ModelInput } from '../../../src-shared/api'
import { typeProblem, validatorProblem } from '../../../src-main/executor/validate/values'
import { MODEL_CATALOG, VARIABLE_TYPE_CODES, validateInput } from '../../../src-main/sandbox/models'

/**
 * The value-check twins, checked as one: whether a value typed into a port is acceptable, as the
 * executor decides before dispatching (`src-main/executor/validate/values.ts`) and as the sandbox
 * decides when a run reaches the service (`src-main/sandbox/models/validate.ts`). They are kept
 * apart on purpose (the sandbox stands in for a service we do not own; one shared rule would hide
 * its own bugs from every test), so this table runs every declared input of the sandbox's catalog,
 * with valid, invalid and edge values, through both.
 */

type Verdict = 'accept' | 'refuse' | 'absent' | 'throws'

/** The executor: a left-out value is not checked here; otherwise its type, then its validator. */
function executorVerdict(def: ModelInput, value: unknown): Verdict {
  if (value === undefined || value === null) return 'absent'
  if (typeProblem(def.variable_type_code, value) !== null) return 'refuse'
  return validatorProblem(def, value) === null ? 'accept' : 'refuse'
}

/** The sandbox: the problems its run input check finds with this one input. */
function sandboxVerdict(model: Model, def: ModelInput, value: unknown): Verdict {
  let problems
  try {
    problems = validateInput(model, { [def.name]: value }).problems
  } catch {
    return 'throws'
  }
  const own = problems.filter((problem) => problem.field === def.name)
  if (value === undefined || value === null) {
    // Left out: a required input says so, an optional one takes its default or nothing.
    return own.every((problem) => problem.code === 'required') ? 'absent' : 'refuse'
  }
  return own.length === 0 ? 'accept' : 'refuse'
}

const mediaRef = { kind: 'media', sha256: 'a'.repeat(64), width: 64, height: 64 }

/** Values every declared input meets, whatever its type. */
const EDGE_VALUES: readonly unknown[] = [
  null,
  undefined,
  '',
  ' ',
  'a cat',
  'x'.repeat(2000),
  'x'.repeat(2001),
  '🔥'.repeat(2000),
  'data:image/png;base64,iVBORw0KGgo=',
  '00000000-0000-4000-8000-000000000001',
  'https://example.com/a.png',
  '512',
  'true',
  'abstract',
  'Studio',
  'brief',
  'webp',
  '#aabbcc',
  '#aabbc',
  0,
  -0,
  1,
  -1,
  0.25,
  0.5,
  1.5,
  2,
  3,
  4,
  63,
  64,
  255,
  256,
  1024,
  2048,
  2049,
  4294967295,
  4294967296,
  Number.MAX_SAFE_INTEGER + 1,
  NaN,
  Infinity,
  -Infinity,
  true,
  false,
  [],
  ['a cat'],
  {},
  mediaRef,
]

/**
 * Where the twins disagree on purpose. The executor passes media around as references to files it
 * holds (`{ kind: 'media', sha256 }`) and uploads them before dispatching, so the service never
 * sees one: the executor accepts one for an image or video port, the service would not.
 */
function knownDifference(def: ModelInput, value: unknown): string | undefined {
  if (
    value === mediaRef &&
    (def.variable_type_code === 'image' || def.variable_type_code === 'video')
  ) {
    return 'a media reference, uploaded by the executor before the service sees it'
  }
  return undefined
}

/** A port as the service may declare one though no catalog model does (yet): the rest of the rules. */
function port(
  name: string,
  variable_type_code: string,
  validator_code: string | null = null,
  validator_attrs: Record<string, unknown> | null = null,
): ModelInput {
  const base = MODEL_CATALOG[0]?.inputs[0]
  if (!base) throw new Error('The catalog has no model input to start from.')
  return {
    ...base,
    name,
    display_name: null,
    variable_type_code,
    validator_code,
    validator_attrs,
    is_required: false,
    default_value: null,
    default_behavior_code: 'omit',
  }
}

const SYNTHETIC: Model = {
  ...(MODEL_CATALOG[0] as Model),
  slug: 'twins/synthetic',
  inputs: [
    port('clip', 'video'),
    port('at_least', 'number', 'range', { min: 0.25 }),
    port('at_most', 'integer', 'range', { max: 4 }),
    port('short', 'string', 'length', { max: 3 }),
    port('word', 'text', 'pattern', { pattern: '^[a-z]+$', flags: 'i' }),
    port('mixed', 'enum', 'enum', { values: ['a', 1, true] }),
    port('broken_pattern', 'text', 'pattern', { pattern: '([' }),
  ],
}

const INPUTS = [...MODEL_CATALOG, SYNTHETIC].flatMap((model) =>
  (model.inputs ?? []).map((def) => ({ model, def, label: `${model.slug} ${def.name}` })),
)

const SWEEP = INPUTS.flatMap(({ model, def, label }) =>
  EDGE_VALUES.map((value, index) => ({ model, def, value, label: `${label} #${index}` })),
)

function find(slug: string, name: string): { model: Model; def: ModelInput } {
  const model = [...MODEL_CATALOG, SYNTHETIC].find((candidate) => candidate.slug === slug)
  const def = model?.inputs?.find((input) => input.name === name)
  if (!model || !def) throw new Error(`The catalog has no input ${slug} ${name}.`)
  return { model, def }
}

/** Cases with the answer written out: each validator, each type, their edges. */
const EXPECTED: readonly [slug: string, input: string, value: unknown, want: Verdict][] = [
  ['atelier/text-to-image', 'prompt', 'a cat', 'accept'],
  ['atelier/text-to-image', 'prompt', '', 'refuse'],
  ['atelier/text-to-image', 'prompt', 'x'.repeat(2000), 'accept'],
  ['atelier/text-to-image', 'prompt', 'x'.repeat(2001), 'refuse'],
  ['atelier/text-to-image', 'prompt', '🔥'.repeat(2000), 'accept'],
  ['atelier/text-to-image', 'prompt', 42, 'refuse'],
  ['atelier/text-to-image', 'prompt', null, 'absent'],
  ['atelier/text-to-image', 'negative_prompt', '', 'accept'],
  ['atelier/text-to-image', 'width', 64, 'accept'],
  ['atelier/text-to-image', 'width', 2048, 'accept'],
  ['atelier/text-to-image', 'width', 63, 'refuse'],
  ['atelier/text-to-image', 'width', 2049, 'refuse'],
  ['atelier/text-to-image', 'width', 512.5, 'refuse'],
  ['atelier/text-to-image', 'width', '512', 'refuse'],
  ['atelier/text-to-image', 'width', NaN, 'refuse'],
  ['atelier/text-to-image', 'width', Infinity, 'refuse'],
  ['atelier/text-to-image', 'width', true, 'refuse'],
  ['atelier/text-to-image', 'style', 'studio', 'accept'],
  ['atelier/text-to-image', 'style', 'Studio', 'refuse'],
  ['atelier/text-to-image', 'style', '', 'refuse'],
  ['atelier/text-to-image', 'style', 1, 'refuse'],
  ['atelier/text-to-image', 'style', ['studio'], 'refuse'],
  ['atelier/text-to-image', 'seed', 0, 'accept'],
  ['atelier/text-to-image', 'seed', 4294967295, 'accept'],
  ['atelier/text-to-image', 'seed', -1, 'refuse'],
  ['atelier/text-to-image', 'seed', 4294967296, 'refuse'],
  ['atelier/text-to-image', 'seed', 1.5, 'refuse'],
  ['atelier/text-to-image', 'seed', Number.MAX_SAFE_INTEGER + 1, 'refuse'],
  ['atelier/image-to-image', 'strength', 0.5, 'accept'],
  ['atelier/image-to-image', 'strength', 0, 'accept'],
  ['atelier/image-to-image', 'strength', -0, 'accept'],
  ['atelier/image-to-image', 'strength', 1.01, 'refuse'],
  ['atelier/image-to-image', 'strength', NaN, 'refuse'],
  ['atelier/image-to-image', 'tint', '#aabbcc', 'accept'],
  ['atelier/image-to-image', 'tint', '#AABBCC', 'accept'],
  ['atelier/image-to-image', 'tint', '#aabbc', 'refuse'],
  ['atelier/image-to-image', 'tint', 'aabbcc', 'refuse'],
  ['atelier/image-to-image', 'tint', 0xaabbcc, 'refuse'],
  ['atelier/image-to-image', 'image', 'data:image/png;base64,iVBORw0KGgo=', 'accept'],
  ['atelier/image-to-image', 'image', '00000000-0000-4000-8000-000000000001', 'accept'],
  ['atelier/image-to-image', 'image', '   ', 'refuse'],
  ['atelier/image-to-image', 'image', '', 'refuse'],
  ['atelier/image-to-image', 'image', 5, 'refuse'],
  ['atelier/image-to-image', 'image', null, 'absent'],
  ['atelier/upscale', 'scale', 2, 'accept'],
  ['atelier/upscale', 'scale', 4, 'accept'],
  ['atelier/upscale', 'scale', 3, 'refuse'],
  ['atelier/upscale', 'scale', '2', 'refuse'],
  ['atelier/remove-background', 'feather', true, 'accept'],
  ['atelier/remove-background', 'feather', false, 'accept'],
  ['atelier/remove-background', 'feather', 'true', 'refuse'],
  ['atelier/remove-background', 'feather', 0, 'refuse'],
  ['atelier/remove-background', 'tolerance', 255, 'accept'],
  ['atelier/remove-background', 'tolerance', 256, 'refuse'],
  ['atelier/caption', 'detail', 'brief', 'accept'],
  ['atelier/caption', 'detail', 'short', 'refuse'],
  ['atelier/text-to-video', 'duration_seconds', 0.25, 'accept'],
  ['atelier/text-to-video', 'duration_seconds', 0.2, 'refuse'],
  ['atelier/text-to-video', 'duration_seconds', 4, 'accept'],
  ['atelier/text-to-video', 'format', 'gif', 'accept'],
  ['atelier/text-to-video', 'format', 'GIF', 'refuse'],
  ['atelier/flaky', 'failure_rate', 1, 'accept'],
  ['atelier/flaky', 'failure_rate', -Infinity, 'refuse'],
  ['twins/synthetic', 'clip', 'https://example.com/a.webp', 'accept'],
  ['twins/synthetic', 'clip', '', 'refuse'],
  ['twins/synthetic', 'at_least', 0.25, 'accept'],
  ['twins/synthetic', 'at_least', 0.2, 'refuse'],
  ['twins/synthetic', 'at_most', 4, 'accept'],
  ['twins/synthetic', 'at_most', 5, 'refuse'],
  ['twins/synthetic', 'short', '🔥🔥🔥', 'accept'],
  ['twins/synthetic', 'short', 'abcd', 'refuse'],
  ['twins/synthetic', 'word', 'Cat', 'accept'],
  ['twins/synthetic', 'word', 'a cat', 'refuse'],
  ['twins/synthetic', 'mixed', true, 'accept'],
  ['twins/synthetic', 'mixed', '1', 'refuse'],
]

describe('value checks: executor and sandbox agree', () => {
  it('covers every declared input of the catalog, each type and validator', () => {
    const types = new Set(INPUTS.map(({ def }) => def.variable_type_code))
    const validators = new Set(INPUTS.map(({ def }) => def.validator_code))
    expect([...types].sort()).toEqual([...VARIABLE_TYPE_CODES].sort())
    expect([...validators].sort()).toEqual(
      ['enum', 'image_size', 'length', 'pattern', 'range', null].sort(),
    )
    expect(SWEEP.length).toBe(INPUTS.length * EDGE_VALUES.length)
  })

  it.each(EXPECTED)('%s %s %j: %s', (slug, name, value, want) => {
    const { model, def } = find(slug, name)
    expect({
      executor: executorVerdict(def, value),
      sandbox: sandboxVerdict(model, def, value),
    }).toEqual({ executor: want, sandbox: want })
  })

  it.each(SWEEP)('$label', ({ model, def, value }) => {
    const executor = executorVerdict(def, value)
    const sandbox = sandboxVerdict(model, def, value)
    const difference = knownDifference(def, value)
    if (difference) {
      expect({ executor, sandbox }).toEqual({ executor: 'accept', sandbox: 'refuse' })
    } else {
      expect(executor).toBe(sandbox)
    }
  })
})

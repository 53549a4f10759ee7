import type { ReferenceRecord } from '../../../src-shared/api'
import { CATALOG_TIMESTAMP } from './ids'

/** The codes the sandbox catalog uses, one list per `/v1/catalogs/*` table. */

export const VARIABLE_TYPE_CODES = [
  'string',
  'text',
  'integer',
  'number',
  'boolean',
  'image',
  'video',
  'enum',
  'seed',
] as const
export type VariableTypeCode = (typeof VARIABLE_TYPE_CODES)[number]

export const VALIDATOR_CODES = ['range', 'length', 'enum', 'pattern', 'image_size'] as const
export type ValidatorCode = (typeof VALIDATOR_CODES)[number]

export const VARIABLE_BEHAVIOR_CODES = ['require', 'use_default', 'randomize', 'omit'] as const
export type VariableBehaviorCode = (typeof VARIABLE_BEHAVIOR_CODES)[number]

export const UNIT_CODES = ['run', 'megapixel', 'second'] as const
export type UnitCode = (typeof UNIT_CODES)[number]

export const PRICING_DIMENSION_CODES = ['run', 'output_megapixels', 'output_seconds'] as const
export type PricingDimensionCode = (typeof PRICING_DIMENSION_CODES)[number]

export const RULE_EFFECT_CODES = ['add', 'multiply', 'minimum'] as const
export type RuleEffectCode = (typeof RULE_EFFECT_CODES)[number]

export const MODEL_TYPE_CODES = [
  'text-to-image',
  'image-to-image',
  'upscale',
  'background-removal',
  'image-to-text',
  'text-to-video',
] as const
export type ModelTypeCode = (typeof MODEL_TYPE_CODES)[number]

/** `pricing_model_code` of a pricing rule: how its quantity is measured. */
export const PRICING_MODEL_CODES = ['per_run', 'per_megapixel', 'per_second'] as const
export type PricingModelCode = (typeof PRICING_MODEL_CODES)[number]

export type CatalogName =
  | 'variable-types'
  | 'validators'
  | 'units'
  | 'pricing-dimensions'
  | 'rule-effects'
  | 'model-types'
  | 'variable-behaviors'

function records<C extends string>(
  codes: readonly C[],
  entries: Record<C, readonly [displayName: string, description: string]>,
): ReferenceRecord[] {
  return codes.map((code, index) => {
    const [displayName, description] = entries[code]
    return {
      code,
      display_name: displayName,
      description,
      sort_order: index,
      is_active: true,
      created_at: CATALOG_TIMESTAMP,
      updated_at: CATALOG_TIMESTAMP,
    }
  })
}

/** The reference records of the seven `/v1/catalogs/*` tables, in `sort_order`. */
export const CATALOGS: Record<CatalogName, ReferenceRecord[]> = {
  'variable-types': records(VARIABLE_TYPE_CODES, {
    string: ['String', 'A short single-line string.'],
    text: ['Text', 'Free-form, possibly multi-line text such as a prompt.'],
    integer: ['Integer', 'A whole number.'],
    number: ['Number', 'A decimal number.'],
    boolean: ['Boolean', 'true or false.'],
    image: ['Image', 'An image: a data: URL, an asset id or an image URL.'],
    video: ['Video', 'A video or animated image.'],
    enum: ['Choice', 'One of a fixed list of values (see the enum validator).'],
    seed: ['Seed', 'A non-negative whole number that makes a generation reproducible.'],
  }),
  validators: records(VALIDATOR_CODES, {
    range: ['Range', 'A number between validator_attrs.min and validator_attrs.max (inclusive).'],
    length: [
      'Length',
      'A string whose length in characters is between validator_attrs.min and validator_attrs.max.',
    ],
    enum: ['Enumeration', 'One of validator_attrs.values.'],
    pattern: ['Pattern', 'A string matching the regular expression validator_attrs.pattern.'],
    image_size: [
      'Image size',
      'An image whose pixel size is within validator_attrs.min_width/min_height/max_width/max_height; checked when the image is loaded.',
    ],
  }),
  'variable-behaviors': records(VARIABLE_BEHAVIOR_CODES, {
    require: ['Required', 'The caller must supply a value.'],
    use_default: ['Use default', 'When left out, default_value is used.'],
    randomize: ['Randomize', 'When left out, the service picks a random value for the run.'],
    omit: ['Omit', 'When left out, the input is not passed to the model.'],
  }),
  units: records(UNIT_CODES, {
    run: ['Run', 'One model run.'],
    megapixel: ['Megapixel', 'One million output pixels (width × height / 1,000,000).'],
    second: ['Second', 'One second of output video.'],
  }),
  'pricing-dimensions': records(PRICING_DIMENSION_CODES, {
    run: ['Run', 'Counts 1 for every run.'],
    output_megapixels: ['Output megapixels', 'The total megapixels of all output images.'],
    output_seconds: ['Output seconds', 'The total duration of the output video, in seconds.'],
  }),
  'rule-effects': records(RULE_EFFECT_CODES, {
    add: ['Add', 'Adds price × quantity to the cost.'],
    multiply: ['Multiply', 'Multiplies the cost so far by price.'],
    minimum: ['Minimum', 'Raises the cost to at least price.'],
  }),
  'model-types': records(MODEL_TYPE_CODES, {
    'text-to-image': ['Text to image', 'Generates images from a prompt.'],
    'image-to-image': ['Image to image', 'Transforms an input image guided by a prompt.'],
    upscale: ['Upscale', 'Enlarges an image.'],
    'background-removal': ['Background removal', 'Makes the background of an image transparent.'],
    'image-to-text': ['Image to text', 'Describes an image in words.'],
    'text-to-video': ['Text to video', 'Generates a short animation from a prompt.'],
  }),
}

/** Whether `code` is a code of the named catalog. */
export function isCatalogCode(catalog: CatalogName, code: string): boolean {
  return CATALOGS[catalog].some((record) => record.code === code)
}

import type {
  ModelCreator,
  ModelExample,
  ModelFamily,
  ModelInput,
  ModelOutput,
  ModelPricing,
} from '../../../src-shared/api'
import type {
  ModelTypeCode,
  PricingDimensionCode,
  PricingModelCode,
  RuleEffectCode,
  UnitCode,
  ValidatorCode,
  VariableBehaviorCode,
  VariableTypeCode,
} from './codes'
import { CATALOG_TIMESTAMP, catalogId } from './ids'
import { estimateCost } from './pricing'
import type { CatalogModel } from './types'

// ---------------------------------------------------------------------------------------------
// Creators and families

interface CreatorSpec {
  slug: string
  name: string
  description: string
}

interface FamilySpec {
  slug: string
  creator: string
  name: string
  description: string
}

const CREATOR_SPECS: CreatorSpec[] = [
  {
    slug: 'atelier',
    name: 'Atelier Labs',
    description:
      'The procedural models of the Atelier sandbox: real pictures, made locally and deterministically.',
  },
  {
    slug: 'atelier-qa',
    name: 'Atelier Test Bench',
    description: 'Models that misbehave on purpose (slow, flaky) to exercise clients.',
  },
]

const FAMILY_SPECS: FamilySpec[] = [
  {
    slug: 'atelier-canvas',
    creator: 'atelier',
    name: 'Canvas',
    description: 'Generates and transforms pictures.',
  },
  {
    slug: 'atelier-toolkit',
    creator: 'atelier',
    name: 'Toolkit',
    description: 'Utility models: upscaling, background removal, captions.',
  },
  {
    slug: 'atelier-motion',
    creator: 'atelier',
    name: 'Motion',
    description: 'Short looping animations.',
  },
  {
    slug: 'atelier-testbench',
    creator: 'atelier-qa',
    name: 'Test bench',
    description: 'Deliberately slow or unreliable models.',
  },
]

/** The model creators of the catalog. */
export const MODEL_CREATORS: readonly ModelCreator[] = deepFreeze(
  CREATOR_SPECS.map((spec) => ({
    id: catalogId('creator', spec.slug),
    slug: spec.slug,
    name: spec.name,
    description: spec.description,
    website_url: null,
    logo_url: null,
    created_at: CATALOG_TIMESTAMP,
    updated_at: CATALOG_TIMESTAMP,
  })),
)

/** The model families of the catalog. */
export const MODEL_FAMILIES: readonly ModelFamily[] = deepFreeze(
  FAMILY_SPECS.map((spec) => ({
    id: catalogId('family', spec.slug),
    model_creator_id: catalogId('creator', spec.creator),
    slug: spec.slug,
    name: spec.name,
    description: spec.description,
    created_at: CATALOG_TIMESTAMP,
    updated_at: CATALOG_TIMESTAMP,
  })),
)

// ---------------------------------------------------------------------------------------------
// Inputs, outputs, pricing rules and examples, written compactly

interface InputSpec {
  name: string
  display_name: string
  description: string
  type: VariableTypeCode
  behavior: VariableBehaviorCode
  validator?: { code: ValidatorCode; attrs: Record<string, unknown> }
  default?: unknown
  featured?: boolean
}

interface OutputSpec {
  name: string
  display_name: string
  description: string
  type: VariableTypeCode
  validator?: { code: ValidatorCode; attrs: Record<string, unknown> }
}

interface PricingSpec {
  model: PricingModelCode
  effect: RuleEffectCode
  dimension: PricingDimensionCode
  unit: UnitCode | null
  price: string
  description: string
  /** Name of the input the rule is tied to, and the value it must have. */
  input?: string
  match?: string
  label?: string
  source: string
}

interface ExampleSpec {
  title: string
  description: string
  input: Record<string, unknown>
  output: Record<string, unknown>
  duration_ms: number
  featured?: boolean
}

interface ModelSpec {
  slug: string
  name: string
  description: string
  category: ModelTypeCode
  creator: string
  family: string
  variant: string
  max_resolution: string | null
  features: string[]
  content: string
  pricing_note: string
  inputs: InputSpec[]
  outputs: OutputSpec[]
  pricing: PricingSpec[]
  examples: ExampleSpec[]
  faq: [question: string, answer: string][]
  related: string[]
}

const MAX_SIZE = 2048

const prompt = (required: boolean, fallback?: string): InputSpec => ({
  name: 'prompt',
  display_name: 'Prompt',
  description:
    'What to picture. Colour words (red, gold, teal, navy...) steer the palette; the rest seeds the composition.',
  type: 'text',
  behavior: required ? 'require' : fallback === undefined ? 'omit' : 'use_default',
  validator: { code: 'length', attrs: { min: 1, max: 2000 } },
  default: fallback ?? null,
  featured: true,
})

const negativePrompt: InputSpec = {
  name: 'negative_prompt',
  display_name: 'Negative prompt',
  description: 'What to avoid. It changes the composition like the prompt does.',
  type: 'text',
  behavior: 'omit',
  validator: { code: 'length', attrs: { min: 0, max: 2000 } },
}

const dimension = (name: 'width' | 'height', fallback: number, max: number): InputSpec => ({
  name,
  display_name: name === 'width' ? 'Width' : 'Height',
  description: `Output ${name} in pixels, 64 to ${max}.`,
  type: 'integer',
  behavior: 'use_default',
  validator: { code: 'range', attrs: { min: 64, max } },
  default: fallback,
})

const style: InputSpec = {
  name: 'style',
  display_name: 'Style',
  description:
    'abstract: soft overlapping circles; geometric: hard-edged shapes; gradient: a grainy gradient; studio: one subject on a plain backdrop.',
  type: 'enum',
  behavior: 'use_default',
  validator: { code: 'enum', attrs: { values: ['abstract', 'geometric', 'gradient', 'studio'] } },
  default: 'abstract',
}

const seed: InputSpec = {
  name: 'seed',
  display_name: 'Seed',
  description:
    'Makes the output reproducible: the same input and seed give the same bytes. Random when left out.',
  type: 'seed',
  behavior: 'randomize',
  validator: { code: 'range', attrs: { min: 0, max: 4294967295 } },
}

const imageInput = (description: string, maxSide: number): InputSpec => ({
  name: 'image',
  display_name: 'Image',
  description: `${description} A data: URL, an asset id or an image URL; at most ${maxSide}×${maxSide} pixels.`,
  type: 'image',
  behavior: 'require',
  validator: {
    code: 'image_size',
    attrs: { min_width: 1, min_height: 1, max_width: maxSide, max_height: maxSide },
  },
  featured: true,
})

const imageOutput = (description: string): OutputSpec => ({
  name: 'image',
  display_name: 'Image',
  description,
  type: 'image',
})

const perRun = (price: string, description: string): PricingSpec => ({
  model: 'per_run',
  effect: 'add',
  dimension: 'run',
  unit: 'run',
  price,
  description,
  source: 'request',
})

const png = (width: number, height: number): Record<string, unknown> => ({
  content_type: 'image/png',
  width,
  height,
})

const EXAMPLE_IMAGE = 'https://assets.atelier.invalid/examples/poppy-field.png'

const MODEL_SPECS: ModelSpec[] = [
  {
    slug: 'atelier/text-to-image',
    name: 'Atelier Text to Image',
    description: 'Turns a prompt into a deterministic procedural picture (PNG).',
    category: 'text-to-image',
    creator: 'atelier',
    family: 'atelier-canvas',
    variant: 'standard',
    max_resolution: '2048x2048',
    features: [
      'Byte-identical output for the same prompt and seed',
      'Colour words in the prompt steer the palette',
      'Four styles, up to four images a run',
    ],
    content:
      '## Text to image\n\nComposes gradients, shapes and grain from a hash of the prompt and seed, and encodes them as PNG. Nothing is downloaded and no GPU is needed.',
    pricing_note:
      '0.04 credits per output megapixel (a 512×512 image is 0.0105), at least 0.005 a run.',
    inputs: [
      prompt(true),
      negativePrompt,
      dimension('width', 512, MAX_SIZE),
      dimension('height', 512, MAX_SIZE),
      style,
      {
        name: 'num_images',
        display_name: 'Number of images',
        description: 'How many images to make, 1 to 4; each uses the next variation of the seed.',
        type: 'integer',
        behavior: 'use_default',
        validator: { code: 'range', attrs: { min: 1, max: 4 } },
        default: 1,
      },
      seed,
    ],
    outputs: [imageOutput('The generated PNG image (one file per image).')],
    pricing: [
      {
        model: 'per_megapixel',
        effect: 'add',
        dimension: 'output_megapixels',
        unit: 'megapixel',
        price: '0.0400',
        description: 'Per megapixel of output (width × height × images / 1,000,000).',
        source: 'output',
      },
      {
        model: 'per_run',
        effect: 'minimum',
        dimension: 'run',
        unit: 'run',
        price: '0.0050',
        description: 'Minimum charge per run.',
        source: 'request',
      },
    ],
    examples: [
      {
        title: 'Red sunset',
        description: 'A warm abstract picture; the colour word picks the palette.',
        input: { prompt: 'a red sunset over the sea', width: 512, height: 512, seed: 7 },
        output: { images: [png(512, 512)] },
        duration_ms: 615,
        featured: true,
      },
      {
        title: 'Teal geometry, wide',
        description: 'Hard-edged shapes in a landscape frame.',
        input: { prompt: 'teal shapes', width: 1024, height: 576, style: 'geometric', seed: 42 },
        output: { images: [png(1024, 576)] },
        duration_ms: 1008,
      },
    ],
    faq: [
      [
        'Is the output really the same every time?',
        'Yes: the same input and seed give byte-identical PNG files. Change the seed or the prompt to get another picture.',
      ],
      [
        'How is a run priced?',
        '0.04 credits per output megapixel with a minimum of 0.005 credits per run.',
      ],
    ],
    related: ['atelier/image-to-image', 'atelier/upscale', 'atelier/text-to-video'],
  },
  {
    slug: 'atelier/image-to-image',
    name: 'Atelier Image to Image',
    description: 'Restyles an input image: softens it and blends a prompt-driven pattern over it.',
    category: 'image-to-image',
    creator: 'atelier',
    family: 'atelier-canvas',
    variant: 'standard',
    max_resolution: '2048x2048',
    features: [
      'Keeps the input size',
      'Strength from a light touch to a heavy restyle',
      'Optional tint colour',
    ],
    content:
      '## Image to image\n\nBlurs the input image in proportion to `strength` and blends a procedural pattern, coloured by the prompt or `tint`, over it.',
    pricing_note: '0.015 credits per run.',
    inputs: [
      imageInput('The image to transform.', MAX_SIZE),
      prompt(false),
      {
        name: 'strength',
        display_name: 'Strength',
        description: 'How far to move away from the input, 0 (unchanged) to 1.',
        type: 'number',
        behavior: 'use_default',
        validator: { code: 'range', attrs: { min: 0, max: 1 } },
        default: 0.5,
      },
      {
        name: 'tint',
        display_name: 'Tint',
        description:
          'A colour for the blended pattern, as #rrggbb. Taken from the prompt when left out.',
        type: 'string',
        behavior: 'omit',
        validator: {
          code: 'pattern',
          attrs: { pattern: '^#[0-9a-fA-F]{6}$', hint: 'a colour written as #rrggbb' },
        },
      },
      seed,
    ],
    outputs: [imageOutput('The transformed PNG image, the size of the input.')],
    pricing: [perRun('0.0150', 'Per run.')],
    examples: [
      {
        title: 'Gold wash',
        description: 'A medium-strength golden restyle.',
        input: { image: EXAMPLE_IMAGE, prompt: 'gold evening light', strength: 0.5, seed: 3 },
        output: { images: [png(768, 512)] },
        duration_ms: 565,
        featured: true,
      },
    ],
    faq: [
      [
        'Does the output keep the input size?',
        'Yes. Transparent areas of the input are flattened onto white.',
      ],
      ['What does strength 0 do?', 'It returns the input image unchanged (re-encoded as PNG).'],
    ],
    related: ['atelier/text-to-image', 'atelier/upscale', 'atelier/remove-background'],
  },
  {
    slug: 'atelier/upscale',
    name: 'Atelier Upscale',
    description: 'Enlarges an image two or four times with a Lanczos filter.',
    category: 'upscale',
    creator: 'atelier',
    family: 'atelier-toolkit',
    variant: 'lanczos',
    max_resolution: '4096x4096',
    features: ['2× or 4×', 'Lanczos-3 resampling', 'Keeps transparency'],
    content:
      '## Upscale\n\nResizes the input by `scale` with a Lanczos-3 kernel and returns a PNG.',
    pricing_note: '0.01 credits per run; 4× upscales cost 2.5 times as much.',
    inputs: [
      imageInput('The image to enlarge.', 1024),
      {
        name: 'scale',
        display_name: 'Scale',
        description: 'The enlargement factor: 2 or 4.',
        type: 'integer',
        behavior: 'use_default',
        validator: { code: 'enum', attrs: { values: [2, 4] } },
        default: 2,
        featured: true,
      },
    ],
    outputs: [imageOutput('The enlarged PNG image.')],
    pricing: [
      perRun('0.0100', 'Per run.'),
      {
        model: 'per_run',
        effect: 'multiply',
        dimension: 'run',
        unit: 'run',
        price: '2.5',
        description: '4× upscales cost 2.5 times as much.',
        input: 'scale',
        match: '4',
        label: '×2.5 at scale 4',
        source: 'request',
      },
    ],
    examples: [
      {
        title: 'Double size',
        description: 'A 512×512 picture enlarged to 1024×1024.',
        input: { image: EXAMPLE_IMAGE, scale: 2 },
        output: { images: [png(1024, 1024)] },
        duration_ms: 462,
        featured: true,
      },
      {
        title: 'Four times',
        description: 'A 256×256 icon enlarged to 1024×1024.',
        input: { image: EXAMPLE_IMAGE, scale: 4 },
        output: { images: [png(1024, 1024)] },
        duration_ms: 462,
      },
    ],
    faq: [
      [
        'How large can the input be?',
        'Up to 1024×1024, so that a 4× result stays within 4096×4096.',
      ],
      ['Is transparency kept?', 'Yes: an input with an alpha channel gives an output with one.'],
    ],
    related: ['atelier/image-to-image', 'atelier/remove-background'],
  },
  {
    slug: 'atelier/remove-background',
    name: 'Atelier Remove Background',
    description: 'Makes the dominant background colour of an image transparent.',
    category: 'background-removal',
    creator: 'atelier',
    family: 'atelier-toolkit',
    variant: 'colour-key',
    max_resolution: '2048x2048',
    features: [
      'Finds the background colour on the image border',
      'Adjustable tolerance',
      'Feathered edges',
    ],
    content:
      '## Remove background\n\nTakes the most common colour of the image border as the background and clears every pixel close to it, with a soft ramp at the edges.',
    pricing_note: '0.008 credits per run.',
    inputs: [
      imageInput('The image to cut out.', MAX_SIZE),
      {
        name: 'tolerance',
        display_name: 'Tolerance',
        description:
          'How far (RGB distance, 0 to 255) a colour may be from the background and still be cleared.',
        type: 'integer',
        behavior: 'use_default',
        validator: { code: 'range', attrs: { min: 0, max: 255 } },
        default: 48,
      },
      {
        name: 'feather',
        display_name: 'Feather edges',
        description: 'Fade the edge of the cut-out instead of cutting it hard.',
        type: 'boolean',
        behavior: 'use_default',
        default: true,
      },
    ],
    outputs: [imageOutput('The PNG image with an alpha channel; the background is transparent.')],
    pricing: [perRun('0.0080', 'Per run.')],
    examples: [
      {
        title: 'Studio cut-out',
        description: 'A subject on a plain backdrop, cut out.',
        input: { image: EXAMPLE_IMAGE, tolerance: 48 },
        output: { images: [png(512, 512)] },
        duration_ms: 305,
        featured: true,
      },
    ],
    faq: [
      [
        'How does it find the background?',
        'It takes the most common colour along the image border, so it works best on plain backdrops.',
      ],
    ],
    related: ['atelier/upscale', 'atelier/caption'],
  },
  {
    slug: 'atelier/caption',
    name: 'Atelier Caption',
    description: 'Describes an image in words: orientation, size, dominant colour, tone.',
    category: 'image-to-text',
    creator: 'atelier',
    family: 'atelier-toolkit',
    variant: 'statistics',
    max_resolution: '4096x4096',
    features: ['Deterministic captions', 'Brief or detailed'],
    content:
      '## Caption\n\nMeasures the image (dominant colour, brightness, contrast, texture) and says what it found.',
    pricing_note: '0.002 credits per run.',
    inputs: [
      imageInput('The image to describe.', 4096),
      {
        name: 'detail',
        display_name: 'Detail',
        description:
          'brief: one sentence; detailed: adds tone, contrast, texture and transparency.',
        type: 'enum',
        behavior: 'use_default',
        validator: { code: 'enum', attrs: { values: ['brief', 'detailed'] } },
        default: 'brief',
      },
    ],
    outputs: [
      {
        name: 'caption',
        display_name: 'Caption',
        description: 'The description of the image.',
        type: 'text',
      },
    ],
    pricing: [perRun('0.0020', 'Per run.')],
    examples: [
      {
        title: 'Brief caption',
        description: 'One sentence about a picture.',
        input: { image: EXAMPLE_IMAGE },
        output: { text: 'A square 512×512 image dominated by red tones.' },
        duration_ms: 176,
        featured: true,
      },
    ],
    faq: [
      [
        'Does it recognise objects?',
        'No: it measures colours and tones. The same image always gets the same caption.',
      ],
    ],
    related: ['atelier/remove-background', 'atelier/text-to-image'],
  },
  {
    slug: 'atelier/text-to-video',
    name: 'Atelier Text to Video',
    description: 'Turns a prompt into a short looping animation (animated WebP or GIF).',
    category: 'text-to-video',
    creator: 'atelier',
    family: 'atelier-motion',
    variant: 'loop',
    max_resolution: '1024x1024',
    features: ['Seamless loops', 'Animated WebP or GIF', 'Up to 4 seconds at up to 24 fps'],
    content:
      '## Text to video\n\nAnimates a procedural picture: its shapes travel on closed paths, so the animation loops seamlessly.',
    pricing_note: '0.01 credits per run plus 0.05 credits per second of output.',
    inputs: [
      prompt(true),
      dimension('width', 256, 1024),
      dimension('height', 256, 1024),
      {
        name: 'duration_seconds',
        display_name: 'Duration',
        description: 'Length of one loop in seconds, 0.25 to 4.',
        type: 'number',
        behavior: 'use_default',
        validator: { code: 'range', attrs: { min: 0.25, max: 4 } },
        default: 1,
      },
      {
        name: 'fps',
        display_name: 'Frames per second',
        description: 'Frame rate, 1 to 24.',
        type: 'integer',
        behavior: 'use_default',
        validator: { code: 'range', attrs: { min: 1, max: 24 } },
        default: 8,
      },
      {
        name: 'format',
        display_name: 'Format',
        description: 'webp (smaller) or gif (plays everywhere; delays in 10 ms steps).',
        type: 'enum',
        behavior: 'use_default',
        validator: { code: 'enum', attrs: { values: ['webp', 'gif'] } },
        default: 'webp',
      },
      seed,
    ],
    outputs: [
      {
        name: 'video',
        display_name: 'Video',
        description: 'The animation, as an animated WebP or GIF.',
        type: 'video',
      },
    ],
    pricing: [
      perRun('0.0100', 'Per run.'),
      {
        model: 'per_second',
        effect: 'add',
        dimension: 'output_seconds',
        unit: 'second',
        price: '0.0500',
        description: 'Per second of output animation.',
        source: 'output',
      },
    ],
    examples: [
      {
        title: 'Blue drift',
        description: 'One second of drifting blue shapes at 8 fps.',
        input: { prompt: 'blue bubbles drifting', duration_seconds: 1, fps: 8, seed: 11 },
        output: {
          video: {
            content_type: 'image/webp',
            width: 256,
            height: 256,
            duration_ms: 1000,
            frames: 8,
          },
        },
        duration_ms: 1115,
        featured: true,
      },
    ],
    faq: [
      [
        'Why an animated image and not an MP4?',
        'Animated WebP and GIF need no video codec, and every browser plays them.',
      ],
      ['How is it priced?', '0.01 credits per run plus 0.05 credits per second of animation.'],
    ],
    related: ['atelier/text-to-image'],
  },
  {
    slug: 'atelier/slow-render',
    name: 'Atelier Slow Render',
    description:
      'Text to image, ten times slower: for testing progress, timeouts and cancellation.',
    category: 'text-to-image',
    creator: 'atelier-qa',
    family: 'atelier-testbench',
    variant: 'slow',
    max_resolution: '2048x2048',
    features: ['Same pictures as Text to Image', '10× the latency'],
    content:
      '## Slow render\n\nMakes the same pictures as `atelier/text-to-image` for the same input and seed, but reports ten times the latency.',
    pricing_note: '0.005 credits per run.',
    inputs: [
      prompt(true),
      dimension('width', 512, MAX_SIZE),
      dimension('height', 512, MAX_SIZE),
      style,
      seed,
    ],
    outputs: [imageOutput('The generated PNG image.')],
    pricing: [perRun('0.0050', 'Per run.')],
    examples: [
      {
        title: 'A slow sunrise',
        description: 'Takes about six seconds.',
        input: { prompt: 'orange sunrise', seed: 5 },
        output: { images: [png(512, 512)] },
        duration_ms: 6146,
        featured: true,
      },
    ],
    faq: [
      [
        'Why would I want a slow model?',
        'To see progress, timeouts and cancellation at work without waiting on a real model.',
      ],
    ],
    related: ['atelier/text-to-image', 'atelier/flaky'],
  },
  {
    slug: 'atelier/flaky',
    name: 'Atelier Flaky',
    description:
      'Fails about 30% of runs with MODEL_ERROR: for testing retries and failure handling.',
    category: 'text-to-image',
    creator: 'atelier-qa',
    family: 'atelier-testbench',
    variant: 'flaky',
    max_resolution: '256x256',
    features: ['Configurable failure rate', 'Fails at the inference stage'],
    content:
      '## Flaky\n\nFails with `MODEL_ERROR` at the `inference` stage at the given rate (30% by default); otherwise returns a 256×256 picture.',
    pricing_note: '0.001 credits per successful run.',
    inputs: [
      prompt(false, 'a flaky test pattern'),
      {
        name: 'failure_rate',
        display_name: 'Failure rate',
        description:
          'The probability of failing, 0 to 1. The sandbox setting (30% by default) when left out.',
        type: 'number',
        behavior: 'omit',
        validator: { code: 'range', attrs: { min: 0, max: 1 } },
      },
      seed,
    ],
    outputs: [imageOutput('A 256×256 PNG image.')],
    pricing: [perRun('0.0010', 'Per successful run.')],
    examples: [
      {
        title: 'A lucky run',
        description: 'This one succeeded.',
        input: { seed: 1 },
        output: { images: [png(256, 256)] },
        duration_ms: 200,
      },
    ],
    faq: [
      ['Am I charged for failed runs?', 'No: failed runs cost nothing.'],
      ['Can I make it always fail?', 'Yes: set failure_rate to 1 (or to 0 to never fail).'],
    ],
    related: ['atelier/slow-render', 'atelier/text-to-image'],
  },
]

// ---------------------------------------------------------------------------------------------
// Building the records

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

const stamps = { created_at: CATALOG_TIMESTAMP, updated_at: CATALOG_TIMESTAMP }

function buildModel(spec: ModelSpec): CatalogModel {
  const id = catalogId('model', spec.slug)
  const inputs: ModelInput[] = spec.inputs.map((input, index) => ({
    id: catalogId('input', spec.slug, input.name),
    model_id: id,
    name: input.name,
    display_name: input.display_name,
    description: input.description,
    variable_type_code: input.type,
    default_behavior_code: input.behavior,
    validator_code: input.validator?.code ?? null,
    validator_attrs: input.validator?.attrs ?? null,
    is_required: input.behavior === 'require',
    default_value: input.default ?? null,
    sort_order: index,
    is_featured: input.featured ?? false,
    ...stamps,
  }))
  const outputs: ModelOutput[] = spec.outputs.map((output, index) => ({
    id: catalogId('output', spec.slug, output.name),
    model_id: id,
    name: output.name,
    display_name: output.display_name,
    description: output.description,
    variable_type_code: output.type,
    validator_code: output.validator?.code ?? null,
    validator_attrs: output.validator?.attrs ?? null,
    sort_order: index,
    ...stamps,
  }))
  const pricing: ModelPricing[] = spec.pricing.map((rule, index) => {
    const input = rule.input === undefined ? undefined : inputs.find((i) => i.name === rule.input)
    if (rule.input !== undefined && !input) {
      throw new Error(`${spec.slug}: pricing rule ${index} names an unknown input ${rule.input}`)
    }
    return {
      id: catalogId('pricing', spec.slug, index),
      model_id: id,
      pricing_model_code: rule.model,
      rule_effect_code: rule.effect,
      model_input_id: input?.id ?? null,
      match_value: rule.match ?? null,
      dimension_code: rule.dimension,
      min_value: null,
      max_value: null,
      price: rule.price,
      currency_code: 'credits',
      unit_code: rule.unit,
      multiplier_label: rule.label ?? null,
      description: rule.description,
      sort_order: index,
      disabled_at: null,
      measurement_source: rule.source,
      ...stamps,
    }
  })
  const model: CatalogModel = {
    id,
    org_id: null,
    model_creator_id: catalogId('creator', spec.creator),
    slug: spec.slug,
    name: spec.name,
    description: spec.description,
    version: '1.0.0',
    is_public: true,
    is_open_source: true,
    icon_url: null,
    cover_url: null,
    category_code: spec.category,
    status_code: 'active',
    family_id: catalogId('family', spec.family),
    family_variant_code: spec.variant,
    param_count: null,
    architecture: 'procedural (sharp/libvips)',
    license_code: 'mit',
    max_resolution: spec.max_resolution,
    lora_support: false,
    fine_tuning: false,
    supports_streaming: false,
    paper_url: null,
    github_url: null,
    is_official: true,
    availability_status: 'available',
    seo: { title: `${spec.name} | Atelier sandbox`, description: spec.description },
    notable_features: spec.features,
    content: spec.content,
    pricing_note: spec.pricing_note,
    created_by: null,
    ...stamps,
    deleted_at: null,
    deleted_by: null,
    inputs,
    outputs,
    examples: [],
    faq_entries: spec.faq.map(([question, answer], index) => ({
      id: catalogId('faq', spec.slug, index),
      model_id: id,
      question,
      answer,
      sort_order: index,
      ...stamps,
    })),
    pricing,
    related_links: spec.related.map((related, index) => ({
      id: catalogId('related', spec.slug, related),
      model_id: id,
      related_model_id: catalogId('model', related),
      sort_order: index,
      created_at: CATALOG_TIMESTAMP,
    })),
  }
  model.examples = spec.examples.map((example, index): ModelExample => ({
    id: catalogId('example', spec.slug, index),
    model_id: id,
    title: example.title,
    description: example.description,
    input: example.input,
    output: example.output,
    status_code: 200,
    cost: estimateCost(model, example.input).cost,
    start_type: 'warm',
    timing: { queue_ms: 12, inference_ms: example.duration_ms },
    duration_ms: example.duration_ms,
    total_ms: example.duration_ms + 12,
    thumbnail_url: null,
    category_code: spec.category,
    is_featured: example.featured ?? false,
    is_public: true,
    sort_order: index,
    ran_at: CATALOG_TIMESTAMP,
    ...stamps,
  }))
  return model
}

/** The sandbox's models, with their inputs, outputs, examples, FAQ, pricing and related links. */
export const MODEL_CATALOG: readonly CatalogModel[] = deepFreeze(MODEL_SPECS.map(buildModel))

const BY_KEY = new Map<string, CatalogModel>(
  MODEL_CATALOG.flatMap((model) => [
    [model.slug, model],
    [model.id, model],
  ]),
)

/** A catalog model by `provider/model` slug (or by id), or undefined. */
export function findModel(slugOrId: string): CatalogModel | undefined {
  return BY_KEY.get(slugOrId) ?? BY_KEY.get(slugOrId.toLowerCase())
}

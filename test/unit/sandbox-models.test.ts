import sharp from 'sharp'
import { describe, expect, it, vi } from 'vitest'
import type { Model } from '../../src-shared/api'
import {
  CATALOGS,
  MODEL_CATALOG,
  MODEL_CREATORS,
  MODEL_FAMILIES,
  decimalToMicro,
  estimateCost,
  findModel,
  microToDecimal,
  priceRun,
  runModel,
  uuidV5,
  validateInput,
  type CatalogModel,
  type CatalogName,
  type ModelFailure,
  type ModelResult,
  type ModelSuccess,
  type RunOptions,
} from '../../src-main/sandbox/models'
import { contractErrors } from '../helpers/contract-schema'

const SLUGS = [
  'atelier/text-to-image',
  'atelier/image-to-image',
  'atelier/upscale',
  'atelier/remove-background',
  'atelier/caption',
  'atelier/text-to-video',
  'atelier/slow-render',
  'atelier/flaky',
]

const RFC4122 = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

function model(slug: string): CatalogModel {
  const found = findModel(slug)
  if (!found) throw new Error(`no model ${slug}`)
  return found
}

function succeeded(result: ModelResult): ModelSuccess {
  if (!result.ok) throw new Error(`run failed: ${result.failure_code}: ${result.failure_message}`)
  return result
}

function failed(result: ModelResult): ModelFailure {
  if (result.ok) throw new Error('run succeeded, expected a failure')
  return result
}

function file(result: ModelResult, index = 0): Buffer {
  const found = succeeded(result).files[index]
  if (!found) throw new Error(`no file ${index}`)
  return found.bytes
}

const dataUrl = (bytes: Buffer, type = 'image/png'): string =>
  `data:${type};base64,${bytes.toString('base64')}`

/** A seeded random source (mulberry32), so rate tests are reproducible. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A plain backdrop with a square subject in the middle. */
async function subjectOnBackdrop(width: number, height: number): Promise<Buffer> {
  const subject = await sharp({
    create: { width: width / 2, height: height / 2, channels: 3, background: '#1e3cc8' },
  })
    .png()
    .toBuffer()
  return sharp({ create: { width, height, channels: 3, background: '#f4f1ea' } })
    .composite([{ input: subject, left: width / 4, top: height / 4 }])
    .png()
    .toBuffer()
}

async function alphaAt(png: Buffer, x: number, y: number): Promise<number> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return data[(y * info.width + x) * 4 + 3] ?? -1
}

const OPTIONS: RunOptions = { seed: 1234 }

describe('the model catalog', () => {
  it('has the eight sandbox models, addressed by provider/model slugs', () => {
    expect(MODEL_CATALOG.map((m) => m.slug)).toEqual(SLUGS)
    for (const slug of SLUGS) expect(findModel(slug)?.slug).toBe(slug)
    expect(findModel('atelier/nope')).toBeUndefined()
    expect(findModel(model('atelier/upscale').id)?.slug).toBe('atelier/upscale')
  })

  it('conforms to the contract: Model, ModelCreator, ModelFamily and ReferenceRecord', () => {
    for (const record of MODEL_CATALOG) {
      expect(contractErrors('Model', record), record.slug).toEqual([])
      for (const input of record.inputs) expect(contractErrors('ModelInput', input)).toEqual([])
      for (const output of record.outputs) expect(contractErrors('ModelOutput', output)).toEqual([])
      for (const example of record.examples)
        expect(contractErrors('ModelExample', example)).toEqual([])
      for (const entry of record.faq_entries)
        expect(contractErrors('ModelFaqEntry', entry)).toEqual([])
      for (const rule of record.pricing) expect(contractErrors('ModelPricing', rule)).toEqual([])
      for (const link of record.related_links)
        expect(contractErrors('ModelRelatedLink', link)).toEqual([])
      expect(record.inputs.length).toBeGreaterThan(0)
      expect(record.outputs.length).toBeGreaterThan(0)
      expect(record.examples.length).toBeGreaterThan(0)
      expect(record.faq_entries.length).toBeGreaterThan(0)
      expect(record.pricing.length).toBeGreaterThan(0)
      expect(record.related_links.length).toBeGreaterThan(0)
    }
    for (const creator of MODEL_CREATORS)
      expect(contractErrors('ModelCreator', creator)).toEqual([])
    for (const family of MODEL_FAMILIES) expect(contractErrors('ModelFamily', family)).toEqual([])
    for (const records of Object.values(CATALOGS)) {
      for (const record of records) expect(contractErrors('ReferenceRecord', record)).toEqual([])
    }
  })

  it('the contract helper reports what does not conform', () => {
    const broken = { ...model('atelier/caption'), id: 'not-a-uuid', slug: 'no-slash' }
    expect(contractErrors('Model', broken)).toEqual(
      expect.arrayContaining([expect.stringContaining('/id'), expect.stringContaining('/slug')]),
    )
  })

  it('uses valid, unique, name-based UUIDs that are stable across restarts', async () => {
    // RFC 4122 appendix-style check of the name-based (v5) hash itself.
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    )
    const ids: string[] = [
      ...MODEL_CREATORS.map((c) => c.id),
      ...MODEL_FAMILIES.map((f) => f.id),
      ...MODEL_CATALOG.flatMap((m) => [
        m.id,
        ...m.inputs.map((x) => x.id),
        ...m.outputs.map((x) => x.id),
        ...m.examples.map((x) => x.id),
        ...m.faq_entries.map((x) => x.id),
        ...m.pricing.map((x) => x.id),
        ...m.related_links.map((x) => x.id),
      ]),
    ]
    for (const id of ids) expect(id).toMatch(RFC4122)
    expect(new Set(ids).size).toBe(ids.length)
    // Pinned: changing how ids are derived would orphan stored records.
    expect(model('atelier/text-to-image').id).toBe('87666752-bae5-5314-b7c1-b32895cab37b')

    vi.resetModules()
    const fresh = (await import('../../src-main/sandbox/models')) as {
      MODEL_CATALOG: readonly Model[]
    }
    expect(JSON.stringify(fresh.MODEL_CATALOG)).toBe(JSON.stringify(MODEL_CATALOG))
    for (const record of MODEL_CATALOG) expect(record.created_at).toBe(record.updated_at)
  })

  it('links creators, families, related models and input-bound pricing rules consistently', () => {
    const creatorIds = new Set(MODEL_CREATORS.map((c) => c.id))
    const familyIds = new Set(MODEL_FAMILIES.map((f) => f.id))
    const modelIds = new Set(MODEL_CATALOG.map((m) => m.id))
    for (const family of MODEL_FAMILIES) expect(creatorIds).toContain(family.model_creator_id)
    for (const record of MODEL_CATALOG) {
      expect(creatorIds).toContain(record.model_creator_id)
      expect(familyIds).toContain(record.family_id)
      const family = MODEL_FAMILIES.find((f) => f.id === record.family_id)
      expect(family?.model_creator_id).toBe(record.model_creator_id)
      for (const child of [...record.inputs, ...record.outputs, ...record.pricing]) {
        expect(child.model_id).toBe(record.id)
      }
      for (const link of record.related_links) {
        expect(modelIds).toContain(link.related_model_id)
        expect(link.related_model_id).not.toBe(record.id)
      }
      const inputIds = new Set(record.inputs.map((i) => i.id))
      for (const rule of record.pricing) {
        if (rule.model_input_id !== null) expect(inputIds).toContain(rule.model_input_id)
        expect(rule.currency_code).toBe('credits')
        expect(() => decimalToMicro(rule.price)).not.toThrow()
      }
      const names = record.inputs.map((i) => i.name)
      expect(new Set(names).size).toBe(names.length)
      for (const input of record.inputs) {
        expect(input.is_required).toBe(input.default_behavior_code === 'require')
      }
    }
  })

  it('uses exactly the codes of its CATALOGS, and every catalog code is used', () => {
    const used: Record<CatalogName, Set<string>> = {
      'variable-types': new Set(),
      validators: new Set(),
      units: new Set(),
      'pricing-dimensions': new Set(),
      'rule-effects': new Set(),
      'model-types': new Set(),
      'variable-behaviors': new Set(),
    }
    const add = (catalog: CatalogName, code: string | null): void => {
      if (code !== null) used[catalog].add(code)
    }
    for (const record of MODEL_CATALOG) {
      add('model-types', record.category_code)
      for (const input of record.inputs) {
        add('variable-types', input.variable_type_code)
        add('validators', input.validator_code)
        add('variable-behaviors', input.default_behavior_code)
      }
      for (const output of record.outputs) {
        add('variable-types', output.variable_type_code)
        add('validators', output.validator_code)
      }
      for (const rule of record.pricing) {
        add('units', rule.unit_code)
        add('pricing-dimensions', rule.dimension_code)
        add('rule-effects', rule.rule_effect_code)
      }
    }
    for (const [catalog, codes] of Object.entries(used) as [CatalogName, Set<string>][]) {
      const listed = CATALOGS[catalog].map((record) => record.code)
      expect(new Set(listed).size, catalog).toBe(listed.length)
      expect([...codes].sort(), catalog).toEqual([...listed].sort())
      expect(CATALOGS[catalog].map((record) => record.sort_order)).toEqual(
        listed.map((_, index) => index),
      )
    }
  })

  it('is frozen, so the server cannot corrupt it by accident', () => {
    const record = model('atelier/text-to-image')
    expect(Object.isFrozen(record)).toBe(true)
    expect(Object.isFrozen(record.inputs[0])).toBe(true)
    expect(() => {
      ;(record as { name: string }).name = 'changed'
    }).toThrow(TypeError)
  })

  it('prices its examples as estimateCost does', () => {
    for (const record of MODEL_CATALOG) {
      for (const example of record.examples) {
        expect(example.cost).toBe(estimateCost(record, example.input).cost)
      }
    }
  })
})

describe('validateInput', () => {
  const t2i = model('atelier/text-to-image')

  it('applies defaults and leaves randomized or omitted inputs out', () => {
    const { input, problems } = validateInput(t2i, { prompt: 'a red fox' })
    expect(problems).toEqual([])
    expect(input).toEqual({
      prompt: 'a red fox',
      width: 512,
      height: 512,
      style: 'abstract',
      num_images: 1,
    })
    expect(validateInput(t2i, { prompt: 'x', width: null, seed: 9 }).input).toMatchObject({
      width: 512,
      seed: 9,
    })
  })

  it('reports missing required inputs', () => {
    const { problems } = validateInput(t2i, {})
    expect(problems).toEqual([
      { field: 'prompt', code: 'required', message: expect.stringContaining('Prompt') as string },
    ])
    expect(validateInput(t2i, undefined).problems.map((p) => p.code)).toEqual(['required'])
  })

  it('rejects unknown input names, naming the known ones', () => {
    const { problems } = validateInput(t2i, { prompt: 'x', colour: 'red' })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatchObject({ field: 'colour', code: 'unknown' })
    expect(problems[0]?.message).toContain('negative_prompt')
  })

  it('checks ranges, lengths, enums and patterns', () => {
    const problems = (m: Model, input: unknown): [string, string][] =>
      validateInput(m, input).problems.map((p) => [p.field, p.code])
    expect(problems(t2i, { prompt: 'x', width: 4096, height: 32 })).toEqual([
      ['width', 'range'],
      ['height', 'range'],
    ])
    expect(problems(t2i, { prompt: '' })).toEqual([['prompt', 'length']])
    expect(problems(t2i, { prompt: 'x'.repeat(2001) })).toEqual([['prompt', 'length']])
    expect(problems(t2i, { prompt: 'x', style: 'baroque' })).toEqual([['style', 'enum']])
    expect(problems(model('atelier/upscale'), { image: 'data:,', scale: 3 })).toEqual([
      ['scale', 'enum'],
    ])
    const i2i = model('atelier/image-to-image')
    expect(problems(i2i, { image: 'data:,', tint: '#12345' })).toEqual([['tint', 'pattern']])
    expect(problems(i2i, { image: 'data:,', tint: '#a1b2c3', strength: 1.5 })).toEqual([
      ['strength', 'range'],
    ])
    expect(problems(t2i, { prompt: 'x', seed: 2 ** 32 })).toEqual([['seed', 'range']])
    const message = validateInput(t2i, { prompt: 'x', width: 4096 }).problems[0]?.message
    expect(message).toBe('Width must be between 64 and 2048, but it is 4096.')
  })

  it('checks types', () => {
    const problems = (m: Model, input: unknown): [string, string][] =>
      validateInput(m, input).problems.map((p) => [p.field, p.code])
    expect(
      problems(t2i, { prompt: 42, width: '512', height: 512.5, num_images: true, seed: -1 }),
    ).toEqual([
      ['prompt', 'type'],
      ['width', 'type'],
      ['height', 'type'],
      ['num_images', 'type'],
      ['seed', 'type'],
    ])
    expect(problems(model('atelier/remove-background'), { image: '', feather: 'yes' })).toEqual([
      ['image', 'type'],
      ['feather', 'type'],
    ])
    expect(
      problems(model('atelier/text-to-video'), { prompt: 'x', duration_seconds: 'long' }),
    ).toEqual([['duration_seconds', 'type']])
    expect(validateInput(t2i, ['prompt']).problems).toEqual([
      { field: 'input', code: 'type', message: expect.stringContaining('object') as string },
    ])
    expect(validateInput(t2i, { prompt: 42 }).problems[0]?.message).toBe(
      'Prompt must be text, but it is 42.',
    )
  })

  it('leaves image_size to the run, which checks it once the image is loaded', async () => {
    const wide = await sharp({
      create: { width: 1100, height: 16, channels: 3, background: '#808080' },
    })
      .png()
      .toBuffer()
    const upscale = model('atelier/upscale')
    expect(validateInput(upscale, { image: dataUrl(wide) }).problems).toEqual([])
    const result = failed(await runModel(upscale.slug, { image: dataUrl(wide) }, OPTIONS))
    expect(result).toMatchObject({
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
    })
    expect(result.failure_message).toContain('1100×16')
  })
})

describe('runModel', () => {
  it('makes deterministic PNGs: same input and seed give the same bytes', async () => {
    const input = { prompt: 'a teal lighthouse', width: 320, height: 200 }
    const first = file(await runModel('atelier/text-to-image', input, OPTIONS))
    const again = file(await runModel('atelier/text-to-image', { ...input }, { seed: 1234 }))
    expect(again.equals(first)).toBe(true)
    const otherSeed = file(await runModel('atelier/text-to-image', input, { seed: 1235 }))
    expect(otherSeed.equals(first)).toBe(false)
    const otherPrompt = file(
      await runModel('atelier/text-to-image', { ...input, prompt: 'a teal lighthouse!' }, OPTIONS),
    )
    expect(otherPrompt.equals(first)).toBe(false)
    const metadata = await sharp(first).metadata()
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['png', 320, 200])
    // An explicit seed input overrides the run's seed.
    const pinned = file(
      await runModel('atelier/text-to-image', { ...input, seed: 1234 }, { seed: 99 }),
    )
    expect(pinned.equals(first)).toBe(true)
  })

  it('renders every style, and several images per run', async () => {
    const seen: Buffer[] = []
    for (const style of ['abstract', 'geometric', 'gradient', 'studio']) {
      const result = succeeded(
        await runModel('atelier/text-to-image', { prompt: 'x', style, width: 96 }, OPTIONS),
      )
      const bytes = file(result)
      expect(seen.some((other) => other.equals(bytes))).toBe(false)
      seen.push(bytes)
      expect(result.files[0]).toMatchObject({ content_type: 'image/png', width: 96, height: 512 })
    }
    const many = succeeded(
      await runModel(
        'atelier/text-to-image',
        { prompt: 'x', num_images: 3, width: 64, height: 64 },
        OPTIONS,
      ),
    )
    expect(many.files).toHaveLength(3)
    expect(new Set(many.files.map((f) => f.bytes.toString('base64'))).size).toBe(3)
    expect(many.metrics.megapixels).toBeCloseTo((3 * 64 * 64) / 1e6, 12)
  })

  it('reports logs, metrics and a nominal latency', async () => {
    const result = succeeded(await runModel('atelier/text-to-image', { prompt: 'x' }, OPTIONS))
    expect(result.metrics).toEqual({ megapixels: 0.262144 })
    expect(result.workMs).toBeGreaterThan(0)
    expect(result.logs.length).toBeGreaterThan(0)
    for (const log of result.logs)
      expect(['debug', 'info', 'warning', 'error']).toContain(log.level_code)
    expect(result.logs.map((l) => l.message).join('\n')).toContain('seed 1234')
  })

  it('image-to-image transforms an input image and keeps its size', async () => {
    const source = file(
      await runModel(
        'atelier/text-to-image',
        { prompt: 'green hills', width: 200, height: 120 },
        OPTIONS,
      ),
    )
    const input = { image: dataUrl(source), prompt: 'gold light', strength: 0.7 }
    const out = file(await runModel('atelier/image-to-image', input, OPTIONS))
    const metadata = await sharp(out).metadata()
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['png', 200, 120])
    expect(out.equals(source)).toBe(false)
    expect(file(await runModel('atelier/image-to-image', input, OPTIONS)).equals(out)).toBe(true)
    const tinted = file(
      await runModel('atelier/image-to-image', { ...input, tint: '#ff00ff' }, OPTIONS),
    )
    expect(tinted.equals(out)).toBe(false)
  })

  it('upscale enlarges 2× and 4×, keeping transparency', async () => {
    const source = file(
      await runModel('atelier/text-to-image', { prompt: 'x', width: 96, height: 64 }, OPTIONS),
    )
    for (const scale of [2, 4]) {
      const result = succeeded(
        await runModel('atelier/upscale', { image: dataUrl(source), scale }, OPTIONS),
      )
      expect(result.files[0]).toMatchObject({ width: 96 * scale, height: 64 * scale })
      const metadata = await sharp(file(result)).metadata()
      expect([metadata.width, metadata.height, metadata.hasAlpha]).toEqual([
        96 * scale,
        64 * scale,
        false,
      ])
    }
    const cutout = file(
      await runModel(
        'atelier/remove-background',
        { image: dataUrl(await subjectOnBackdrop(64, 64)) },
        OPTIONS,
      ),
    )
    const up = file(await runModel('atelier/upscale', { image: dataUrl(cutout) }, OPTIONS))
    expect((await sharp(up).metadata()).hasAlpha).toBe(true)
  })

  it('remove-background clears the backdrop and keeps the subject', async () => {
    const source = await subjectOnBackdrop(120, 80)
    const result = succeeded(
      await runModel('atelier/remove-background', { image: dataUrl(source) }, OPTIONS),
    )
    const out = file(result)
    const metadata = await sharp(out).metadata()
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['png', 120, 80])
    expect([metadata.channels, metadata.hasAlpha]).toEqual([4, true])
    expect(await alphaAt(out, 2, 2)).toBe(0)
    expect(await alphaAt(out, 117, 77)).toBe(0)
    expect(await alphaAt(out, 60, 40)).toBe(255)
    // And on a generated studio shot.
    const studio = file(
      await runModel(
        'atelier/text-to-image',
        { prompt: 'red ball', style: 'studio', width: 128, height: 128 },
        OPTIONS,
      ),
    )
    const cut = file(
      await runModel('atelier/remove-background', { image: dataUrl(studio) }, OPTIONS),
    )
    expect(await alphaAt(cut, 0, 0)).toBe(0)
    expect(await alphaAt(cut, 64, 64)).toBe(255)
  })

  it('caption names the dominant colour, the size and the orientation', async () => {
    const red = await sharp({
      create: { width: 300, height: 200, channels: 3, background: { r: 200, g: 30, b: 40 } },
    })
      .png()
      .toBuffer()
    const result = succeeded(await runModel('atelier/caption', { image: dataUrl(red) }, OPTIONS))
    expect(result.files).toEqual([])
    expect(result.text).toBe('A landscape 300×200 image dominated by red tones.')
    const detailed = succeeded(
      await runModel('atelier/caption', { image: dataUrl(red), detail: 'detailed' }, OPTIONS),
    )
    expect(detailed.text).toMatch(/^A landscape 300×200 image dominated by red tones\. .+/)
    for (const colour of ['blue', 'green', 'yellow', 'purple']) {
      const picture = file(
        await runModel(
          'atelier/text-to-image',
          { prompt: `a ${colour} field`, width: 96, height: 160 },
          OPTIONS,
        ),
      )
      const caption = succeeded(
        await runModel('atelier/caption', { image: dataUrl(picture) }, OPTIONS),
      )
      expect(caption.text).toBe(`A portrait 96×160 image dominated by ${colour} tones.`)
    }
  })

  it('text-to-video makes an animated image with several frames', async () => {
    const result = succeeded(
      await runModel(
        'atelier/text-to-video',
        { prompt: 'blue waves', width: 96, height: 64 },
        OPTIONS,
      ),
    )
    const video = result.files[0]
    expect(video).toMatchObject({
      output: 'video',
      content_type: 'image/webp',
      width: 96,
      height: 64,
      frames: 8,
      duration_ms: 1000,
    })
    const metadata = await sharp(file(result), { animated: true }).metadata()
    expect(metadata.format).toBe('webp')
    expect(metadata.pages).toBe(8)
    expect(metadata.width).toBe(96)
    expect(metadata.delay?.reduce((a, b) => a + b, 0)).toBe(1000)
    expect(result.metrics.seconds).toBe(1)
    const again = file(
      await runModel(
        'atelier/text-to-video',
        { prompt: 'blue waves', width: 96, height: 64 },
        OPTIONS,
      ),
    )
    expect(again.equals(file(result))).toBe(true)

    const gif = succeeded(
      await runModel(
        'atelier/text-to-video',
        { prompt: 'x', width: 64, height: 64, fps: 4, duration_seconds: 0.5, format: 'gif' },
        OPTIONS,
      ),
    )
    expect(gif.files[0]).toMatchObject({ content_type: 'image/gif', frames: 2, duration_ms: 500 })
    const gifMetadata = await sharp(file(gif)).metadata()
    expect([gifMetadata.format, gifMetadata.pages]).toEqual(['gif', 2])
  })

  it('slow-render makes the same pictures as text-to-image, ten times slower', async () => {
    const input = { prompt: 'orange dawn', width: 128, height: 128 }
    const fast = succeeded(await runModel('atelier/text-to-image', input, OPTIONS))
    const slow = succeeded(await runModel('atelier/slow-render', input, OPTIONS))
    expect(file(slow).equals(file(fast))).toBe(true)
    expect(slow.workMs).toBe(fast.workMs * 10)
  })

  it('flaky fails at about the configured rate, with MODEL_ERROR at inference', async () => {
    const random = seeded(42)
    let failures = 0
    const runs = 100
    const results = await Promise.all(
      Array.from({ length: runs }, (_, i) =>
        runModel('atelier/flaky', {}, { seed: i, failureRate: 0.3, random }),
      ),
    )
    for (const result of results) {
      if (!result.ok) {
        failures++
        expect(result).toMatchObject({ failure_code: 'MODEL_ERROR', failure_stage: 'inference' })
        expect(result.logs.some((log) => log.level_code === 'error')).toBe(true)
      }
    }
    expect(failures / runs).toBeGreaterThan(0.2)
    expect(failures / runs).toBeLessThan(0.4)
    // Default rate 0.3; the failure_rate input overrides it.
    expect((await runModel('atelier/flaky', {}, { seed: 1, random: () => 0.29 })).ok).toBe(false)
    expect((await runModel('atelier/flaky', {}, { seed: 1, random: () => 0.31 })).ok).toBe(true)
    expect(
      (await runModel('atelier/flaky', { failure_rate: 0 }, { seed: 1, random: () => 0 })).ok,
    ).toBe(true)
    expect(
      (
        await runModel(
          'atelier/flaky',
          { failure_rate: 1 },
          { seed: 1, failureRate: 0, random: () => 0.99 },
        )
      ).ok,
    ).toBe(false)
  })

  it('loads non-data: images through fetchImage and fails cleanly when it cannot', async () => {
    const png = await subjectOnBackdrop(32, 32)
    const fetchImage = vi.fn((_ref: string) => Promise.resolve(png))
    const fetched = succeeded(
      await runModel('atelier/caption', { image: 'asset-123' }, { seed: 1, fetchImage }),
    )
    expect(fetchImage).toHaveBeenCalledWith('asset-123')
    expect(fetched.text).toContain('32×32')

    const noFetcher = failed(
      await runModel('atelier/caption', { image: 'https://x/y.png' }, OPTIONS),
    )
    expect(noFetcher).toMatchObject({
      failure_code: 'INPUT_FETCH_FAILED',
      failure_stage: 'preprocess',
    })
    const rejecting = failed(
      await runModel(
        'atelier/caption',
        { image: 'asset-404' },
        {
          seed: 1,
          fetchImage: () => Promise.reject(new Error('asset not found')),
        },
      ),
    )
    expect(rejecting.failure_code).toBe('INPUT_FETCH_FAILED')
    expect(rejecting.failure_message).toContain('asset not found')
    const garbage = failed(
      await runModel('atelier/upscale', { image: dataUrl(Buffer.from('not an image')) }, OPTIONS),
    )
    expect(garbage).toMatchObject({
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
    })
  })

  it('fails invalid input at preprocess and unknown models as unavailable', async () => {
    const invalid = failed(
      await runModel('atelier/text-to-image', { width: 9999, bogus: true }, OPTIONS),
    )
    expect(invalid).toMatchObject({
      failure_code: 'INPUT_VALIDATION_FAILED',
      failure_stage: 'preprocess',
    })
    expect(invalid.failure_message).toContain('Prompt is required.')
    expect(invalid.failure_message).toContain('bogus')
    expect(invalid.failure_message).toContain('Width must be between 64 and 2048')
    const unknown = failed(await runModel('atelier/nope', {}, OPTIONS))
    expect(unknown.failure_code).toBe('MODEL_UNAVAILABLE')
  })

  it('generates a 512×512 image well within 100 ms', async () => {
    await runModel('atelier/text-to-image', { prompt: 'warm-up' }, OPTIONS)
    const times: number[] = []
    for (let seed = 0; seed < 5; seed++) {
      const started = performance.now()
      succeeded(await runModel('atelier/text-to-image', { prompt: 'timing' }, { seed }))
      times.push(performance.now() - started)
    }
    times.sort((a, b) => a - b)
    // Generous bound for loaded CI machines; typically 20 to 40 ms.
    expect(times[2]).toBeLessThan(150)
  })
})

describe('pricing', () => {
  const run = async (slug: string, input: Record<string, unknown>): Promise<ModelResult> =>
    runModel(slug, input, OPTIONS)

  it('per run: a fixed price', async () => {
    const m = model('atelier/image-to-image')
    const source = await subjectOnBackdrop(32, 32)
    const input = { image: dataUrl(source) }
    const result = await run(m.slug, input)
    expect(priceRun(m, input, result)).toEqual({ cost: '0.0150', micro: 15_000 })
    expect(estimateCost(m, input)).toEqual({ cost: '0.0150', micro: 15_000 })
  })

  it('per run with a multiplier rule tied to an input value', async () => {
    const m = model('atelier/upscale')
    const input = { image: dataUrl(await subjectOnBackdrop(16, 16)), scale: 4 }
    expect(priceRun(m, input, await run(m.slug, input))).toEqual({ cost: '0.0250', micro: 25_000 })
    expect(estimateCost(m, { ...input, scale: 2 })).toEqual({ cost: '0.0100', micro: 10_000 })
  })

  it('per megapixel: price × output megapixels, with a minimum', async () => {
    const m = model('atelier/text-to-image')
    const cases: [Record<string, unknown>, number][] = [
      // 0.04 × 1.048576 = 0.04194304 → 41943 micro-credits
      [{ prompt: 'x', width: 1024, height: 1024 }, 41_943],
      // 0.04 × 0.262144 = 0.01048576
      [{ prompt: 'x' }, 10_486],
      // 0.04 × 2 × 0.0768 = 0.006144
      [{ prompt: 'x', width: 320, height: 240, num_images: 2 }, 6_144],
      // 0.04 × 0.004096 = 0.00016384, raised to the 0.005 minimum
      [{ prompt: 'x', width: 64, height: 64 }, 5_000],
    ]
    for (const [input, micro] of cases) {
      const result = await run(m.slug, input)
      expect(priceRun(m, input, result).micro).toBe(micro)
      expect(estimateCost(m, input).micro).toBe(micro)
    }
    expect(priceRun(m, { prompt: 'x' }, await run(m.slug, { prompt: 'x' })).cost).toBe('0.010486')
    expect(estimateCost(m, { prompt: 'x', width: 1000, height: 1000 }).cost).toBe('0.0400')
  })

  it('per second: price × video seconds, plus the per-run price', async () => {
    const m = model('atelier/text-to-video')
    const input = { prompt: 'x', width: 64, height: 64, fps: 8, duration_seconds: 2 }
    const result = succeeded(await run(m.slug, input))
    expect(result.files[0]?.duration_ms).toBe(2000)
    // 0.01 + 0.05 × 2
    expect(priceRun(m, input, result)).toEqual({ cost: '0.1100', micro: 110_000 })
    expect(estimateCost(m, input)).toEqual({ cost: '0.1100', micro: 110_000 })
    // GIF delays are whole centiseconds: 4 frames of 130 ms at 8 fps → 0.52 s.
    const gif = { ...input, duration_seconds: 0.5, format: 'gif' }
    const gifResult = succeeded(await run(m.slug, gif))
    expect(gifResult.files[0]?.duration_ms).toBe(520)
    expect(priceRun(m, gif, gifResult)).toEqual({ cost: '0.0360', micro: 36_000 })
    expect(estimateCost(m, gif).micro).toBe(36_000)
  })

  it('failed runs cost nothing', async () => {
    const m = model('atelier/flaky')
    const result = await runModel(m.slug, { failure_rate: 1 }, OPTIONS)
    expect(priceRun(m, { failure_rate: 1 }, result)).toEqual({ cost: '0.0000', micro: 0 })
  })

  it('converts decimals and micro-credits exactly', () => {
    expect(decimalToMicro('0.0400')).toBe(40_000)
    expect(decimalToMicro('2.5')).toBe(2_500_000)
    expect(decimalToMicro('.5')).toBe(500_000)
    expect(decimalToMicro('0.0000005')).toBe(1)
    expect(() => decimalToMicro('abc')).toThrow()
    expect(microToDecimal(40_000)).toBe('0.0400')
    expect(microToDecimal(10_486)).toBe('0.010486')
    expect(microToDecimal(2_500_000)).toBe('2.5000')
    expect(microToDecimal(0)).toBe('0.0000')
    for (const micro of [1, 999, 123_456, 7_000_001]) {
      expect(decimalToMicro(microToDecimal(micro))).toBe(micro)
    }
  })
})

import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import {
  analyseImage,
  cuesOf,
  runJudges,
  type JudgeContext,
} from '../../src-main/sandbox/evaluations'

function svg(width: number, height: number, body: string): Promise<Buffer> {
  return sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${String(width)}" height="${String(height)}">${body}</svg>`,
    ),
  )
    .png()
    .toBuffer()
}

const scene = () =>
  svg(
    640,
    480,
    `<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
       <stop offset="0" stop-color="#3a6ea5"/><stop offset="1" stop-color="#c0d8ee"/>
     </linearGradient></defs>
     <rect width="100%" height="100%" fill="url(#sky)"/>
     <circle cx="256" cy="216" r="96" fill="#f2c230"/>
     <rect x="0" y="400" width="640" height="80" fill="#2e7d32"/>`,
  )

function context(overrides: Partial<JudgeContext> = {}): JudgeContext {
  const texts = overrides.texts ?? []
  return {
    jobClass: 'standard',
    texts,
    cues: cuesOf(...texts),
    requested: { width: null, height: null, aspectRatio: null },
    references: [],
    ...overrides,
  }
}

describe('prompt cues', () => {
  it('finds colours, brightness, black and white, orientation and detail, each once', () => {
    const cues = cuesOf(
      'A minimal, dark 9:16 poster: a red fox, red leaves, no blue, black and white',
    )
    expect(cues).toEqual([
      { kind: 'monochrome', word: 'black and white' },
      { kind: 'orientation', word: '9:16', want: 'portrait' },
      { kind: 'detail', word: 'minimal', want: 'minimal' },
      { kind: 'brightness', word: 'dark', want: 'dark' },
      { kind: 'colour', word: 'red', names: ['red'], present: true },
      { kind: 'colour', word: 'blue', names: ['blue'], present: false },
    ])
  })

  it('reads negation only right before the word, and shapes are not orientations', () => {
    expect(cuesOf('a dog with no collar, red ball, a square box')).toEqual([
      { kind: 'colour', word: 'red', names: ['red'], present: true },
    ])
    expect(cuesOf('without any green').map((c) => c.kind === 'colour' && c.present)).toEqual([
      false,
    ])
    expect(cuesOf('a square image', 'landscape orientation, horizontal')).toEqual([
      { kind: 'orientation', word: 'square image', want: 'square' },
      { kind: 'orientation', word: 'landscape orientation', want: 'landscape' },
    ])
    expect(cuesOf('a cat on a sofa')).toEqual([])
  })
})

describe('measuring an image', () => {
  it('rejects what is not a raster image as invalid_media', async () => {
    await expect(analyseImage(Buffer.from('just some text'))).rejects.toMatchObject({
      code: 'invalid_media',
      message: expect.stringMatching(/not an image/),
    })
    const vector = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
    )
    await expect(analyseImage(vector)).rejects.toMatchObject({
      code: 'invalid_media',
      message: expect.stringMatching(/vector/),
    })
    const png = await scene()
    await expect(analyseImage(png.subarray(0, png.length / 2))).rejects.toMatchObject({
      code: 'invalid_media',
    })
  })

  it('measures size, brightness, colour and crisp edges', async () => {
    const bytes = await scene()
    const facts = await analyseImage(bytes)
    expect(facts).toMatchObject({ format: 'png', width: 640, height: 480, sizeBytes: bytes.length })
    expect(facts.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(facts.sharpness).toBeGreaterThan(0.9)
    expect(facts.colourShares.blue).toBeGreaterThan(0.6)
    expect(facts.colourShares.yellow).toBeGreaterThan(0.08)
    expect(facts.palette[0]).toEqual({ hex: '#2e7d32', name: 'green', share: expect.any(Number) })
    expect(facts.colourHistogram.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6)
  })

  it('tells blurred from sharp, and sees edges between colours of equal lightness', async () => {
    const sharpFacts = await analyseImage(await scene())
    const soft = await analyseImage(
      await sharp(await scene())
        .blur(4)
        .png()
        .toBuffer(),
    )
    expect(soft.sharpness).toBeLessThan(0.45)
    expect(soft.sharpness).toBeLessThan(sharpFacts.sharpness ?? 0)
    // #3a6ea5 blue and #d23c3c red are about equally light.
    const isoluminant = await analyseImage(
      await svg(
        400,
        300,
        '<rect width="100%" height="100%" fill="#3a6ea5"/><circle cx="200" cy="150" r="80" fill="#d23c3c"/>',
      ),
    )
    expect(isoluminant.contrast).toBeLessThan(0.03)
    expect(isoluminant.colourSpread).toBeGreaterThan(0.1)
    expect(isoluminant.sharpness).toBeGreaterThan(0.9)
  })

  it('finds clipped highlights and where they are, in the image’s own pixels', async () => {
    const facts = await analyseImage(
      await svg(
        1024,
        512,
        '<rect width="100%" height="100%" fill="#555"/><rect width="512" height="512" fill="#fff"/>',
      ),
    )
    expect(facts.highlightsClipped).toBeCloseTo(0.5, 2)
    // Measured at half size, so the box is exact to a pixel or two of resampling.
    expect(facts.highlightRegion).toMatchObject({ x: 0, y: 0, height: 512 })
    expect(facts.highlightRegion?.width).toBeGreaterThanOrEqual(508)
    expect(facts.highlightRegion?.width).toBeLessThanOrEqual(514)
    const blank = await analyseImage(
      await svg(300, 300, '<rect width="100%" height="100%" fill="#808080"/>'),
    )
    expect(blank).toMatchObject({ colourSpread: 0, sharpness: null, detailCentre: null })
  })
})

describe('the judges', () => {
  it('are deterministic and run fewer modules for quick evaluations', async () => {
    const facts = await analyseImage(await scene())
    const prompt = context({ texts: ['a yellow sun in a blue sky'] })
    const first = runJudges(facts, prompt)
    expect(runJudges(structuredClone(facts), prompt)).toEqual(first)
    expect(first.map((j) => j.name)).toEqual([
      'resolution',
      'exposure',
      'contrast',
      'sharpness',
      'detail',
      'composition',
      'colour',
      'prompt_adherence',
    ])
    expect(first.every((j) => j.passed)).toBe(true)
    expect(runJudges(facts, { ...prompt, jobClass: 'quick' }).map((j) => j.name)).toEqual([
      'resolution',
      'exposure',
      'sharpness',
      'prompt_adherence',
    ])
  })

  it('keep confidences in 0..1 and explain themselves', async () => {
    const facts = await analyseImage(
      await sharp(await scene())
        .blur(6)
        .png()
        .toBuffer(),
    )
    for (const judge of runJudges(facts, context({ texts: ['a red car'] }))) {
      expect(judge.confidence).toBeGreaterThanOrEqual(0)
      expect(judge.confidence).toBeLessThanOrEqual(1)
      expect(judge.reasoning).toMatch(/\.$/)
      for (const check of judge.checks) {
        expect(check.confidence).toBeGreaterThanOrEqual(0.3)
        expect(check.confidence).toBeLessThanOrEqual(0.99)
        expect(check.issue === null).toBe(check.passed || judge.name === 'reference_similarity')
      }
    }
  })

  it('weigh a prompt with nothing measurable at zero', async () => {
    const facts = await analyseImage(await scene())
    const prompt = runJudges(facts, context({ texts: ['a cat on a sofa'] })).find(
      (j) => j.name === 'prompt_adherence',
    )
    expect(prompt).toMatchObject({ passed: true, weight: 0, confidence: 0.3, checks: [] })
  })

  it('hold the prompt to its words, and a dark prompt moves the exposure line', async () => {
    const dark = await analyseImage(
      await svg(
        512,
        512,
        '<rect width="100%" height="100%" fill="#101418"/><circle cx="256" cy="256" r="60" fill="#e8e0a0"/>',
      ),
    )
    const plain = runJudges(dark, context())
    expect(plain.find((j) => j.name === 'exposure')?.checks[0]).toMatchObject({
      passed: false,
      issue: { code: 'underexposed' },
    })
    const night = runJudges(dark, context({ texts: ['a yellow moon at night, no red'] }))
    expect(night.find((j) => j.name === 'exposure')?.passed).toBe(true)
    const prompt = night.find((j) => j.name === 'prompt_adherence')
    expect(prompt?.checks.map((c) => [c.name, c.passed])).toEqual([
      ['colour_yellow', false],
      ['brightness_dark', true],
      ['no_red', true],
    ])
    expect(prompt?.passed).toBe(false)
  })

  it('compare with references and check the requested size', async () => {
    const facts = await analyseImage(await scene())
    const other = await analyseImage(
      await svg(300, 300, '<rect width="100%" height="100%" fill="#ff00ff"/>'),
    )
    const judges = runJudges(
      facts,
      context({
        references: [
          { label: 'Reference image 1', facts: other },
          { label: 'Reference image 2', facts },
        ],
        requested: { width: null, height: null, aspectRatio: 16 / 9 },
      }),
    )
    expect(judges.find((j) => j.name === 'reference_similarity')).toMatchObject({
      passed: true,
      strength: expect.stringMatching(/reference image 2/),
    })
    expect(judges.find((j) => j.name === 'resolution')?.checks[1]).toMatchObject({
      name: 'requested_aspect_ratio',
      passed: false,
      issue: { code: 'aspect_mismatch' },
    })
  })
})

import { createHash } from 'node:crypto'
import type { Sharp } from 'sharp'
import { sharp } from '../../native'
import { findModel } from './catalog'
import { colourName, fromHex, toHex, type Rgb } from './colour'
import { videoTiming, type AnimationFormat } from './measure'
import { Palette, STYLES, hashOf, makeScene, renderScene, rngFrom, type Style } from './render'
import type {
  CatalogModel,
  LogLevelCode,
  ModelFailure,
  ModelFile,
  ModelLog,
  ModelResult,
  ModelSuccess,
  RunOptions,
} from './types'
import { imageSizeProblem, validateInput } from './validate'

/** The failure probability of `atelier/flaky` when neither its input nor the options set one. */
export const DEFAULT_FAILURE_RATE = 0.3

/** A failure raised inside a generator; runModel turns it into a `{ ok: false }` result. */
class RunFailure extends Error {
  constructor(
    readonly failure_code: string,
    readonly failure_stage: string,
    message: string,
    readonly workMs = 0,
  ) {
    super(message)
  }
}

interface Context {
  model: CatalogModel
  input: Record<string, unknown>
  seed: number
  options: RunOptions
  log: (level: LogLevelCode, message: string) => void
}

interface LoadedImage {
  /** Raw RGBA pixels, EXIF orientation applied. */
  rgba: Buffer
  width: number
  height: number
  hasAlpha: boolean
  /** SHA-256 of the encoded bytes: what the image contributes to deterministic hashes. */
  sha256: string
}

type Generator = (ctx: Context) => Promise<Omit<ModelSuccess, 'ok' | 'logs'>>

const str = (ctx: Context, name: string, fallback = ''): string => {
  const value = ctx.input[name]
  return typeof value === 'string' ? value : fallback
}

const num = (ctx: Context, name: string, fallback: number): number => {
  const value = ctx.input[name]
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}

const megapixels = (width: number, height: number): number => (width * height) / 1e6

const PNG_OPTIONS = { compressionLevel: 6, adaptiveFiltering: true } as const

function rgbToPng(rgb: Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(rgb, { raw: { width, height, channels: 3 } })
    .png(PNG_OPTIONS)
    .toBuffer()
}

/** Decodes a `data:` URL (base64 or percent-encoded). */
export function decodeDataUrl(ref: string): Buffer {
  const comma = ref.indexOf(',')
  if (comma < 0) throw new Error('the data: URL has no comma')
  const meta = ref.slice(5, comma)
  const payload = ref.slice(comma + 1)
  return meta.split(';').includes('base64')
    ? Buffer.from(payload, 'base64')
    : Buffer.from(decodeURIComponent(payload), 'latin1')
}

/** Loads, size-checks and decodes the image input `name`. */
async function loadImage(ctx: Context, name: string): Promise<LoadedImage> {
  const ref = str(ctx, name)
  const def = ctx.model.inputs.find((input) => input.name === name)
  let bytes: Buffer
  try {
    if (ref.startsWith('data:')) {
      bytes = decodeDataUrl(ref)
    } else if (ctx.options.fetchImage) {
      bytes = await ctx.options.fetchImage(ref)
    } else {
      throw new Error('only data: URLs can be loaded here')
    }
  } catch (error) {
    throw new RunFailure(
      'INPUT_FETCH_FAILED',
      'preprocess',
      `The ${name} input could not be loaded: ${error instanceof Error ? error.message : String(error)}.`,
    )
  }
  const unreadable = (error: unknown): RunFailure =>
    new RunFailure(
      'INPUT_VALIDATION_FAILED',
      'preprocess',
      `The ${name} input is not an image that can be read (${error instanceof Error ? error.message : String(error)}).`,
    )
  let width: number
  let height: number
  let hasAlpha: boolean
  try {
    const metadata = await sharp(bytes).metadata()
    width = metadata.autoOrient.width
    height = metadata.autoOrient.height
    hasAlpha = metadata.hasAlpha
  } catch (error) {
    throw unreadable(error)
  }
  const problem = def ? imageSizeProblem(def, width, height) : null
  if (problem) throw new RunFailure('INPUT_VALIDATION_FAILED', 'preprocess', problem.message)
  try {
    const { data, info } = await sharp(bytes, { autoOrient: true })
      .toColourspace('srgb')
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    ctx.log('info', `Loaded the ${name} input: ${info.width}×${info.height}.`)
    return {
      rgba: data,
      width: info.width,
      height: info.height,
      hasAlpha,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    }
  } catch (error) {
    throw unreadable(error)
  }
}

const WHITE = { r: 255, g: 255, b: 255 }

function rawRgba(image: LoadedImage): Sharp {
  return sharp(image.rgba, { raw: { width: image.width, height: image.height, channels: 4 } })
}

/** Renders one procedural picture, seeded by `parts` (which include the prompt), the seed and index. */
function picture(
  ctx: Context,
  parts: Record<string, unknown>,
  index: number,
  style: Style,
  width: number,
  height: number,
  tint?: Rgb,
): { rgb: Buffer; palette: Palette } {
  const random = rngFrom(hashOf(parts, ctx.seed, index))
  const palette = new Palette(random, typeof parts.prompt === 'string' ? parts.prompt : '', tint)
  const scene = makeScene(random, palette, style)
  return { rgb: renderScene(scene, width, height), palette }
}

function paletteWords(palette: Palette): string {
  return palette.word !== undefined
    ? `a ${palette.word} palette (from the prompt)`
    : `a palette around hue ${Math.round(palette.base.hue)}°`
}

function textToImage(latencyFactor: number): Generator {
  return async (ctx) => {
    const width = num(ctx, 'width', 512)
    const height = num(ctx, 'height', 512)
    const count = num(ctx, 'num_images', 1)
    const styleInput = str(ctx, 'style', 'abstract')
    const style: Style = STYLES.find((s) => s === styleInput) ?? 'abstract'
    const parts = {
      prompt: str(ctx, 'prompt'),
      negative_prompt: str(ctx, 'negative_prompt'),
      style,
    }
    const files: ModelFile[] = []
    for (let index = 0; index < count; index++) {
      const { rgb, palette } = picture(ctx, parts, index, style, width, height)
      if (index === 0) {
        ctx.log('info', `Composing a picture in the ${style} style with ${paletteWords(palette)}.`)
      }
      const bytes = await rgbToPng(rgb, width, height)
      files.push({ output: 'image', bytes, content_type: 'image/png', width, height })
    }
    const total = megapixels(width, height) * count
    ctx.log('info', `Rendered ${count} PNG image${count === 1 ? '' : 's'} of ${width}×${height}.`)
    if (latencyFactor > 1) {
      ctx.log('warning', `This model is deliberately ${latencyFactor}× slower than text-to-image.`)
    }
    return {
      files,
      metrics: { megapixels: total },
      workMs: Math.round(300 + 1200 * total) * latencyFactor,
    }
  }
}

const imageToImage: Generator = async (ctx) => {
  const image = await loadImage(ctx, 'image')
  const strength = num(ctx, 'strength', 0.5)
  const tintHex = str(ctx, 'tint')
  const tint = tintHex ? fromHex(tintHex) : undefined
  const parts = { prompt: str(ctx, 'prompt'), strength, tint: tintHex, image: image.sha256 }
  const { width, height } = image
  const { rgb, palette } = picture(ctx, parts, 0, 'abstract', width, height, tint)
  let pipeline = rawRgba(image).flatten({ background: WHITE })
  if (strength > 0) pipeline = pipeline.blur(0.3 + strength * 2.5)
  const base = await pipeline.raw().toBuffer()
  // Blend the pattern over the softened input: out = base + (pattern - base) × weight.
  const weight = Math.min(1, strength * 0.6)
  const blended = new Uint8ClampedArray(base.buffer, base.byteOffset, base.length)
  for (let o = 0; o < blended.length; o++) {
    const b = blended[o] ?? 0
    blended[o] = b + ((rgb[o] ?? 0) - b) * weight
  }
  const bytes = await rgbToPng(base, width, height)
  ctx.log(
    'info',
    `Blended ${paletteWords(palette)} at strength ${strength} over the ${width}×${height} input.`,
  )
  const total = megapixels(width, height)
  return {
    files: [{ output: 'image', bytes, content_type: 'image/png', width, height }],
    metrics: { megapixels: total },
    workMs: Math.round(250 + 800 * total),
  }
}

const upscale: Generator = async (ctx) => {
  const image = await loadImage(ctx, 'image')
  const scale = num(ctx, 'scale', 2)
  const width = image.width * scale
  const height = image.height * scale
  let pipeline = rawRgba(image)
  if (!image.hasAlpha) pipeline = pipeline.removeAlpha()
  const bytes = await pipeline
    .resize(width, height, { kernel: 'lanczos3', fit: 'fill' })
    .png(PNG_OPTIONS)
    .toBuffer()
  ctx.log('info', `Upscaled ${image.width}×${image.height} to ${width}×${height} (lanczos3).`)
  const total = megapixels(width, height)
  return {
    files: [{ output: 'image', bytes, content_type: 'image/png', width, height }],
    metrics: { megapixels: total },
    workMs: Math.round(200 + 250 * total),
  }
}

/** The most common colour of the image border (5 bits a channel), averaged over its pixels. */
function borderColour(image: LoadedImage): { colour: Rgb; share: number } {
  const { rgba, width, height } = image
  const counts = new Map<number, { n: number; r: number; g: number; b: number }>()
  let total = 0
  const visit = (x: number, y: number): void => {
    const o = (y * width + x) * 4
    const r = rgba[o] ?? 0
    const g = rgba[o + 1] ?? 0
    const b = rgba[o + 2] ?? 0
    const key = ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3)
    const bin = counts.get(key) ?? { n: 0, r: 0, g: 0, b: 0 }
    bin.n++
    bin.r += r
    bin.g += g
    bin.b += b
    counts.set(key, bin)
    total++
  }
  for (let x = 0; x < width; x++) {
    visit(x, 0)
    if (height > 1) visit(x, height - 1)
  }
  for (let y = 1; y < height - 1; y++) {
    visit(0, y)
    if (width > 1) visit(width - 1, y)
  }
  let best = { n: 0, r: 0, g: 0, b: 0 }
  for (const bin of counts.values()) if (bin.n > best.n) best = bin
  const n = Math.max(1, best.n)
  return {
    colour: [Math.round(best.r / n), Math.round(best.g / n), Math.round(best.b / n)],
    share: best.n / Math.max(1, total),
  }
}

const removeBackground: Generator = async (ctx) => {
  const image = await loadImage(ctx, 'image')
  const tolerance = num(ctx, 'tolerance', 48)
  const feather = ctx.input.feather !== false
  const { colour, share } = borderColour(image)
  const [br, bg, bb] = colour
  const out = Buffer.from(image.rgba)
  const band = Math.max(1, tolerance)
  let cleared = 0
  for (let o = 0; o < out.length; o += 4) {
    const dr = (out[o] ?? 0) - br
    const dg = (out[o + 1] ?? 0) - bg
    const db = (out[o + 2] ?? 0) - bb
    const distance = Math.sqrt(dr * dr + dg * dg + db * db)
    let alpha = 255
    if (distance <= tolerance) alpha = 0
    else if (feather && distance < tolerance + band) {
      alpha = Math.round((255 * (distance - tolerance)) / band)
    }
    const kept = Math.min(out[o + 3] ?? 255, alpha)
    out[o + 3] = kept
    if (kept === 0) cleared++
  }
  const { width, height } = image
  const bytes = await sharp(out, { raw: { width, height, channels: 4 } })
    .png(PNG_OPTIONS)
    .toBuffer()
  ctx.log(
    'info',
    `Background colour ${toHex(colour)} (${colourName(colour)}) covers ${Math.round(share * 100)}% of the border.`,
  )
  ctx.log(
    'info',
    `Made ${Math.round((cleared / (width * height)) * 100)}% of the pixels transparent (tolerance ${tolerance}${feather ? ', feathered' : ''}).`,
  )
  return {
    files: [{ output: 'image', bytes, content_type: 'image/png', width, height }],
    metrics: { megapixels: megapixels(width, height) },
    workMs: Math.round(200 + 400 * megapixels(width, height)),
  }
}

function orientation(width: number, height: number): string {
  if (width === height) return 'square'
  return width > height ? 'landscape' : 'portrait'
}

const caption: Generator = async (ctx) => {
  const image = await loadImage(ctx, 'image')
  const { width, height } = image
  let transparent = false
  for (let o = 3; o < image.rgba.length; o += 4) {
    if ((image.rgba[o] ?? 255) < 255) {
      transparent = true
      break
    }
  }
  const stats = await rawRgba(image).flatten({ background: WHITE }).stats()
  const dominant: Rgb = [stats.dominant.r, stats.dominant.g, stats.dominant.b]
  const name = colourName(dominant)
  const [red, green, blue] = stats.channels
  const brightness =
    (0.2126 * (red?.mean ?? 0) + 0.7152 * (green?.mean ?? 0) + 0.0722 * (blue?.mean ?? 0)) / 255
  const spread = ((red?.stdev ?? 0) + (green?.stdev ?? 0) + (blue?.stdev ?? 0)) / 3 / 255
  const tone = brightness < 0.35 ? 'dark' : brightness > 0.65 ? 'bright' : 'balanced'
  const contrast = spread < 0.08 ? 'low' : spread > 0.22 ? 'high' : 'moderate'
  const texture =
    stats.entropy < 3
      ? 'large flat areas'
      : stats.entropy > 6
        ? 'a busy, fine-grained texture'
        : 'some texture'
  let text = `A ${orientation(width, height)} ${width}×${height} image dominated by ${name} tones.`
  if (str(ctx, 'detail', 'brief') === 'detailed') {
    text +=
      ` The dominant colour is ${toHex(dominant)}; the image is ${tone} overall` +
      ` (mean brightness ${Math.round(brightness * 100)}%) with ${contrast} contrast and ${texture}.` +
      (transparent ? ' Parts of it are transparent.' : '')
  }
  ctx.log(
    'info',
    `Dominant colour ${toHex(dominant)} (${name}), entropy ${stats.entropy.toFixed(2)}.`,
  )
  return {
    files: [],
    text,
    metrics: {},
    workMs: Math.round(150 + 100 * megapixels(width, height)),
  }
}

const textToVideo: Generator = async (ctx) => {
  const width = num(ctx, 'width', 256)
  const height = num(ctx, 'height', 256)
  const format: AnimationFormat = str(ctx, 'format', 'webp') === 'gif' ? 'gif' : 'webp'
  const timing = videoTiming(num(ctx, 'fps', 8), num(ctx, 'duration_seconds', 1), format)
  const prompt = str(ctx, 'prompt')
  const random = rngFrom(hashOf({ prompt }, ctx.seed, 'video'))
  const palette = new Palette(random, prompt)
  const scene = makeScene(random, palette, 'abstract')
  const frameBytes = width * height * 3
  const strip = Buffer.alloc(frameBytes * timing.frames)
  for (let frame = 0; frame < timing.frames; frame++) {
    renderScene(scene, width, height, frame / timing.frames).copy(strip, frame * frameBytes)
  }
  const delay = Array.from({ length: timing.frames }, () => timing.delayMs)
  const animation = sharp(strip, {
    raw: { width, height: height * timing.frames, channels: 3, pageHeight: height },
  })
  const bytes =
    format === 'gif'
      ? await animation.gif({ loop: 0, delay, effort: 1, dither: 0 }).toBuffer()
      : await animation.webp({ loop: 0, delay, quality: 80, effort: 2 }).toBuffer()
  ctx.log(
    'info',
    `Animated ${timing.frames} frames of ${width}×${height} at ${timing.delayMs} ms a frame with ${paletteWords(palette)}.`,
  )
  const frameMegapixels = megapixels(width, height)
  return {
    files: [
      {
        output: 'video',
        bytes,
        content_type: format === 'gif' ? 'image/gif' : 'image/webp',
        width,
        height,
        duration_ms: timing.durationMs,
        frames: timing.frames,
      },
    ],
    metrics: { megapixels: frameMegapixels, seconds: timing.durationMs / 1000 },
    workMs: Math.round(400 + timing.frames * (40 + 600 * frameMegapixels)),
  }
}

const flaky: Generator = async (ctx) => {
  const rate = num(ctx, 'failure_rate', ctx.options.failureRate ?? DEFAULT_FAILURE_RATE)
  const draw = (ctx.options.random ?? Math.random)()
  const percent = `${Math.round(rate * 100)}%`
  if (draw < rate) {
    ctx.log('warning', 'The inference worker missed a heartbeat.')
    ctx.log('error', `Inference crashed (simulated failure; this model fails ${percent} of runs).`)
    throw new RunFailure(
      'MODEL_ERROR',
      'inference',
      `The model crashed during inference. ${ctx.model.slug} fails about ${percent} of runs on purpose; try again.`,
      150,
    )
  }
  const { rgb } = picture(ctx, { prompt: str(ctx, 'prompt') }, 0, 'abstract', 256, 256)
  const bytes = await rgbToPng(rgb, 256, 256)
  ctx.log('info', `Survived this time (failure rate ${percent}); rendered 256×256.`)
  return {
    files: [{ output: 'image', bytes, content_type: 'image/png', width: 256, height: 256 }],
    metrics: { megapixels: megapixels(256, 256) },
    workMs: 200,
  }
}

const GENERATORS: Readonly<Record<string, Generator>> = {
  'atelier/text-to-image': textToImage(1),
  'atelier/image-to-image': imageToImage,
  'atelier/upscale': upscale,
  'atelier/remove-background': removeBackground,
  'atelier/caption': caption,
  'atelier/text-to-video': textToVideo,
  'atelier/slow-render': textToImage(10),
  'atelier/flaky': flaky,
}

function failure(
  logs: ModelLog[],
  failure_code: string,
  failure_stage: string,
  failure_message: string,
  workMs = 0,
): ModelFailure {
  logs.push({ level_code: 'error', message: failure_message })
  return { ok: false, failure_code, failure_stage, failure_message, logs, workMs }
}

/**
 * Runs a catalog model on an input. The input is validated first (INPUT_VALIDATION_FAILED at
 * preprocess, with every problem in the message); an explicit `seed` input overrides `options.seed`.
 * The same model, input and seed always give byte-identical files. Never throws: unknown models
 * fail with MODEL_UNAVAILABLE, unloadable images with INPUT_FETCH_FAILED, crashes with MODEL_ERROR.
 */
export async function runModel(
  slug: string,
  input: unknown,
  options: RunOptions,
): Promise<ModelResult> {
  const logs: ModelLog[] = []
  const model = findModel(slug)
  const generator = model ? GENERATORS[model.slug] : undefined
  if (!model || !generator) {
    return failure(logs, 'MODEL_UNAVAILABLE', 'preprocess', `There is no model ${slug}.`)
  }
  const validation = validateInput(model, input)
  if (validation.problems.length > 0) {
    return failure(
      logs,
      'INPUT_VALIDATION_FAILED',
      'preprocess',
      validation.problems.map((problem) => problem.message).join(' '),
    )
  }
  const seedInput = validation.input.seed
  const seed = typeof seedInput === 'number' ? seedInput : options.seed
  const ctx: Context = {
    model,
    input: validation.input,
    seed,
    options,
    log: (level_code, message) => logs.push({ level_code, message }),
  }
  ctx.log('info', `Running ${model.slug} version ${model.version ?? 'unknown'} with seed ${seed}.`)
  ctx.log('debug', `Input: ${JSON.stringify(summarize(validation.input))}`)
  try {
    const result = await generator(ctx)
    return { ok: true, ...result, logs }
  } catch (error) {
    if (error instanceof RunFailure) {
      return failure(logs, error.failure_code, error.failure_stage, error.message, error.workMs)
    }
    return failure(
      logs,
      'MODEL_ERROR',
      'inference',
      `The model failed: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

/** The input for logs: long strings (data: URLs) shortened. */
function summarize(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(input).map(([key, value]) => [
      key,
      typeof value === 'string' && value.length > 80
        ? `${value.slice(0, 60)}… (${value.length} chars)`
        : value,
    ]),
  )
}

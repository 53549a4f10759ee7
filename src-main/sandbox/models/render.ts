import { createHash } from 'node:crypto'
import { COLOUR_WORDS, colourWordOf, hslToRgb, rgbToHsl, type BaseColour, type Rgb } from './colour'

/** Procedural pictures: a seeded random source, palettes, scenes and a small rasterizer. */

export type Style = 'abstract' | 'geometric' | 'gradient' | 'studio'
export const STYLES: readonly Style[] = ['abstract', 'geometric', 'gradient', 'studio']

/** JSON with sorted keys, so equal values hash equally whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  const text = JSON.stringify(value) as string | undefined
  return text ?? 'null'
}

/** SHA-256 of the canonical JSON of the parts. */
export function hashOf(...parts: unknown[]): Buffer {
  return createHash('sha256').update(canonical(parts)).digest()
}

/** A seeded random source in [0, 1) (sfc32), from the first 16 bytes of a hash. */
export function rngFrom(hash: Buffer): () => number {
  let a = hash.readUInt32LE(0)
  let b = hash.readUInt32LE(4)
  let c = hash.readUInt32LE(8)
  let d = hash.readUInt32LE(12)
  const next = (): number => {
    a |= 0
    b |= 0
    c |= 0
    d |= 0
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 12; i++) next()
  return next
}

const between = (random: () => number, min: number, max: number): number =>
  min + (max - min) * random()

const FREE_BASE: BaseColour = {
  hue: 0,
  saturation: 0.6,
  lightness: 0.5,
  lightnessRange: [0.25, 0.75],
}

/** Picks shades of one base colour, or of a random hue when the text names no colour. */
export class Palette {
  readonly base: BaseColour
  /** The colour word the palette follows, if the text named one. */
  readonly word: string | undefined

  constructor(
    private readonly random: () => number,
    text = '',
    tint?: Rgb,
  ) {
    this.word = colourWordOf(text)
    if (tint) {
      const [hue, saturation, lightness] = rgbToHsl(tint)
      this.base = {
        hue,
        saturation,
        lightness,
        lightnessRange: [Math.max(0, lightness - 0.12), Math.min(1, lightness + 0.12)],
      }
    } else if (this.word !== undefined) {
      this.base = COLOUR_WORDS[this.word] ?? FREE_BASE
    } else {
      this.base = {
        ...FREE_BASE,
        hue: between(random, 0, 360),
        saturation: between(random, 0.45, 0.8),
      }
    }
  }

  /** A shade: near the base hue (free palettes also pick analogous and complementary hues). */
  shade(): Rgb {
    const { hue, saturation, lightnessRange } = this.base
    const [low, high] = lightnessRange
    const neutral = saturation < 0.1
    let h = hue + between(this.random, -8, 8)
    if (this.word === undefined && !neutral) {
      const pick = this.random()
      h = pick < 0.6 ? hue + between(this.random, -40, 40) : pick < 0.85 ? hue + 180 : hue + 120
    }
    const s = neutral ? saturation : Math.min(1, saturation * between(this.random, 0.85, 1.15))
    return hslToRgb(h, s, between(this.random, low, high))
  }

  /** A very light, slightly tinted background for studio shots. */
  backdrop(): Rgb {
    return hslToRgb(this.base.hue + 180, 0.12, 0.94)
  }
}

export interface Shape {
  kind: 'circle' | 'ring' | 'rect'
  /** Centre, as fractions of width and height. */
  x: number
  y: number
  /** Radius (half-size for rects), as a fraction of the shorter side. */
  r: number
  /** Rect aspect (height / width). */
  aspect: number
  colour: Rgb
  alpha: number
  /** Edge softness, as a fraction of r. */
  soft: number
  /** Animation: the centre moves by ±ax, ±ay (fractions) over one loop, starting at phase. */
  ax: number
  ay: number
  phase: number
}

export interface Scene {
  from: Rgb
  to: Rgb
  /** Gradient direction, radians. */
  angle: number
  shapes: Shape[]
  /** Strength of the mottled texture, 0..1. */
  noise: number
  /** Seeds the texture. */
  grainSeed: Buffer
}

/** A scene of the given style, its colours from the palette and its layout from the random source. */
export function makeScene(random: () => number, palette: Palette, style: Style): Scene {
  const shape = (kind: Shape['kind'], overrides: Partial<Shape> = {}): Shape => ({
    kind,
    x: between(random, 0.1, 0.9),
    y: between(random, 0.1, 0.9),
    r: between(random, 0.06, 0.28),
    aspect: between(random, 0.4, 1.6),
    colour: palette.shade(),
    alpha: between(random, 0.55, 0.9),
    soft: between(random, 0.1, 0.5),
    ax: between(random, -0.12, 0.12),
    ay: between(random, -0.12, 0.12),
    phase: random(),
    ...overrides,
  })
  const grainSeed = Buffer.from(Array.from({ length: 16 }, () => Math.floor(random() * 256)))
  const angle = between(random, 0, Math.PI * 2)
  switch (style) {
    case 'gradient':
      return {
        from: palette.shade(),
        to: palette.shade(),
        angle,
        shapes: [],
        noise: 0.05,
        grainSeed,
      }
    case 'geometric': {
      const count = 4 + Math.floor(random() * 5)
      const shapes = Array.from({ length: count }, () =>
        shape(random() < 0.5 ? 'rect' : 'ring', { soft: 0.02, alpha: between(random, 0.8, 1) }),
      )
      return { from: palette.shade(), to: palette.shade(), angle, shapes, noise: 0.025, grainSeed }
    }
    case 'studio': {
      const backdrop = palette.backdrop()
      const subject = shape('circle', {
        x: 0.5,
        y: 0.5,
        r: between(random, 0.22, 0.32),
        soft: 0.01,
        alpha: 1,
        ax: 0.05,
        ay: 0,
      })
      return { from: backdrop, to: backdrop, angle, shapes: [subject], noise: 0, grainSeed }
    }
    default: {
      const count = 5 + Math.floor(random() * 5)
      const shapes = Array.from({ length: count }, () => shape('circle'))
      return { from: palette.shade(), to: palette.shade(), angle, shapes, noise: 0.04, grainSeed }
    }
  }
}

const smoothstep = (edge0: number, edge1: number, x: number): number => {
  const t = Math.min(1, Math.max(0, (x - edge0) / (edge1 - edge0)))
  return t * t * (3 - 2 * t)
}

/** Coverage (0..1) of a shape at distance-like coordinates (dx, dy) from its centre. */
function coverage(shape: Shape, dx: number, dy: number, r: number, edge: number): number {
  switch (shape.kind) {
    case 'ring': {
      const thickness = r * 0.22
      const d = Math.abs(Math.sqrt(dx * dx + dy * dy) - r)
      return 1 - smoothstep(thickness - edge, thickness + edge, d)
    }
    case 'rect': {
      const cx = 1 - smoothstep(r - edge, r + edge, Math.abs(dx))
      const cy = 1 - smoothstep(r * shape.aspect - edge, r * shape.aspect + edge, Math.abs(dy))
      return cx * cy
    }
    default:
      return 1 - smoothstep(r - edge, r + edge, Math.sqrt(dx * dx + dy * dy))
  }
}

/**
 * Adds a soft mottled texture (value noise on a grid of cells, bilinearly interpolated): it tells
 * seeds apart like grain does, yet compresses far better than per-pixel noise.
 */
function addMottle(pixels: Uint8ClampedArray, width: number, height: number, scene: Scene): void {
  const random = rngFrom(hashOf(scene.grainSeed.toString('hex')))
  const cell = Math.max(8, Math.round(Math.min(width, height) / 16))
  const cols = Math.ceil(width / cell) + 2
  const rows = Math.ceil(height / cell) + 2
  const amplitude = scene.noise * 255 * 2
  const grid = Float64Array.from({ length: cols * rows }, () => (random() - 0.5) * amplitude)
  const at = (col: number, row: number): number => grid[row * cols + col] ?? 0
  for (let y = 0; y < height; y++) {
    const gy = y / cell
    const row = Math.floor(gy)
    const fy = gy - row
    for (let x = 0; x < width; x++) {
      const gx = x / cell
      const col = Math.floor(gx)
      const fx = gx - col
      const top = at(col, row) + (at(col + 1, row) - at(col, row)) * fx
      const bottom = at(col, row + 1) + (at(col + 1, row + 1) - at(col, row + 1)) * fx
      const n = top + (bottom - top) * fy
      const o = (y * width + x) * 3
      pixels[o] = (pixels[o] ?? 0) + n
      pixels[o + 1] = (pixels[o + 1] ?? 0) + n
      pixels[o + 2] = (pixels[o + 2] ?? 0) + n
    }
  }
}

/**
 * Renders a scene to raw RGB pixels (3 bytes a pixel, row by row). `t` in [0, 1) is the animation
 * time: shapes move on closed paths, so t = 0 and t = 1 are the same picture.
 */
export function renderScene(scene: Scene, width: number, height: number, t = 0): Buffer {
  const out = Buffer.alloc(width * height * 3)
  const pixels = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length)
  const cos = Math.cos(scene.angle)
  const sin = Math.sin(scene.angle)
  const [fr, fg, fb] = scene.from
  const [tr, tg, tb] = scene.to
  const span = Math.abs(cos) + Math.abs(sin)
  for (let y = 0; y < height; y++) {
    const ny = (y + 0.5) / height - 0.5
    for (let x = 0; x < width; x++) {
      const nx = (x + 0.5) / width - 0.5
      const k = Math.min(1, Math.max(0, (nx * cos + ny * sin) / span + 0.5))
      const o = (y * width + x) * 3
      pixels[o] = fr + (tr - fr) * k
      pixels[o + 1] = fg + (tg - fg) * k
      pixels[o + 2] = fb + (tb - fb) * k
    }
  }
  const short = Math.min(width, height)
  const turn = Math.PI * 2 * t
  for (const shape of scene.shapes) {
    const cx = (shape.x + shape.ax * Math.sin(turn + shape.phase * Math.PI * 2)) * width
    const cy = (shape.y + shape.ay * Math.cos(turn + shape.phase * Math.PI * 2)) * height
    const r = shape.r * short
    const edge = Math.max(0.75, shape.soft * r)
    const reach = r * Math.max(1.25, shape.kind === 'rect' ? shape.aspect : 1) + edge + 1
    const x0 = Math.max(0, Math.floor(cx - reach))
    const x1 = Math.min(width - 1, Math.ceil(cx + reach))
    const y0 = Math.max(0, Math.floor(cy - reach))
    const y1 = Math.min(height - 1, Math.ceil(cy + reach))
    const [sr, sg, sb] = shape.colour
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const a = shape.alpha * coverage(shape, x + 0.5 - cx, y + 0.5 - cy, r, edge)
        if (a <= 0) continue
        const o = (y * width + x) * 3
        const r0 = pixels[o] ?? 0
        const g0 = pixels[o + 1] ?? 0
        const b0 = pixels[o + 2] ?? 0
        pixels[o] = r0 + (sr - r0) * a
        pixels[o + 1] = g0 + (sg - g0) * a
        pixels[o + 2] = b0 + (sb - b0) * a
      }
    }
  }
  if (scene.noise > 0) addMottle(pixels, width, height, scene)
  return out
}

import { createHash } from 'node:crypto'
import { sharp } from '../../native'
import { colourName } from '../models'
import { EvaluationFailure } from './failure'

/** A box in the pixels of the submitted image, as evaluation issues carry it. */
export interface Region {
  x: number
  y: number
  width: number
  height: number
}

export interface PaletteColour {
  hex: string
  /** black, white, gray, red, orange, brown, yellow, green, cyan, blue, purple or pink. */
  name: string
  share: number
}

/**
 * What the judges know about an image: measured once, from a copy at most `SAMPLE_SIDE` pixels
 * on its longer side (judged as it would be seen, not pixel-peeped). Brightness-like values are
 * in 0..1; shares are fractions of the pixels.
 */
export interface ImageFacts {
  format: string
  width: number
  height: number
  sizeBytes: number
  sha256: string
  brightness: number
  /** Standard deviation of the luminance. */
  contrast: number
  /**
   * Standard deviation of the colour (RMS over R, G and B): unlike `contrast`, it also sees
   * shapes that differ from their background in hue but not in lightness.
   */
  colourSpread: number
  /** From the 1st to the 99th percentile of the luminance. */
  dynamicRange: number
  /** Shannon entropy of the 256-level luminance histogram, in bits (0..8). */
  entropy: number
  shadowsClipped: number
  highlightsClipped: number
  shadowRegion: Region | null
  highlightRegion: Region | null
  /** Mean HSL saturation. */
  saturation: number
  /** Hasler and Süsstrunk's colourfulness: below 15 hardly colourful, above 82 highly. */
  colourfulness: number
  /** Share of the pixels per colour name. */
  colourShares: Record<string, number>
  /** The most common colours, most common first. */
  palette: PaletteColour[]
  /** A 4×4×4 RGB histogram (64 shares), to compare images by colour. */
  colourHistogram: number[]
  /** Share of the pixels on an edge (a step of at least 16 of 255 levels in any channel). */
  edgeDensity: number
  /**
   * How crisp the strongest edges are, 0..1: about 2 / (edge width in pixels), so 1 is a clean
   * step and 0.25 an edge smeared over eight pixels. Null when no edge is strong enough to judge.
   */
  sharpness: number | null
  /** Where the detail sits: the centroid of the edge energy, 0..1 from the top left. */
  detailCentre: { x: number; y: number } | null
  /** Share of the edge energy in the outer 3% of the frame. */
  borderDetail: number
}

/** Raster formats the judges read; vector images and documents are not generated images. */
const RASTER_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'avif', 'heif', 'tiff'])
const SAMPLE_SIDE = 512
/** Decoding bombs stop here rather than exhaust memory. */
const MAX_INPUT_PIXELS = 100_000_000
const EDGE_GRADIENT = 64
const SHARPNESS_MIN_RANGE = 20
const SHARPNESS_WINDOW = 4
const RATIO_BINS = 1000

const round = (value: number, digits = 4): number => Number(value.toFixed(digits))

function readable(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Decodes and measures an image; anything that is not a readable raster image is invalid_media. */
export async function analyseImage(bytes: Buffer, label = 'The image'): Promise<ImageFacts> {
  let format: string | undefined
  let width: number
  let height: number
  try {
    const metadata = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata()
    format = metadata.format
    width = metadata.autoOrient.width
    height = metadata.autoOrient.height
  } catch (error) {
    throw new EvaluationFailure(
      'invalid_media',
      `${label} is not an image the evaluator can read (${readable(error)}); submit a PNG, JPEG, WebP, GIF, AVIF, HEIF or TIFF file.`,
    )
  }
  if (!RASTER_FORMATS.has(format)) {
    throw new EvaluationFailure(
      'invalid_media',
      `${label} is ${format === 'svg' ? 'a vector (SVG) image' : `a ${format} file`}; submit a raster image (PNG, JPEG, WebP, GIF, AVIF, HEIF or TIFF).`,
    )
  }
  let pixels: Buffer
  let sampleWidth: number
  let sampleHeight: number
  let channels: number
  try {
    const { data, info } = await sharp(bytes, {
      limitInputPixels: MAX_INPUT_PIXELS,
      autoOrient: true,
    })
      // Transparent parts are judged as they would show on a white page.
      .flatten({ background: '#ffffff' })
      .resize({
        width: SAMPLE_SIDE,
        height: SAMPLE_SIDE,
        fit: 'inside',
        withoutEnlargement: true,
      })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true })
    pixels = data
    sampleWidth = info.width
    sampleHeight = info.height
    channels = info.channels
  } catch (error) {
    throw new EvaluationFailure(
      'invalid_media',
      `${label} could not be decoded (${readable(error)}); it may be truncated or corrupt.`,
    )
  }
  const sample = measure(pixels, sampleWidth, sampleHeight, channels, width / sampleWidth)
  return {
    format,
    width,
    height,
    sizeBytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    ...sample,
  }
}

type Measured = Omit<ImageFacts, 'format' | 'width' | 'height' | 'sizeBytes' | 'sha256'>

class BoxTracker {
  private minX = Infinity
  private minY = Infinity
  private maxX = -Infinity
  private maxY = -Infinity

  add(x: number, y: number): void {
    if (x < this.minX) this.minX = x
    if (y < this.minY) this.minY = y
    if (x > this.maxX) this.maxX = x
    if (y > this.maxY) this.maxY = y
  }

  /** The box in the submitted image's pixels (`scale` = submitted / sample size). */
  region(scale: number): Region | null {
    if (this.maxX < 0) return null
    return {
      x: Math.floor(this.minX * scale),
      y: Math.floor(this.minY * scale),
      width: Math.ceil((this.maxX - this.minX + 1) * scale),
      height: Math.ceil((this.maxY - this.minY + 1) * scale),
    }
  }
}

function percentile(histogram: readonly number[], total: number, fraction: number): number {
  const target = total * fraction
  let seen = 0
  for (let level = 0; level < histogram.length; level++) {
    seen += histogram[level] ?? 0
    if (seen >= target) return level
  }
  return histogram.length - 1
}

function toHex(r: number, g: number, b: number): string {
  return `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`
}

/** Per-pixel measurements of an sRGB raster (1 to 4 channels, alpha already flattened). */
function measure(
  data: Buffer,
  width: number,
  height: number,
  channels: number,
  scale: number,
): Measured {
  const count = width * height
  const luma = new Float32Array(count)
  const red = new Float32Array(count)
  const green = new Float32Array(count)
  const blue = new Float32Array(count)
  let redSum = 0
  let greenSum = 0
  let blueSum = 0
  let channelSquares = 0
  const lumaHistogram = new Array<number>(256).fill(0)
  const colourHistogram = new Array<number>(64).fill(0)
  const names: Record<string, number> = {}
  // Per 4-bit-per-channel bin: pixel count and the sums of R, G and B.
  const bins = new Float64Array(4096 * 4)
  const shadows = new BoxTracker()
  const highlights = new BoxTracker()
  let shadowCount = 0
  let highlightCount = 0
  let lumaSum = 0
  let lumaSquares = 0
  let saturationSum = 0
  let rgSum = 0
  let rgSquares = 0
  let ybSum = 0
  let ybSquares = 0
  const greyscale = channels < 3

  for (let i = 0; i < count; i++) {
    const offset = i * channels
    const r = data[offset] ?? 0
    const g = greyscale ? r : (data[offset + 1] ?? 0)
    const b = greyscale ? r : (data[offset + 2] ?? 0)
    const y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    luma[i] = y
    red[i] = r
    green[i] = g
    blue[i] = b
    redSum += r
    greenSum += g
    blueSum += b
    channelSquares += r * r + g * g + b * b
    lumaSum += y
    lumaSquares += y * y
    const level = Math.min(255, Math.round(y))
    lumaHistogram[level] = (lumaHistogram[level] ?? 0) + 1
    const px = i % width
    const py = (i - px) / width
    if (level <= 4) {
      shadowCount++
      shadows.add(px, py)
    } else if (level >= 251) {
      highlightCount++
      highlights.add(px, py)
    }
    const max = Math.max(r, g, b)
    const min = Math.min(r, g, b)
    const lightness = (max + min) / 510
    if (max !== min) {
      const d = (max - min) / 255
      saturationSum += lightness > 0.5 ? d / (2 - (max + min) / 255) : d / ((max + min) / 255)
    }
    const rg = r - g
    const yb = 0.5 * (r + g) - b
    rgSum += rg
    rgSquares += rg * rg
    ybSum += yb
    ybSquares += yb * yb
    const coarse = ((r >> 6) << 4) | ((g >> 6) << 2) | (b >> 6)
    colourHistogram[coarse] = (colourHistogram[coarse] ?? 0) + 1
    const name = colourName([r, g, b])
    names[name] = (names[name] ?? 0) + 1
    const bin = (((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4)) * 4
    bins[bin] = (bins[bin] ?? 0) + 1
    bins[bin + 1] = (bins[bin + 1] ?? 0) + r
    bins[bin + 2] = (bins[bin + 2] ?? 0) + g
    bins[bin + 3] = (bins[bin + 3] ?? 0) + b
  }

  const mean = lumaSum / count
  const variance = Math.max(0, lumaSquares / count - mean * mean)
  const channelMeans = [redSum / count, greenSum / count, blueSum / count]
  const channelVariance = Math.max(
    0,
    (channelSquares / count - channelMeans.reduce((sum, m) => sum + m * m, 0)) / 3,
  )
  let entropy = 0
  for (const n of lumaHistogram) {
    if (n > 0) entropy -= (n / count) * Math.log2(n / count)
  }
  const rgMean = rgSum / count
  const ybMean = ybSum / count
  const rgDeviation = Math.sqrt(Math.max(0, rgSquares / count - rgMean * rgMean))
  const ybDeviation = Math.sqrt(Math.max(0, ybSquares / count - ybMean * ybMean))
  const colourfulness = Math.hypot(rgDeviation, ybDeviation) + 0.3 * Math.hypot(rgMean, ybMean)

  // Ties are broken by the bin key so that the palette never depends on insertion order.
  const binCount = (key: number): number => bins[key * 4] ?? 0
  const palette = Array.from({ length: 4096 }, (_, key) => key)
    .filter((key) => binCount(key) > 0)
    .sort((a, b) => binCount(b) - binCount(a) || a - b)
    .slice(0, 5)
    .map((key) => {
      const n = binCount(key)
      const r = Math.round((bins[key * 4 + 1] ?? 0) / n)
      const g = Math.round((bins[key * 4 + 2] ?? 0) / n)
      const b = Math.round((bins[key * 4 + 3] ?? 0) / n)
      return { hex: toHex(r, g, b), name: colourName([r, g, b]), share: round(n / count) }
    })
  const colourShares: Record<string, number> = {}
  for (const [name, n] of Object.entries(names).sort(([a], [b]) => (a < b ? -1 : 1))) {
    colourShares[name] = round(n / count)
  }

  return {
    brightness: round(mean / 255),
    contrast: round(Math.sqrt(variance) / 255),
    colourSpread: round(Math.sqrt(channelVariance) / 255),
    dynamicRange: round(
      (percentile(lumaHistogram, count, 0.99) - percentile(lumaHistogram, count, 0.01)) / 255,
    ),
    entropy: round(entropy, 3),
    shadowsClipped: round(shadowCount / count),
    highlightsClipped: round(highlightCount / count),
    shadowRegion: shadows.region(scale),
    highlightRegion: highlights.region(scale),
    saturation: round(saturationSum / count),
    colourfulness: round(colourfulness, 2),
    colourShares,
    palette,
    colourHistogram: colourHistogram.map((n) => n / count),
    ...measureEdges([red, green, blue], width, height),
  }
}

/** Sliding maximum and minimum of a row-major raster over a (2r+1)² window, separably. */
function localRange(luma: Float32Array, width: number, height: number, r: number): Float32Array {
  const rowMax = new Float32Array(luma.length)
  const rowMin = new Float32Array(luma.length)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let hi = -Infinity
      let lo = Infinity
      for (let dx = Math.max(0, x - r); dx <= Math.min(width - 1, x + r); dx++) {
        const v = luma[y * width + dx] ?? 0
        if (v > hi) hi = v
        if (v < lo) lo = v
      }
      rowMax[y * width + x] = hi
      rowMin[y * width + x] = lo
    }
  }
  const range = new Float32Array(luma.length)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let hi = -Infinity
      let lo = Infinity
      for (let dy = Math.max(0, y - r); dy <= Math.min(height - 1, y + r); dy++) {
        const i = dy * width + x
        const max = rowMax[i] ?? 0
        const min = rowMin[i] ?? 0
        if (max > hi) hi = max
        if (min < lo) lo = min
      }
      range[y * width + x] = hi - lo
    }
  }
  return range
}

/**
 * Sobel gradients of each colour channel (so that a red shape on a blue ground of the same
 * lightness still has edges). A clean step of height C gives a gradient of 4C, so the gradient
 * over 4× the local range (the 9×9 neighbourhood's max − min, in the channel that varies most
 * there) is about 1 on a crisp edge and 2/w on an edge ramped over w pixels (0.25 at most
 * blurry, the window's limit). Its 98th percentile over the pixels with real local contrast is
 * the image's sharpness: the crispest edges decide, so a sharp subject before a soft background
 * counts as sharp.
 */
/** The Sobel gradient magnitude at interior pixel `i` of a row-major plane. */
function sobel(plane: Float32Array, i: number, width: number): number {
  const up = i - width
  const down = i + width
  const topLeft = plane[up - 1] ?? 0
  const topRight = plane[up + 1] ?? 0
  const bottomLeft = plane[down - 1] ?? 0
  const bottomRight = plane[down + 1] ?? 0
  const gx =
    topRight +
    2 * (plane[i + 1] ?? 0) +
    bottomRight -
    topLeft -
    2 * (plane[i - 1] ?? 0) -
    bottomLeft
  const gy =
    bottomLeft + 2 * (plane[down] ?? 0) + bottomRight - topLeft - 2 * (plane[up] ?? 0) - topRight
  return Math.sqrt(gx * gx + gy * gy)
}

function measureEdges(
  planes: readonly Float32Array[],
  width: number,
  height: number,
): Pick<Measured, 'edgeDensity' | 'sharpness' | 'detailCentre' | 'borderDetail'> {
  const ranges = planes.map((plane) => localRange(plane, width, height, SHARPNESS_WINDOW))
  // Crispness ratios in 0..1, kept as a 1000-bin histogram: a percentile without a sort.
  const ratios = new Uint32Array(RATIO_BINS)
  let candidates = 0
  const bandX = Math.max(1, Math.round(width * 0.03))
  const bandY = Math.max(1, Math.round(height * 0.03))
  let edges = 0
  let energy = 0
  let borderEnergy = 0
  let cx = 0
  let cy = 0
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x
      let gradient = 0
      let widest = 0
      let widestGradient = 0
      for (let c = 0; c < planes.length; c++) {
        const magnitude = sobel(planes[c] as Float32Array, i, width)
        if (magnitude > gradient) gradient = magnitude
        const range = (ranges[c] as Float32Array)[i] ?? 0
        if (range > widest) {
          widest = range
          widestGradient = magnitude
        }
      }
      if (gradient >= EDGE_GRADIENT) edges++
      energy += gradient
      cx += gradient * x
      cy += gradient * y
      if (x < bandX || y < bandY || x >= width - bandX || y >= height - bandY) {
        borderEnergy += gradient
      }
      if (widest >= SHARPNESS_MIN_RANGE) {
        const ratio = Math.min(1, widestGradient / (4 * widest))
        const bin = Math.min(RATIO_BINS - 1, Math.floor(ratio * RATIO_BINS))
        ratios[bin] = (ratios[bin] ?? 0) + 1
        candidates++
      }
    }
  }
  const interior = Math.max(1, (width - 2) * (height - 2))
  // Fewer than one pixel in 500 with real contrast: nothing to judge the focus by.
  const judgeable = candidates >= interior / 500
  const sharpness = judgeable
    ? round((percentile(Array.from(ratios), candidates, 0.98) + 0.5) / RATIO_BINS, 3)
    : null
  return {
    edgeDensity: round(edges / interior),
    sharpness,
    detailCentre:
      energy > 0
        ? { x: round(cx / energy / (width - 1), 3), y: round(cy / energy / (height - 1), 3) }
        : null,
    borderDetail: energy > 0 ? round(borderEnergy / energy) : 0,
  }
}

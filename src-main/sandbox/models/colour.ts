/** Colour helpers: HSL conversion, the colour words of prompts, and naming a colour in words. */

export type Rgb = readonly [r: number, g: number, b: number]

/** h in degrees, s and l in 0..1. */
export function hslToRgb(h: number, s: number, l: number): Rgb {
  const hue = (((h % 360) + 360) % 360) / 360
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s
  const p = 2 * l - q
  const channel = (offset: number): number => {
    let t = hue + offset
    if (t < 0) t += 1
    if (t > 1) t -= 1
    const value =
      t < 1 / 6
        ? p + (q - p) * 6 * t
        : t < 1 / 2
          ? q
          : t < 2 / 3
            ? p + (q - p) * (2 / 3 - t) * 6
            : p
    return Math.round(value * 255)
  }
  return [channel(1 / 3), channel(0), channel(-1 / 3)]
}

/** [h in degrees, s, l] of an sRGB colour with 0..255 channels. */
export function rgbToHsl([r, g, b]: Rgb): [h: number, s: number, l: number] {
  const rn = r / 255
  const gn = g / 255
  const bn = b / 255
  const max = Math.max(rn, gn, bn)
  const min = Math.min(rn, gn, bn)
  const l = (max + min) / 2
  if (max === min) return [0, 0, l]
  const d = max - min
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min)
  const h =
    max === rn
      ? (gn - bn) / d + (gn < bn ? 6 : 0)
      : max === gn
        ? (bn - rn) / d + 2
        : (rn - gn) / d + 4
  return [h * 60, s, l]
}

export function toHex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`
}

export function fromHex(hex: string): Rgb {
  const value = Number.parseInt(hex.replace(/^#/, ''), 16)
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255]
}

/** A colour as words: black, white, gray, red, orange, brown, yellow, green, cyan, blue, purple or pink. */
export function colourName(rgb: Rgb): string {
  const [h, s, l] = rgbToHsl(rgb)
  if (l < 0.13) return 'black'
  if (l > 0.9) return 'white'
  if (s < 0.15) return 'gray'
  if (h < 15 || h >= 345) return 'red'
  if (h < 45) return l < 0.38 ? 'brown' : 'orange'
  if (h < 70) return 'yellow'
  if (h < 165) return 'green'
  if (h < 200) return 'cyan'
  if (h < 255) return 'blue'
  if (h < 290) return 'purple'
  return 'pink'
}

/** A base colour for palettes: hue in degrees, saturation and lightness around which shades vary. */
export interface BaseColour {
  hue: number
  saturation: number
  lightness: number
  /** Lightness range of shades, kept so that every shade is still named like the base. */
  lightnessRange: readonly [number, number]
}

const HUED = (hue: number): BaseColour => ({
  hue,
  saturation: 0.72,
  lightness: 0.48,
  lightnessRange: [0.36, 0.62],
})

/** Colour words a prompt may use to steer the palette of a generated image. */
export const COLOUR_WORDS: Readonly<Record<string, BaseColour>> = {
  red: HUED(0),
  crimson: HUED(350),
  orange: { ...HUED(30), lightness: 0.52, lightnessRange: [0.45, 0.6] },
  yellow: { ...HUED(55), lightness: 0.55, lightnessRange: [0.45, 0.65] },
  gold: { ...HUED(52), lightness: 0.55, lightnessRange: [0.45, 0.65] },
  green: HUED(120),
  emerald: HUED(140),
  teal: HUED(180),
  cyan: HUED(185),
  blue: HUED(220),
  navy: { ...HUED(225), lightness: 0.3, lightnessRange: [0.2, 0.38] },
  purple: HUED(272),
  violet: HUED(270),
  pink: { ...HUED(325), lightness: 0.6, lightnessRange: [0.5, 0.7] },
  magenta: HUED(315),
  brown: { hue: 28, saturation: 0.55, lightness: 0.27, lightnessRange: [0.2, 0.34] },
  black: { hue: 0, saturation: 0.04, lightness: 0.06, lightnessRange: [0.02, 0.1] },
  white: { hue: 0, saturation: 0.04, lightness: 0.95, lightnessRange: [0.92, 0.98] },
  gray: { hue: 0, saturation: 0.03, lightness: 0.5, lightnessRange: [0.3, 0.7] },
  grey: { hue: 0, saturation: 0.03, lightness: 0.5, lightnessRange: [0.3, 0.7] },
}

/** The first colour word of a text, if any. */
export function colourWordOf(text: string): string | undefined {
  return text
    .toLowerCase()
    .split(/[^a-z]+/)
    .find((word) => Object.hasOwn(COLOUR_WORDS, word))
}

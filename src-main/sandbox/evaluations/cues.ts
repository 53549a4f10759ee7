/**
 * The measurable promises of a prompt: the words a deterministic judge can check against pixels.
 * Everything else in a prompt (subjects, styles, moods) is beyond what the sandbox measures, and
 * the prompt-adherence judge says so rather than guess.
 */
export type Cue =
  | { kind: 'colour'; word: string; names: readonly string[]; present: boolean }
  | { kind: 'brightness'; word: string; want: 'dark' | 'bright' }
  | { kind: 'monochrome'; word: string }
  | { kind: 'orientation'; word: string; want: 'portrait' | 'landscape' | 'square' }
  | { kind: 'detail'; word: string; want: 'minimal' | 'detailed' }

/** Colour words, and the colour names (see models/colour `colourName`) that count as them. */
const COLOUR_NAMES: Readonly<Record<string, readonly string[]>> = {
  red: ['red'],
  crimson: ['red', 'pink'],
  scarlet: ['red'],
  orange: ['orange'],
  yellow: ['yellow'],
  gold: ['yellow', 'orange'],
  golden: ['yellow', 'orange'],
  green: ['green'],
  emerald: ['green'],
  teal: ['cyan', 'green'],
  turquoise: ['cyan'],
  cyan: ['cyan'],
  blue: ['blue'],
  navy: ['blue'],
  purple: ['purple'],
  violet: ['purple'],
  lavender: ['purple', 'pink'],
  pink: ['pink'],
  magenta: ['pink', 'purple'],
  brown: ['brown', 'orange'],
  black: ['black'],
  white: ['white'],
  gray: ['gray'],
  grey: ['gray'],
}

const BRIGHTNESS_WORDS: Readonly<Record<string, 'dark' | 'bright'>> = {
  dark: 'dark',
  night: 'dark',
  nighttime: 'dark',
  midnight: 'dark',
  dim: 'dark',
  shadowy: 'dark',
  moody: 'dark',
  noir: 'dark',
  bright: 'bright',
  sunny: 'bright',
  sunlit: 'bright',
  daylight: 'bright',
  luminous: 'bright',
  airy: 'bright',
}

const DETAIL_WORDS: Readonly<Record<string, 'minimal' | 'detailed'>> = {
  minimal: 'minimal',
  minimalist: 'minimal',
  minimalistic: 'minimal',
  simple: 'minimal',
  plain: 'minimal',
  detailed: 'detailed',
  intricate: 'detailed',
  ornate: 'detailed',
  elaborate: 'detailed',
  busy: 'detailed',
}

const ORIENTATION_WORDS: Readonly<Record<string, 'portrait' | 'landscape'>> = {
  vertical: 'portrait',
  horizontal: 'landscape',
  panoramic: 'landscape',
  panorama: 'landscape',
  widescreen: 'landscape',
}

const NEGATIONS = new Set(['no', 'not', 'without', 'non', 'never', 'avoid'])

/** Phrases that would otherwise read as colour or shape words ("black and white", "a square"). */
const PHRASES: readonly [RegExp, (match: RegExpExecArray) => Cue][] = [
  [
    /\b(black and white|black & white|b&w|monochrome|monochromatic|grayscale|greyscale)\b/g,
    (m) => ({ kind: 'monochrome', word: m[1] ?? m[0] }),
  ],
  [
    /\b(square) (?:format|image|crop|aspect)\b/g,
    (m) => ({ kind: 'orientation', word: m[0], want: 'square' }),
  ],
  [
    /\b(portrait|landscape) (?:orientation|format)\b/g,
    (m) => ({
      kind: 'orientation',
      word: m[0],
      want: m[1] === 'portrait' ? 'portrait' : 'landscape',
    }),
  ],
  [
    /\b(\d{1,2}):(\d{1,2})\b/g,
    (m) => {
      const ratio = Number(m[1]) / Math.max(1, Number(m[2]))
      const want = ratio > 1.02 ? 'landscape' : ratio < 0.98 ? 'portrait' : 'square'
      return { kind: 'orientation', word: m[0], want }
    },
  ],
]

/**
 * The cues of the texts, each once: phrases first ("black and white", "9:16"), then single words
 * in order of appearance. A negated colour ("no red") becomes a cue that the colour is absent.
 */
export function cuesOf(...texts: (string | null | undefined)[]): Cue[] {
  const cues: Cue[] = []
  const seen = new Set<string>()
  const add = (cue: Cue): void => {
    const key = `${cue.kind}:${cue.kind === 'colour' ? `${cue.word}:${cue.present}` : 'want' in cue ? cue.want : ''}`
    if (seen.has(key)) return
    seen.add(key)
    cues.push(cue)
  }
  for (const text of texts) {
    if (!text) continue
    let rest = text.toLowerCase()
    for (const [pattern, cue] of PHRASES) {
      for (const match of rest.matchAll(pattern)) add(cue(match))
      rest = rest.replace(pattern, ' ')
    }
    const words = rest.split(/[^a-z]+/).filter(Boolean)
    words.forEach((word, index) => {
      const before = words[index - 1] ?? ''
      const negated =
        NEGATIONS.has(before) ||
        ((before === 'any' || before === 'a') && NEGATIONS.has(words[index - 2] ?? ''))
      const names = COLOUR_NAMES[word]
      if (names) {
        add({ kind: 'colour', word, names, present: !negated })
        return
      }
      if (negated) return
      const brightness = BRIGHTNESS_WORDS[word]
      if (brightness) add({ kind: 'brightness', word, want: brightness })
      const detail = DETAIL_WORDS[word]
      if (detail) add({ kind: 'detail', word, want: detail })
      const orientation = ORIENTATION_WORDS[word]
      if (orientation) add({ kind: 'orientation', word, want: orientation })
    })
  }
  return cues
}

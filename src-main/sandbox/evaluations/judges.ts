import type { ImageFacts, Region } from './analyse'
import type { Cue } from './cues'

export type Severity = 'low' | 'medium' | 'high'

export interface IssueSpec {
  code: string
  severity: Severity
  description: string
  region: Region | null
}

/** One sub-point of a judge: a measured value on one side of a line. */
export interface Check {
  name: string
  passed: boolean
  value: number | string | null
  expected: string
  /** 0.5 on the line, up to 0.99 far from it. */
  confidence: number
  evidence: string
  /** What goes wrong when the check fails (none when the judge reports one issue for many). */
  issue: IssueSpec | null
  /** A failed gate fails the evaluation whatever the score. */
  gate: string | null
}

export interface JudgeOutcome {
  name: string
  description: string
  category: string
  weight: number
  passed: boolean
  confidence: number
  reasoning: string
  /** Why the image is good at this, for `top_strengths`; only for passing judges. */
  strength: string | null
  checks: Check[]
}

export interface JudgeContext {
  jobClass: 'standard' | 'quick'
  /** The generation prompt and the evaluation instructions: what the prompt judge reads. */
  texts: string[]
  cues: Cue[]
  requested: { width: number | null; height: number | null; aspectRatio: number | null }
  references: { label: string; facts: ImageFacts }[]
}

interface Judge {
  name: string
  description: string
  category: string
  weight: number
  /** Quick evaluations run only these. */
  quick: boolean
  applies?: (context: JudgeContext) => boolean
  run: (facts: ImageFacts, context: JudgeContext) => Omit<JudgeOutcome, keyof JudgeMeta>
}

type JudgeMeta = Pick<JudgeOutcome, 'name' | 'description' | 'category' | 'weight'>

const fixed = (value: number, digits = 2): string => value.toFixed(digits)
const percent = (share: number): string =>
  `${share > 0 && share < 0.01 ? '<1' : String(Math.round(share * 100))}%`
const round2 = (value: number): number => Number(value.toFixed(2))

/** How clearly `distance` (signed, positive = passing) clears the line, in units of `scale`. */
function marginConfidence(distance: number, scale: number): number {
  return round2(0.5 + 0.49 * Math.min(1, Math.abs(distance) / scale))
}

interface CheckSpec {
  name: string
  value: number | string | null
  /** Signed distance to the line: ≥ 0 passes. */
  distance: number
  scale: number
  expected: string
  evidence: string
  issue: Omit<IssueSpec, 'region'> & { region?: Region | null }
  gate?: string
}

function check(spec: CheckSpec): Check {
  const passed = spec.distance >= 0
  return {
    name: spec.name,
    passed,
    value: spec.value,
    expected: spec.expected,
    confidence: marginConfidence(spec.distance, spec.scale),
    evidence: spec.evidence,
    issue: passed ? null : { ...spec.issue, region: spec.issue.region ?? null },
    gate: passed ? null : (spec.gate ?? null),
  }
}

/** A check that could not be measured: it passes, with little confidence, and says why. */
function unmeasured(name: string, expected: string, evidence: string): Check {
  return {
    name,
    passed: true,
    value: null,
    expected,
    confidence: 0.3,
    evidence,
    issue: null,
    gate: null,
  }
}

/** Passed when every check passed; the reasoning names the first failure, or the strength. */
function allOf(checks: Check[], strength: string): Omit<JudgeOutcome, keyof JudgeMeta> {
  const failed = checks.filter((c) => !c.passed)
  const confidence = round2(checks.reduce((sum, c) => sum + c.confidence, 0) / checks.length)
  if (failed.length === 0)
    return { passed: true, confidence, reasoning: strength, strength, checks }
  const first = failed[0]?.issue?.description ?? `The ${failed[0]?.name ?? ''} check failed.`
  const others = failed.length - 1
  const more =
    others === 0
      ? ''
      : others === 1
        ? ' One more of its checks failed too.'
        : ` ${String(others)} more of its checks failed too.`
  return { passed: false, confidence, reasoning: `${first}${more}`, strength: null, checks }
}

const hasCue = (context: JudgeContext, kind: Cue['kind'], want?: string): boolean =>
  context.cues.some(
    (cue) => cue.kind === kind && (want === undefined || ('want' in cue && cue.want === want)),
  )

const resolution: Judge = {
  name: 'resolution',
  description: 'Is the image large enough, and the size and aspect ratio that were requested?',
  category: 'technical',
  weight: 1,
  quick: true,
  run(facts, context) {
    const { width, height } = facts
    const shorter = Math.min(width, height)
    const size = `${String(width)}×${String(height)} px`
    const checks = [
      check({
        name: 'minimum_size',
        value: shorter,
        distance: shorter - 256,
        scale: 256,
        expected: 'shorter side of at least 256 px',
        evidence: `The image is ${size} (${facts.format.toUpperCase()}).`,
        issue: {
          code: 'too_small',
          severity: 'high',
          description: `The image is only ${size}; its shorter side should be at least 256 px.`,
        },
        gate: 'minimum_size',
      }),
    ]
    const { width: wantedWidth, height: wantedHeight, aspectRatio } = context.requested
    if (wantedWidth !== null && wantedHeight !== null) {
      const off = Math.max(
        Math.abs(width - wantedWidth) / wantedWidth,
        Math.abs(height - wantedHeight) / wantedHeight,
      )
      const wanted = `${String(wantedWidth)}×${String(wantedHeight)} px`
      checks.push(
        check({
          name: 'requested_size',
          value: `${String(width)}x${String(height)}`,
          distance: 0.01 - off,
          scale: 0.05,
          expected: `${wanted} (within 1%)`,
          evidence: `${wanted} was requested; the image is ${size}.`,
          issue: {
            code: 'size_mismatch',
            severity: 'medium',
            description: `The image is ${size} but ${wanted} was requested.`,
          },
        }),
      )
    } else if (aspectRatio !== null) {
      const ratio = width / height
      const off = Math.abs(ratio - aspectRatio) / aspectRatio
      checks.push(
        check({
          name: 'requested_aspect_ratio',
          value: Number(ratio.toFixed(4)),
          distance: 0.02 - off,
          scale: 0.1,
          expected: `${fixed(aspectRatio, 4)} (within 2%)`,
          evidence: `An aspect ratio of ${fixed(aspectRatio, 3)} was requested; the image's is ${fixed(ratio, 3)}.`,
          issue: {
            code: 'aspect_mismatch',
            severity: 'medium',
            description: `The image's aspect ratio is ${fixed(ratio, 3)} but ${fixed(aspectRatio, 3)} was requested.`,
          },
        }),
      )
    }
    const asRequested = checks.length > 1 ? ', as requested' : ''
    return allOf(checks, `The image is ${size}${asRequested}.`)
  },
}

const exposure: Judge = {
  name: 'exposure',
  description:
    'Is the image neither too dark nor too bright, with detail kept in shadows and highlights?',
  category: 'technical',
  weight: 1,
  quick: true,
  run(facts, context) {
    // A prompt that asks for a night scene (or a sunlit one) moves the line it asked to cross.
    const low = hasCue(context, 'brightness', 'dark') ? 0.03 : 0.15
    const high = hasCue(context, 'brightness', 'bright') ? 0.97 : 0.85
    const b = facts.brightness
    const checks = [
      check({
        name: 'brightness',
        value: b,
        distance: Math.min(b - low, high - b),
        scale: 0.15,
        expected: `mean brightness between ${fixed(low)} and ${fixed(high)}`,
        evidence: `Mean brightness is ${fixed(b)} of 1.`,
        issue: {
          code: b < low ? 'underexposed' : 'overexposed',
          severity: 'medium',
          description:
            b < low
              ? `The image is too dark (mean brightness ${fixed(b)} of 1).`
              : `The image is too bright (mean brightness ${fixed(b)} of 1).`,
        },
      }),
      check({
        name: 'highlight_clipping',
        value: facts.highlightsClipped,
        distance: 0.25 - facts.highlightsClipped,
        scale: 0.25,
        expected: 'at most 25% of the pixels pure white',
        evidence: `${percent(facts.highlightsClipped)} of the pixels are pure white.`,
        issue: {
          code: 'highlights_clipped',
          severity: 'low',
          description: `${percent(facts.highlightsClipped)} of the image is pure white, with no detail left in the highlights.`,
          region: facts.highlightRegion,
        },
      }),
      check({
        name: 'shadow_clipping',
        value: facts.shadowsClipped,
        distance: 0.25 - facts.shadowsClipped,
        scale: 0.25,
        expected: 'at most 25% of the pixels pure black',
        evidence: `${percent(facts.shadowsClipped)} of the pixels are pure black.`,
        issue: {
          code: 'shadows_crushed',
          severity: 'low',
          description: `${percent(facts.shadowsClipped)} of the image is pure black, with no detail left in the shadows.`,
          region: facts.shadowRegion,
        },
      }),
    ]
    const clipped = facts.highlightsClipped + facts.shadowsClipped
    return allOf(
      checks,
      `Well exposed: mean brightness ${fixed(b)}, with ${percent(clipped)} of the pixels clipped.`,
    )
  },
}

const contrast: Judge = {
  name: 'contrast',
  description: 'Does the image use a good range of tones rather than looking flat or washed out?',
  category: 'technical',
  weight: 0.75,
  quick: false,
  run(facts) {
    const checks = [
      check({
        name: 'tonal_spread',
        value: facts.contrast,
        distance: facts.contrast - 0.08,
        scale: 0.08,
        expected: 'luminance spread (standard deviation) of at least 0.08',
        evidence: `The luminance spread is ${fixed(facts.contrast, 3)} of 1.`,
        issue: {
          code: 'flat_tones',
          severity: 'medium',
          description: `The tones are flat (spread ${fixed(facts.contrast, 3)} of 1); the image looks washed out.`,
        },
      }),
      check({
        name: 'dynamic_range',
        value: facts.dynamicRange,
        distance: facts.dynamicRange - 0.3,
        scale: 0.3,
        expected: 'at least 30% of the tonal range used',
        evidence: `${percent(facts.dynamicRange)} of the tonal range is used (1st to 99th percentile).`,
        issue: {
          code: 'narrow_range',
          severity: 'low',
          description: `Only ${percent(facts.dynamicRange)} of the tonal range is used; there are no real darks and lights.`,
        },
      }),
    ]
    return allOf(checks, `Good tonal range: ${percent(facts.dynamicRange)} of the scale is used.`)
  },
}

const sharpness: Judge = {
  name: 'sharpness',
  description: 'Are the edges of the image crisp rather than blurred?',
  category: 'technical',
  weight: 1,
  quick: true,
  run(facts) {
    const s = facts.sharpness
    if (s === null) {
      const checks = [
        unmeasured(
          'edge_sharpness',
          'crispest edges scoring at least 0.6 of 1',
          'No edge has enough contrast to judge the focus by.',
        ),
      ]
      return {
        passed: true,
        confidence: 0.3,
        reasoning:
          'No edge has enough contrast to judge the focus by, so the image is given the benefit of the doubt.',
        strength: null,
        checks,
      }
    }
    const width = Math.max(1, Math.round(2 / Math.max(s, 0.01)))
    const checks = [
      check({
        name: 'edge_sharpness',
        value: s,
        distance: s - 0.6,
        scale: 0.3,
        expected: 'crispest edges scoring at least 0.6 of 1',
        evidence: `The crispest edges score ${fixed(s)} of 1 (about ${String(width)} px wide at 512 px).`,
        issue: {
          code: 'soft_focus',
          severity: s < 0.35 ? 'high' : 'medium',
          description: `The image looks soft: its crispest edges score ${fixed(s)} of 1, about ${String(width)} px wide.`,
        },
      }),
    ]
    return allOf(checks, `Crisp edges: sharpness ${fixed(s)} of 1.`)
  },
}

const detail: Judge = {
  name: 'detail',
  description:
    'Does the image carry content: more than one flat colour, with tonal detail and defined edges?',
  category: 'content',
  weight: 0.75,
  quick: false,
  run(facts, context) {
    const flat = facts.palette[0]?.hex ?? 'one colour'
    const checks = [
      check({
        name: 'not_blank',
        value: facts.colourSpread,
        distance: facts.colourSpread - 0.02,
        scale: 0.05,
        expected: 'not a single flat colour (colour spread of at least 0.02)',
        evidence: `The colour spread is ${fixed(facts.colourSpread, 3)} of 1; the commonest colour is ${flat}.`,
        issue: {
          code: 'blank_image',
          severity: 'high',
          description: `The image is nearly one flat colour (${flat}); there is nothing to evaluate.`,
        },
        gate: 'not_blank',
      }),
    ]
    if (hasCue(context, 'detail', 'minimal')) {
      checks.push(
        unmeasured(
          'information',
          'a minimal image, as the prompt asks',
          'The prompt asks for a minimal image, so little detail is not held against it.',
        ),
      )
    } else {
      checks.push(
        check({
          name: 'information',
          value: facts.entropy,
          distance: facts.entropy - 4.5,
          scale: 2,
          expected: 'at least 4.5 bits of tonal information (of 8)',
          evidence: `The image carries ${fixed(facts.entropy)} bits of tonal information (of 8).`,
          issue: {
            code: 'little_detail',
            severity: 'low',
            description: `The image carries little tonal information (${fixed(facts.entropy)} bits of 8).`,
          },
        }),
        check({
          name: 'edges',
          value: facts.edgeDensity,
          distance: facts.edgeDensity - 0.005,
          scale: 0.02,
          expected: 'defined edges on at least 0.5% of the image',
          evidence: `${percent(facts.edgeDensity)} of the pixels lie on a defined edge.`,
          issue: {
            code: 'few_edges',
            severity: 'low',
            description: `Hardly anything in the image has a defined edge (${percent(facts.edgeDensity)} of the pixels).`,
          },
        }),
      )
    }
    return allOf(
      checks,
      `Rich in detail: ${fixed(facts.entropy)} bits of tonal information, edges on ${percent(facts.edgeDensity)} of the image.`,
    )
  },
}

const THIRDS = [
  [1 / 3, 1 / 3],
  [2 / 3, 1 / 3],
  [1 / 3, 2 / 3],
  [2 / 3, 2 / 3],
] as const

function whereIs(x: number, y: number): string {
  const vertical = y < 0.4 ? 'top' : y > 0.6 ? 'bottom' : ''
  const horizontal = x < 0.4 ? 'left' : x > 0.6 ? 'right' : ''
  return [vertical, horizontal].filter(Boolean).join('-') || 'centre'
}

const composition: Judge = {
  name: 'composition',
  description:
    'Is the centre of interest balanced (near the middle or on a rule-of-thirds point) and clear of the frame edges?',
  category: 'composition',
  weight: 0.75,
  quick: false,
  run(facts) {
    const centre = facts.detailCentre
    if (centre === null) {
      const checks = [
        unmeasured('balance', 'a balanced centre of interest', 'There is no detail to compose.'),
      ]
      return {
        passed: true,
        confidence: 0.3,
        reasoning: 'There is no detail in the image to judge the composition by.',
        strength: null,
        checks,
      }
    }
    const fromCentre = Math.hypot(centre.x - 0.5, centre.y - 0.5)
    const fromThirds = Math.min(...THIRDS.map(([x, y]) => Math.hypot(centre.x - x, centre.y - y)))
    const onThirds = fromThirds <= 0.1 && fromCentre > 0.2
    const box: Region = {
      x: Math.max(0, Math.round((centre.x - 0.15) * facts.width)),
      y: Math.max(0, Math.round((centre.y - 0.15) * facts.height)),
      width: Math.round(0.3 * facts.width),
      height: Math.round(0.3 * facts.height),
    }
    const at = `${percent(centre.x)} across, ${percent(centre.y)} down`
    const checks = [
      check({
        name: 'balance',
        value: Number(fromCentre.toFixed(3)),
        distance: Math.max(0.2 - fromCentre, 0.1 - fromThirds),
        scale: 0.15,
        expected: 'centre of interest within 0.2 of the middle, or within 0.1 of a thirds point',
        evidence: `The centre of interest is ${at}.`,
        issue: {
          code: 'off_balance',
          severity: 'low',
          description: `The detail is bunched toward the ${whereIs(centre.x, centre.y)} (${at}); the composition feels lopsided.`,
          region: box,
        },
      }),
      check({
        name: 'framing',
        value: facts.borderDetail,
        distance: 0.25 - facts.borderDetail,
        scale: 0.25,
        expected: 'at most 25% of the detail in the outer 3% of the frame',
        evidence: `${percent(facts.borderDetail)} of the detail lies along the frame's edges.`,
        issue: {
          code: 'crowded_edges',
          severity: 'low',
          description: `${percent(facts.borderDetail)} of the detail touches the frame's edges; the subject may be cut off.`,
        },
      }),
    ]
    return allOf(
      checks,
      onThirds
        ? 'Balanced composition: the centre of interest sits on a rule-of-thirds point.'
        : 'Balanced composition: the centre of interest sits near the middle.',
    )
  },
}

function describeColourfulness(m: number): string {
  if (m < 15) return 'hardly colourful'
  if (m < 33) return 'slightly colourful'
  if (m < 59) return 'moderately colourful'
  if (m < 82) return 'quite colourful'
  return 'highly colourful'
}

const colour: Judge = {
  name: 'colour',
  description: 'Is the colour lively without being garish, and not one colour everywhere?',
  category: 'aesthetic',
  weight: 0.5,
  quick: false,
  run(facts, context) {
    const monochrome = hasCue(context, 'monochrome')
    const m = facts.colourfulness
    const low = monochrome ? 0 : 8
    const [leading, share] = Object.entries(facts.colourShares).reduce<[string, number]>(
      (best, entry) => (entry[1] > best[1] ? entry : best),
      ['none', 0],
    )
    const checks = [
      check({
        name: 'colourfulness',
        value: m,
        distance: Math.min(m - low, 120 - m),
        scale: 20,
        expected: monochrome
          ? 'colourfulness of at most 120 (black and white requested)'
          : 'colourfulness between 8 and 120',
        evidence: `Colourfulness is ${fixed(m, 1)} (${describeColourfulness(m)}).`,
        issue:
          m < low
            ? {
                code: 'dull_colours',
                severity: 'low',
                description: `The colours are dull (colourfulness ${fixed(m, 1)}); the image looks grey.`,
              }
            : {
                code: 'garish_colours',
                severity: 'low',
                description: `The colours are garish (colourfulness ${fixed(m, 1)}).`,
              },
      }),
      check({
        name: 'variety',
        value: share,
        distance: 0.9 - share,
        scale: 0.2,
        expected: 'no single colour on more than 90% of the image',
        evidence: `The commonest colour, ${leading}, covers ${percent(share)} of the image.`,
        issue: {
          code: 'single_colour',
          severity: 'low',
          description: `One colour (${leading}) covers ${percent(share)} of the image.`,
        },
      }),
    ]
    const lead = facts.palette[0]
    return allOf(
      checks,
      `Pleasant colour: ${describeColourfulness(m)}${lead ? `, led by ${lead.name} (${lead.hex})` : ''}.`,
    )
  },
}

function cueCheck(cue: Cue, facts: ImageFacts): Check {
  switch (cue.kind) {
    case 'colour': {
      const share = cue.names.reduce((sum, name) => sum + (facts.colourShares[name] ?? 0), 0)
      const measured = `${percent(share)} of the image is ${cue.word}.`
      return cue.present
        ? check({
            name: `colour_${cue.word}`,
            value: Number(share.toFixed(4)),
            distance: share - 0.08,
            scale: 0.15,
            expected: `${cue.word} on at least 8% of the image`,
            evidence: `The prompt asks for ${cue.word}: ${measured}`,
            issue: {
              code: 'missing_colour',
              severity: 'high',
              description: `The prompt asks for ${cue.word}, but ${share === 0 ? 'none' : `only ${percent(share)}`} of the image is ${cue.word}.`,
            },
          })
        : check({
            name: `no_${cue.word}`,
            value: Number(share.toFixed(4)),
            distance: 0.03 - share,
            scale: 0.1,
            expected: `${cue.word} on at most 3% of the image`,
            evidence: `The prompt asks for no ${cue.word}: ${measured}`,
            issue: {
              code: 'unwanted_colour',
              severity: 'high',
              description: `The prompt asks for no ${cue.word}, yet ${percent(share)} of the image is ${cue.word}.`,
            },
          })
    }
    case 'brightness': {
      const b = facts.brightness
      const dark = cue.want === 'dark'
      return check({
        name: `brightness_${cue.want}`,
        value: b,
        distance: dark ? 0.4 - b : b - 0.5,
        scale: 0.2,
        expected: dark ? 'mean brightness of at most 0.40' : 'mean brightness of at least 0.50',
        evidence: `"${cue.word}" asks for a ${cue.want} image; its mean brightness is ${fixed(b)}.`,
        issue: {
          code: dark ? 'too_bright_for_prompt' : 'too_dark_for_prompt',
          severity: 'medium',
          description: `The prompt says "${cue.word}", but the image is ${dark ? 'bright' : 'dark'} (mean brightness ${fixed(b)}).`,
        },
      })
    }
    case 'monochrome':
      return check({
        name: 'monochrome',
        value: facts.saturation,
        distance: 0.08 - facts.saturation,
        scale: 0.1,
        expected: 'mean saturation of at most 0.08',
        evidence: `"${cue.word}" asks for no colour; the mean saturation is ${fixed(facts.saturation)}.`,
        issue: {
          code: 'not_monochrome',
          severity: 'high',
          description: `The prompt asks for ${cue.word}, but the image is in colour (saturation ${fixed(facts.saturation)}).`,
        },
      })
    case 'orientation': {
      const ratio = facts.width / facts.height
      const distance =
        cue.want === 'portrait'
          ? 0.98 - ratio
          : cue.want === 'landscape'
            ? ratio - 1.02
            : 0.02 - Math.abs(ratio - 1)
      const shape = ratio > 1.02 ? 'landscape' : ratio < 0.98 ? 'portrait' : 'square'
      return check({
        name: `orientation_${cue.want}`,
        value: Number(ratio.toFixed(4)),
        distance,
        scale: 0.2,
        expected: `a ${cue.want} image`,
        evidence: `"${cue.word}" asks for a ${cue.want} image; it is ${String(facts.width)}×${String(facts.height)} (${shape}).`,
        issue: {
          code: 'wrong_orientation',
          severity: 'medium',
          description: `The prompt asks for a ${cue.want} image, but it is ${shape} (${String(facts.width)}×${String(facts.height)}).`,
        },
      })
    }
    case 'detail': {
      const minimal = cue.want === 'minimal'
      const e = facts.edgeDensity
      return check({
        name: `detail_${cue.want}`,
        value: e,
        distance: minimal ? 0.05 - e : Math.min(e - 0.03, (facts.entropy - 5) / 10),
        scale: 0.05,
        expected: minimal
          ? 'defined edges on at most 5% of the image'
          : 'defined edges on at least 3% of the image and 5 bits of tonal information',
        evidence: `"${cue.word}": edges on ${percent(e)} of the image, ${fixed(facts.entropy)} bits of tonal information.`,
        issue: {
          code: minimal ? 'too_busy' : 'too_plain',
          severity: 'medium',
          description: minimal
            ? `The prompt asks for a ${cue.word} image, but it is busy (edges on ${percent(e)} of it).`
            : `The prompt asks for a ${cue.word} image, but it is plain (edges on ${percent(e)} of it).`,
        },
      })
    }
  }
}

const promptAdherence: Judge = {
  name: 'prompt_adherence',
  description:
    'Does the image keep the measurable promises of the prompt and instructions: colours, brightness, black and white, orientation, level of detail?',
  category: 'prompt',
  weight: 2,
  quick: true,
  applies: (context) => context.texts.length > 0,
  run(facts, context) {
    if (context.cues.length === 0) {
      return {
        passed: true,
        confidence: 0.3,
        reasoning:
          'The prompt names nothing the sandbox can measure (colours, brightness, black and white, orientation, level of detail), so this judge does not count toward the score.',
        strength: null,
        checks: [],
      }
    }
    const checks = context.cues.map((cue) => cueCheck(cue, facts))
    const kept = checks.filter((c) => c.passed).length
    const total = checks.length
    // A miss among many promises is a blemish; the judge fails when more than a quarter miss.
    const passed = kept / total >= 0.75
    const mean = checks.reduce((sum, c) => sum + c.confidence, 0) / total
    const confidence = round2(mean * Math.min(1, 0.6 + 0.1 * total))
    const holding =
      kept === 0
        ? `None of the ${String(total)} measurable promises of the prompt hold`
        : `${String(kept)} of the ${String(total)} measurable promises of the prompt hold`
    const firstMiss = checks.find((c) => !c.passed)?.issue?.description
    return {
      passed,
      confidence,
      reasoning: firstMiss
        ? `${holding}. ${firstMiss}`
        : total === 1
          ? 'The one measurable promise of the prompt holds.'
          : `All ${String(total)} measurable promises of the prompt hold.`,
      strength: passed ? `Follows the prompt: ${holding}.` : null,
      checks,
    }
  },
}

/** Colour-histogram intersection (70%) and brightness agreement (30%), 0..1. */
function similarity(a: ImageFacts, b: ImageFacts): number {
  let overlap = 0
  a.colourHistogram.forEach((share, i) => {
    overlap += Math.min(share, b.colourHistogram[i] ?? 0)
  })
  const brightness = 1 - Math.min(1, Math.abs(a.brightness - b.brightness) / 0.5)
  return Number((0.7 * overlap + 0.3 * brightness).toFixed(4))
}

const referenceSimilarity: Judge = {
  name: 'reference_similarity',
  description:
    'Does the image resemble at least one of the reference images in colour and brightness?',
  category: 'reference',
  weight: 1,
  quick: false,
  applies: (context) => context.references.length > 0,
  run(facts, context) {
    const scored = context.references.map(({ label, facts: reference }) => ({
      label,
      score: similarity(facts, reference),
    }))
    const best = scored.reduce((a, b) => (b.score > a.score ? b : a))
    const passed = best.score >= 0.5
    const mismatch = `The image's colours match none of the reference images closely (best similarity ${fixed(best.score)} of 1).`
    const checks = scored.map((reference) => {
      const result = check({
        name: reference.label.toLowerCase().replaceAll(' ', '_'),
        value: reference.score,
        distance: reference.score - 0.5,
        scale: 0.3,
        expected: 'similarity of at least 0.5 of 1',
        evidence: `${reference.label}: similarity ${fixed(reference.score)} of 1.`,
        issue: { code: 'reference_mismatch', severity: 'medium', description: mismatch },
      })
      // One close reference is enough, so only the best one speaks for a failing judge.
      return reference === best && !passed ? result : { ...result, issue: null }
    })
    const name = best.label.toLowerCase()
    return {
      passed,
      confidence: marginConfidence(best.score - 0.5, 0.3),
      reasoning: passed
        ? `The image resembles ${name} (similarity ${fixed(best.score)} of 1).`
        : mismatch,
      strength: passed ? `Close to ${name}: similarity ${fixed(best.score)} of 1.` : null,
      checks,
    }
  },
}

const JUDGES: readonly Judge[] = [
  resolution,
  exposure,
  contrast,
  sharpness,
  detail,
  composition,
  colour,
  promptAdherence,
  referenceSimilarity,
]

/**
 * Every judge that applies to this evaluation, in a fixed order: pure functions of the measured
 * facts and the request, so the same image and request always get the same verdict.
 */
export function runJudges(facts: ImageFacts, context: JudgeContext): JudgeOutcome[] {
  return JUDGES.filter(
    (judge) =>
      (context.jobClass === 'standard' || judge.quick) && (judge.applies?.(context) ?? true),
  ).map((judge) => {
    const outcome = judge.run(facts, context)
    const counts = judge !== promptAdherence || outcome.checks.length > 0
    return {
      name: judge.name,
      description: judge.description,
      category: judge.category,
      // A judge with nothing to measure says so and does not move the score.
      weight: counts ? judge.weight : 0,
      ...outcome,
    }
  })
}

// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest'
import {
  paletteScore,
  rankGroups,
  type PaletteEntry,
} from '../../src-renderer/src/shell/CommandPalette'

const entry = (label: string, keywords: string[] = []): PaletteEntry => ({
  value: label,
  label,
  keywords,
  run: () => undefined,
})

const theme = entry('Switch to the light theme', ['theme', 'appearance', 'dark', 'light', 'mode'])
const upscale = entry('Image to upscaled image', [
  'Doubles the width and height of an image with Atelier Upscale.',
])

describe('the palette ranking', () => {
  it('puts a name that starts with the words above a word of the name, above a fuzzy name, above keywords', () => {
    const starts = paletteScore(entry('Theme editor'), 'theme')
    const word = paletteScore(theme, 'theme')
    const fuzzy = paletteScore(entry('The meeting notes'), 'theme')
    const described = paletteScore(upscale, 'theme')
    expect(described).toBeGreaterThan(0)
    expect(starts).toBeGreaterThan(word)
    expect(word).toBeGreaterThan(fuzzy)
    expect(fuzzy).toBeGreaterThan(described)
    expect(paletteScore(entry('Sync now'), 'theme')).toBe(0)
  })

  it('lists the group with the best match first, whatever the given order', () => {
    const groups = rankGroups(
      [
        { heading: 'Flows', entries: [upscale] },
        { heading: 'Go to', entries: [entry('Go to Runs')] },
        { heading: 'Actions', entries: [entry('Sync now'), theme] },
      ],
      'theme',
    )
    expect(groups.map((group) => [group.heading, group.entries.map((e) => e.label)])).toEqual([
      ['Actions', ['Switch to the light theme']],
      ['Flows', ['Image to upscaled image']],
      ['Go to', []],
    ])
  })
})

import type { SearchSnippet } from '../../src-shared/domain/search'
import { spansOf, startsAt, type Phrase } from './text'

/**
 * Snippets are cut here, from the stored text, rather than by FTS5's snippet(): that needs the
 * query run again for the one row, and for a common word FTS5 reads a large part of the word's
 * list to find a single row (over a millisecond a row on a large mirror).
 */

const SNIPPET_TOKENS = 16
/** Tokens shown before the first match in a long text, so it reads in context. */
const LEAD = 3

/**
 * An excerpt of `text` around its densest run of matched words, or null when no word matches
 * (so the caller can try the record's next column).
 */
export function snippetOf(text: string | null, phrases: readonly Phrase[]): SearchSnippet | null {
  if (text === null || text === '') return null
  const flat = text.replace(/\s+/g, ' ').trim()
  const spans = spansOf(flat)
  const tokens = spans.map((span) => span.token)
  const hit = new Array<boolean>(spans.length).fill(false)
  for (let at = 0; at < tokens.length; at++) {
    for (const phrase of phrases) {
      if (!startsAt(tokens, at, phrase)) continue
      for (let k = 0; k < phrase.tokens.length; k++) hit[at + k] = true
    }
  }
  const hits = hit.flatMap((isHit, i) => (isHit ? [i] : []))
  if (hits.length === 0) return null
  let first = 0
  let last = spans.length - 1
  if (spans.length > SNIPPET_TOKENS) {
    let best = -1
    for (const at of hits) {
      const start = Math.max(0, Math.min(at - LEAD, spans.length - SNIPPET_TOKENS))
      const count = hits.filter((h) => h >= start && h < start + SNIPPET_TOKENS).length
      if (count > best) {
        best = count
        first = start
      }
    }
    last = first + SNIPPET_TOKENS - 1
  }
  const from = first === 0 ? 0 : (spans[first]?.start ?? 0)
  const to = last === spans.length - 1 ? flat.length : (spans[last]?.end ?? flat.length)
  const lead = from > 0 ? '…' : ''
  const highlights: [number, number][] = []
  for (let i = first; i <= last; i++) {
    const span = spans[i]
    if (span && hit[i])
      highlights.push([span.start - from + lead.length, span.end - from + lead.length])
  }
  return { text: `${lead}${flat.slice(from, to)}${to < flat.length ? '…' : ''}`, highlights }
}

/** A title of at most `max` characters, on one line. */
export function shorten(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`
}

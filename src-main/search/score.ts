import { occurrences, tokensOf, type Phrase } from './text'

/**
 * BM25, computed here from the matched records' text instead of by FTS5's bm25(). FTS5 counts,
 * for every query, how many rows hold each word by reading the word's whole list: for a word in
 * half of a million-row mirror that alone takes over ten milliseconds, whatever the LIMIT. Here
 * that count is estimated from how densely the word's newest matches are packed (`density`),
 * which needs a thousand index entries at most, and the rest is FTS5's formula: each column's
 * hits weighted, k1 = 1.2, b = 0.75, an idf that never drops below a millionth.
 */

const K1 = 1.2
const B = 0.75

/** Rows holding a word, estimated: all of them when few, else their density times the rows. */
export function documentFrequency(
  sampled: number,
  sample: number,
  oldestSampledRowid: number,
  newestRowid: number,
): number {
  if (sampled < sample) return sampled
  return (sample * newestRowid) / Math.max(1, newestRowid - oldestSampledRowid + 1)
}

export function idf(rows: number, holding: number): number {
  const value = Math.log((rows - holding + 0.5) / (holding + 0.5))
  return value > 0 ? value : 1e-6
}

/**
 * The relevance (higher is better) of each record, from the text of its indexed columns. The
 * average length is the matched records' own, which is close enough to rank them among
 * themselves.
 */
export function bm25(
  records: readonly (readonly (string | null)[])[],
  phrases: readonly Phrase[],
  idfs: readonly number[],
  columnWeights: readonly number[],
): number[] {
  const least = Math.min(...columnWeights)
  const lengths: number[] = []
  const hits: number[][] = []
  for (const texts of records) {
    let length = 0
    const weighted = new Array<number>(phrases.length).fill(0)
    texts.forEach((text, column) => {
      if (!text) return
      const tokens = tokensOf(text)
      length += tokens.length
      phrases.forEach((phrase, i) => {
        weighted[i] =
          (weighted[i] ?? 0) + (columnWeights[column] ?? 1) * occurrences(tokens, phrase)
      })
    })
    lengths.push(length)
    // The index matched every word here, so each counts once at least.
    hits.push(weighted.map((w) => (w > 0 ? w : least)))
  }
  const average = Math.max(1, lengths.reduce((sum, n) => sum + n, 0) / Math.max(1, lengths.length))
  return hits.map((weighted, r) => {
    const norm = K1 * (1 - B + (B * (lengths[r] ?? 0)) / average)
    return weighted.reduce((score, w, i) => score + ((idfs[i] ?? 0) * w * (K1 + 1)) / (w + norm), 0)
  })
}

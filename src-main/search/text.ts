/**
 * Words as the search index sees them, for what is computed here from stored text (scores,
 * snippets). The index's tokenizer is unicode61 with diacritics removed: runs of letters,
 * digits and marks, folded to lower case without diacritics. This follows it closely enough
 * to count and highlight; a record the index matched counts as matching each word at least
 * once even if a rare character is split differently here.
 */

const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu
const FOLDED_TOKEN = /[\p{L}\p{N}\p{Co}]+/gu
const WORD = /[\p{L}\p{N}]/u

export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
}

/** The tokens of a text, folded, in order. */
export function tokensOf(text: string): string[] {
  return fold(text).match(FOLDED_TOKEN) ?? []
}

/** The tokens of a text with where each starts and ends in it (for highlighting). */
export function spansOf(text: string): { token: string; start: number; end: number }[] {
  return [...text.matchAll(TOKEN)].map((m) => ({
    token: fold(m[0]),
    start: m.index,
    end: m.index + m[0].length,
  }))
}

/** One word of a search: its tokens in order (`text-to-image` is three), the last one maybe a prefix. */
export interface Phrase {
  tokens: string[]
  prefix: boolean
}

/** The words of a search with a letter or a digit; the last is a prefix when `prefixLast`. */
export function phrasesOf(text: string, prefixLast: boolean): Phrase[] {
  const words = text.split(/\s+/).filter((word) => WORD.test(word))
  return words
    .map((word, i) => ({ tokens: tokensOf(word), prefix: prefixLast && i === words.length - 1 }))
    .filter((phrase) => phrase.tokens.length > 0)
}

/** Whether the phrase starts at token `at`. */
export function startsAt(tokens: readonly string[], at: number, phrase: Phrase): boolean {
  const last = phrase.tokens.length - 1
  for (let k = 0; k <= last; k++) {
    const token = tokens[at + k]
    const wanted = phrase.tokens[k] ?? ''
    if (token === undefined) return false
    if (k === last && phrase.prefix ? !token.startsWith(wanted) : token !== wanted) return false
  }
  return true
}

export function occurrences(tokens: readonly string[], phrase: Phrase): number {
  let count = 0
  for (let at = 0; at < tokens.length; at++) if (startsAt(tokens, at, phrase)) count++
  return count
}

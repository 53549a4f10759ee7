/**
 * The words for a code the service sends (a run's status, a delivery's state): ours for the
 * codes this version knows, else the code itself made readable (`on_hold` → "On hold"). A newer
 * service may send codes this client has never seen; they are shown, never left blank. (Found
 * against a service generated from the contract: a run whose status was new to us showed an
 * empty status chip.) The one place the screens turn such codes into words.
 */
export function codeWords(words: Readonly<Record<string, string>>, code: string): string {
  if (Object.hasOwn(words, code)) return words[code] ?? code
  const text = code.replace(/[_\s]+/g, ' ').trim()
  return text === '' ? code : text.charAt(0).toUpperCase() + text.slice(1)
}

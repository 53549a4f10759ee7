/**
 * Every form a key could take on its way out: as is, through the usual encoders (the list of
 * `test/integration/sentinel.test.ts`), and its first 12 characters, since a truncated key is
 * still a leak.
 */
export function keyForms(key: string): Record<string, Buffer> {
  return {
    utf8: Buffer.from(key, 'utf8'),
    utf16le: Buffer.from(key, 'utf16le'),
    base64: Buffer.from(Buffer.from(key).toString('base64')),
    base64url: Buffer.from(Buffer.from(key).toString('base64url')),
    url: Buffer.from(encodeURIComponent(key)),
    json: Buffer.from(JSON.stringify(key).slice(1, -1)),
    bearer: Buffer.from(`Bearer ${key}`),
    prefix12: Buffer.from(key.slice(0, 12)),
  }
}

/** The names of the forms of `key` found in `text` (its UTF-8 bytes); empty when none is. */
export function keyFormsIn(text: string, key: string): string[] {
  const bytes = Buffer.from(text, 'utf8')
  return Object.entries(keyForms(key))
    .filter(([, needle]) => bytes.includes(needle))
    .map(([form]) => form)
}

// The one masking of secrets in text: the log's lines and the service client's errors both use it,
// and it lives here, below both, so that the log needs nothing from the service.
export const REDACTED = '[REDACTED]'

// A token that reaches a message through some path we did not foresee (a
// service echoing the header, a proxy's debug page) is still caught by shape.
const BEARER_TOKEN = /\b(Bearer)\s+[^\s"',;]+/gi

/** Replaces every occurrence of each secret, and any `Bearer <token>`, with a marker. */
export function redact(text: string, secrets: readonly (string | null | undefined)[]): string {
  let out = text
  for (const secret of secrets) {
    // An empty secret would match between every character.
    if (secret) out = out.replaceAll(secret, REDACTED)
  }
  return out.replace(BEARER_TOKEN, `$1 ${REDACTED}`)
}

/** `redact` applied to every string inside a parsed JSON value. */
export function redactDeep(
  value: unknown,
  secrets: readonly (string | null | undefined)[],
): unknown {
  if (typeof value === 'string') return redact(value, secrets)
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, secrets))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [redact(key, secrets), redactDeep(item, secrets)]),
    )
  }
  return value
}

// Failures that happen while a connection is being opened: no byte of the
// request can have reached the service, so even a paid POST may be sent again.
const BEFORE_SENDING = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
])

const WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  UND_ERR_CONNECT_TIMEOUT: 'connecting timed out',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed by the other side',
}

/**
 * The `code`s along an error's cause chain. undici wraps the socket error as
 * `TypeError('fetch failed', { cause })`, and happy-eyeballs connects report
 * an AggregateError with one error per address.
 */
export function networkCodes(error: unknown): string[] {
  const codes: string[] = []
  const seen = new Set<unknown>()
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return
    seen.add(value)
    const { code, cause, errors } = value as { code?: unknown; cause?: unknown; errors?: unknown }
    if (typeof code === 'string') codes.push(code)
    if (Array.isArray(errors)) errors.forEach(visit)
    visit(cause)
  }
  visit(error)
  return codes
}

/** True only when the failure certainly happened before the request left this machine. */
export function failedBeforeSending(error: unknown): boolean {
  const codes = networkCodes(error)
  return codes.length > 0 && codes.every((code) => BEFORE_SENDING.has(code))
}

/** A few words for a network failure, without the URL or any header. */
export function describeNetworkFailure(error: unknown): string {
  const codes = networkCodes(error)
  const known = codes.find((code) => code in WORDS)
  if (known !== undefined) return WORDS[known] ?? known
  return codes[0] ?? 'network failure'
}

import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** 256 bits each: far beyond guessing, even at the speed of a local loop. */
const SECRET_BYTES = 32

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  // The length is not secret (every secret has the same one); the bytes are compared in constant time.
  return a.length === b.length && timingSafeEqual(a, b)
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

/**
 * Who may use the browser mode: whoever opened the printed link. The link's token is traded for
 * a session cookie at once (so it leaves the address bar and the history), and the cookie is
 * what every later request and the bridge's WebSocket must carry. The cookie's value is a
 * second secret, so that it never appears in a URL.
 */
export interface WebAuth {
  readonly token: string
  readonly origin: string
  /** The `Set-Cookie` value that opens the session. */
  readonly sessionCookie: string
  isToken: (given: string | null) => boolean
  /** The request names this server (not a DNS name rebound to the loopback). */
  isOwnHost: (request: IncomingMessage) => boolean
  /** The request is for this server and carries the session cookie. */
  hasSession: (request: IncomingMessage) => boolean
  /** The page that opens the WebSocket is this server's own: a page of another site never is. */
  isOwnOrigin: (request: IncomingMessage) => boolean
}

export function createWebAuth(host: string, port: number): WebAuth {
  const token = randomBytes(SECRET_BYTES).toString('base64url')
  const session = randomBytes(SECRET_BYTES).toString('base64url')
  const authority = `${host}:${port}`
  const origin = `http://${authority}`
  // Cookies are shared by every port of a host: the port in the name keeps two running
  // `atelier web` from replacing each other's.
  const name = `atelier-web-${port}`
  return {
    token,
    origin,
    sessionCookie: `${name}=${session}; Path=/; HttpOnly; SameSite=Strict`,
    isToken: (given) => sameSecret(given ?? undefined, token),
    isOwnHost: (request) => request.headers.host === authority,
    hasSession: (request) =>
      request.headers.host === authority &&
      sameSecret(cookieValue(request.headers.cookie, name), session),
    isOwnOrigin: (request) => request.headers.origin === origin,
  }
}

import { lookup } from 'node:dns/promises'
import http from 'node:http'
import https from 'node:https'
import { BlockList, isIP } from 'node:net'

/** How much of a receiver's answer an attempt records. */
export const RESPONSE_BODY_LIMIT = 4096

export type TargetCheck = { ok: true; url: URL } | { ok: false; detail: string }

// Addresses nothing can be delivered to: "this network", multicast and broadcast.
const UNDELIVERABLE = new BlockList()
UNDELIVERABLE.addSubnet('0.0.0.0', 8, 'ipv4')
UNDELIVERABLE.addSubnet('224.0.0.0', 4, 'ipv4')
UNDELIVERABLE.addAddress('255.255.255.255', 'ipv4')
UNDELIVERABLE.addAddress('::', 'ipv6')
UNDELIVERABLE.addSubnet('ff00::', 8, 'ipv6')

const NO_SUCH_HOST = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME'])

/**
 * The `dns_validation_failed` check made before each attempt: the URL must be http(s) and its
 * host must resolve to an address a request can go to. A host that does not exist is final; a
 * resolver that is merely unavailable is not (the attempt then fails like any network error and
 * is retried).
 */
export async function checkTarget(rawUrl: string): Promise<TargetCheck> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return { ok: false, detail: `${rawUrl} is not a URL; deliveries need an http(s) URL.` }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, detail: `Deliveries go to http(s) URLs only, not ${url.protocol} ones.` }
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  // RFC 6761: names under .invalid never resolve, and resolvers must say so at once.
  if (host === 'invalid' || host.endsWith('.invalid')) {
    return { ok: false, detail: `The host ${host} does not resolve (it is under .invalid).` }
  }
  let addresses: { address: string; family: number }[]
  try {
    addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await lookup(host, { all: true })
  } catch (error) {
    const code = (error as { code?: string }).code ?? ''
    if (NO_SUCH_HOST.has(code)) {
      return { ok: false, detail: `The host ${host} does not resolve (${code}).` }
    }
    return { ok: true, url }
  }
  const usable = addresses.filter(
    (a) => !UNDELIVERABLE.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4'),
  )
  if (usable.length === 0) {
    const list = addresses.map((a) => a.address).join(', ') || 'no address'
    return {
      ok: false,
      detail: `The host ${host} resolves to ${list}, where nothing can be delivered.`,
    }
  }
  return { ok: true, url }
}

export interface PostOutcome {
  /** The HTTP status, or null when no answer came. */
  statusCode: number | null
  /** The first RESPONSE_BODY_LIMIT bytes of the answer, or null when no answer came. */
  body: string | null
  timeMs: number
  /** Why the exchange did not complete (timeout, refused, reset), or null when it did. */
  error: string | null
}

function describe(error: unknown, host: string): string {
  const code = (error as { code?: string }).code
  switch (code) {
    case 'ECONNREFUSED':
      return `${host} refused the connection (ECONNREFUSED).`
    case 'ECONNRESET':
      return 'The connection was reset before a complete answer came (ECONNRESET).'
    case 'EAI_AGAIN':
      return `The host ${host} could not be resolved right now (EAI_AGAIN).`
    case 'ABORT_ERR':
      return 'The attempt was stopped because the sandbox is closing.'
    default: {
      const message = error instanceof Error ? error.message : String(error)
      return code ? `${message} (${code}).` : message
    }
  }
}

/**
 * One POST of the exact body bytes, on a fresh connection that is closed afterwards (nothing is
 * pooled, so nothing outlives the attempt). Redirects are not followed: deliveries go only where
 * the user pointed them. Never rejects; every way it can end is an outcome.
 */
export function postOnce(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<PostOutcome> {
  return new Promise((resolve) => {
    const started = performance.now()
    let settled = false
    let statusCode: number | null = null
    const chunks: Buffer[] = []
    let size = 0
    const finish = (error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({
        statusCode,
        body: statusCode === null ? null : Buffer.concat(chunks).toString('utf8'),
        timeMs: Math.round(performance.now() - started),
        error,
      })
    }
    const client = url.protocol === 'https:' ? https : http
    const request = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(body.length), Connection: 'close' },
      agent: false,
      signal,
    })
    const timer = setTimeout(() => {
      finish(`No complete answer within ${timeoutMs} ms.`)
      request.destroy()
    }, timeoutMs)
    timer.unref()
    request.on('response', (response) => {
      statusCode = response.statusCode ?? null
      response.on('data', (chunk: Buffer) => {
        const room = RESPONSE_BODY_LIMIT - size
        if (room > 0) chunks.push(chunk.subarray(0, room))
        size += chunk.length
        if (size >= RESPONSE_BODY_LIMIT) {
          // Enough recorded; the rest of a long answer is not worth waiting for.
          finish(null)
          response.destroy()
        }
      })
      response.on('end', () => {
        finish(null)
      })
      response.on('error', (error) => {
        finish(describe(error, url.hostname))
      })
      response.on('close', () => {
        finish(response.complete ? null : 'The connection closed before the whole answer came.')
      })
    })
    request.on('error', (error) => {
      finish(describe(error, url.hostname))
    })
    request.end(body)
  })
}

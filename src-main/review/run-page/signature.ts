import { createHmac, timingSafeEqual } from 'node:crypto'
import { RunPageError } from './errors'

const HEX = /^[0-9a-f]+$/

/**
 * Whether `signature` (the `Service-Signature` header a receiver got) is HMAC-SHA256 of the
 * delivery's exact bytes under `secret`, as the contract signs callbacks. Compared in constant
 * time, like a receiver should: the check must not teach anyone the signature byte by byte.
 */
export function signatureMatches(payloadBytes: string, secret: string, signature: string): boolean {
  const given = signature
    .trim()
    .toLowerCase()
    .replace(/^sha256=/, '')
  if (!HEX.test(given) || given.length % 2 !== 0) {
    throw new RunPageError(
      'SIGNATURE_MALFORMED',
      'A signature is the lowercase hex value of the Service-Signature header (64 characters). Paste it exactly as the receiver got it.',
    )
  }
  const expected = createHmac('sha256', secret).update(Buffer.from(payloadBytes, 'utf8')).digest()
  const received = Buffer.from(given, 'hex')
  return received.length === expected.length && timingSafeEqual(received, expected)
}

import { randomBytes } from 'node:crypto'

/** The sandbox's notion of now; tests may pass their own. */
export type Clock = () => number

export const systemClock: Clock = () => Date.now()

/**
 * ISO 8601 with milliseconds and a `+00:00` offset, never `Z`: the spec requires that form in
 * callback payloads, and the fixed width makes text order equal time order in SQLite.
 */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+00:00')
}

/**
 * A UUIDv7 (RFC 9562): 48-bit millisecond time, then random bits; sorts by creation time.
 * Bulk writers may pass 16 random bytes of their own (taken from a larger pool); they are
 * overwritten in place.
 */
export function uuidv7(ms: number, bytes: Buffer = randomBytes(16)): string {
  let time = ms
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256
    time = Math.floor(time / 256)
  }
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

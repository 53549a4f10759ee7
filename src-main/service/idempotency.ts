import { randomUUID } from 'node:crypto'

/**
 * A fresh key for one piece of paid work. Commit it with the intent before
 * sending, and send the same key on every attempt, so that the service can
 * recognise a retry of work it already did.
 */
export function newIdempotencyKey(): string {
  return randomUUID()
}

import { createHash } from 'node:crypto'
import type { SandboxDb } from '../db'
import { conflict } from '../errors'

/** JSON with object keys sorted at every level, so equal bodies hash equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, child]) => child !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, child]) => `${JSON.stringify(key)}:${canonicalJson(child)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

export const fingerprintOf = (request: unknown): string =>
  createHash('sha256').update(canonicalJson(request)).digest('hex')

/**
 * The `idempotency` table for one scope. Callers run `find` and `remember` in the same
 * transaction as the work they protect: SQLite transactions are serial, so two requests with one
 * key can never both miss.
 */
export class IdempotencyKeys {
  private readonly select
  private readonly insert

  constructor(
    db: SandboxDb,
    private readonly scope: string,
  ) {
    this.select = db.prepare(
      'SELECT body_hash, record_id FROM idempotency WHERE org_id = ? AND scope = ? AND key = ?',
    )
    this.insert = db.prepare(
      'INSERT INTO idempotency (org_id, scope, key, body_hash, record_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    )
  }

  /** The record first made with this key and fingerprint; a 409 when the key was used otherwise. */
  find(orgId: string, key: string, fingerprint: string): string | undefined {
    const row = this.select.get(orgId, this.scope, key) as
      { body_hash: string; record_id: string } | undefined
    if (!row) return undefined
    if (row.body_hash !== fingerprint) {
      throw conflict(
        'This Idempotency-Key was already used with a different request. Send a new key for a new request, or repeat the original request exactly to get its result.',
        'IDEMPOTENCY_KEY_REUSED',
      )
    }
    return row.record_id
  }

  remember(orgId: string, key: string, fingerprint: string, recordId: string, now: string): void {
    this.insert.run(orgId, this.scope, key, fingerprint, recordId, now)
  }
}

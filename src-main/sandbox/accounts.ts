import { createHash, randomBytes } from 'node:crypto'
import { isoTime, uuidv7, type Clock } from './clock'
import type { SandboxDb } from './db'
import { SandboxError } from './errors'
import { canonicalUuid } from './uuid'

/**
 * Scopes the sandbox knows. The spec names only `evaluations:edit`; the rest are assumed and
 * only `sandbox:admin` (fault injection, balance) is enforced besides it.
 */
export const ALL_SCOPES = [
  'runs:read',
  'runs:write',
  'models:read',
  'assets:read',
  'assets:write',
  'batches:write',
  'evaluations:read',
  'evaluations:write',
  'evaluations:edit',
  'webhooks:read',
  'webhooks:write',
  'flows:read',
  'flows:write',
  'billing:read',
  'sandbox:admin',
] as const

export interface AuthContext {
  keyId: string
  /** The organization this request acts in (the key's own, or the one X-Organization-Id selected). */
  orgId: string
  orgIds: readonly string[]
  scopes: ReadonlySet<string>
}

export interface Organization {
  id: string
  name: string
  balance_micro: number
  currency_code: string
  created_at: string
  updated_at: string
}

const MICRO = 1_000_000

/** Credits are kept as integer micro-credits so that charges never drift; the API speaks decimals. */
export function formatCredits(micro: number): string {
  const sign = micro < 0 ? '-' : ''
  const abs = Math.abs(micro)
  return `${sign}${Math.floor(abs / MICRO)}.${String(abs % MICRO).padStart(6, '0')}`
}

export function parseCredits(decimal: string): number {
  const match = /^(-?)(\d+)(?:\.(\d{0,6}))?$/.exec(decimal.trim())
  if (!match) throw new Error(`"${decimal}" is not a decimal amount of credits.`)
  const micro = Number(match[2]) * MICRO + Number((match[3] ?? '').padEnd(6, '0'))
  return match[1] ? -micro : micro
}

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex')

function bearer(headers: Record<string, string | string[] | undefined>): string | undefined {
  const authorization = headers.authorization
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
    if (match) return match[1]
  }
  const apiKey = headers['x-api-key']
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey : undefined
}

export class Accounts {
  constructor(
    private readonly db: SandboxDb,
    private readonly clock: Clock,
  ) {}

  /** Finds the organization by name, or creates it: names keep ids stable across restarts. */
  ensureOrg(name: string, balanceMicro: number): Organization {
    const existing = this.db.prepare('SELECT * FROM orgs WHERE name = ?').get(name) as
      Organization | undefined
    if (existing) return existing
    const now = isoTime(this.clock())
    const org: Organization = {
      id: uuidv7(this.clock()),
      name,
      balance_micro: balanceMicro,
      currency_code: 'credits',
      created_at: now,
      updated_at: now,
    }
    this.db
      .prepare(
        'INSERT INTO orgs (id, name, balance_micro, currency_code, created_at, updated_at) VALUES (@id, @name, @balance_micro, @currency_code, @created_at, @updated_at)',
      )
      .run(org)
    return org
  }

  org(id: string): Organization | undefined {
    return this.db.prepare('SELECT * FROM orgs WHERE id = ?').get(id) as Organization | undefined
  }

  /**
   * Issues a fresh key and revokes earlier keys with the same label. Only a hash is stored, so
   * the plain key exists in this process's memory and in what `sandbox` prints, nowhere else.
   */
  mintKey(
    label: string,
    orgId: string,
    scopes: readonly string[],
    memberOf: string[] = [],
  ): string {
    const key = `sk_sandbox_${randomBytes(24).toString('base64url')}`
    const id = uuidv7(this.clock())
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM api_keys WHERE label = ?').run(label)
      this.db
        .prepare(
          'INSERT INTO api_keys (key_hash, id, label, org_id, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(hashKey(key), id, label, orgId, JSON.stringify(scopes), isoTime(this.clock()))
      for (const member of new Set([orgId, ...memberOf])) {
        this.db.prepare('INSERT INTO memberships (key_id, org_id) VALUES (?, ?)').run(id, member)
      }
    })()
    return key
  }

  /** Whether this exact key is the one issued under `label` and still valid. */
  holdsKey(label: string, key: string): boolean {
    return (
      this.db
        .prepare('SELECT 1 FROM api_keys WHERE key_hash = ? AND label = ?')
        .get(hashKey(key), label) !== undefined
    )
  }

  authenticate(headers: Record<string, string | string[] | undefined>): AuthContext {
    const key = bearer(headers)
    const row = key
      ? (this.db
          .prepare('SELECT id, org_id, scopes FROM api_keys WHERE key_hash = ?')
          .get(hashKey(key)) as { id: string; org_id: string; scopes: string } | undefined)
      : undefined
    if (!row) {
      throw new SandboxError(
        401,
        'UNAUTHORIZED',
        key
          ? 'The API key is not valid. Check the key, or start the sandbox again to get fresh keys.'
          : 'No credentials were sent. Send Authorization: Bearer <key> (or x-api-key: <key>).',
      )
    }
    const orgIds = (
      this.db.prepare('SELECT org_id FROM memberships WHERE key_id = ?').all(row.id) as {
        org_id: string
      }[]
    ).map((m) => m.org_id)
    const header = headers['x-organization-id']
    // An organization id is a UUID like any other: either case names the same organization.
    const selected = typeof header === 'string' ? (canonicalUuid(header) ?? header) : header
    let orgId = row.org_id
    if (typeof selected === 'string' && selected !== '' && selected !== 'null') {
      if (!orgIds.includes(selected)) {
        throw new SandboxError(
          403,
          'ORGANIZATION_MEMBERSHIP_REQUIRED',
          'This key is not a member of the organization named in X-Organization-Id.',
        )
      }
      orgId = selected
    }
    return {
      keyId: row.id,
      orgId,
      orgIds,
      scopes: new Set(JSON.parse(row.scopes) as string[]),
    }
  }

  balance(orgId: string): Organization {
    const org = this.org(orgId)
    if (!org) throw new SandboxError(404, 'NOT_FOUND', 'The organization was not found.')
    return org
  }

  /** Takes credits if there are enough, atomically; answers whether it did. */
  charge(orgId: string, micro: number): boolean {
    const result = this.db
      .prepare(
        'UPDATE orgs SET balance_micro = balance_micro - ?, updated_at = ? WHERE id = ? AND balance_micro >= ?',
      )
      .run(micro, isoTime(this.clock()), orgId, micro)
    return result.changes === 1
  }

  refund(orgId: string, micro: number): void {
    this.db
      .prepare('UPDATE orgs SET balance_micro = balance_micro + ?, updated_at = ? WHERE id = ?')
      .run(micro, isoTime(this.clock()), orgId)
  }

  setBalance(orgId: string, micro: number): void {
    this.db
      .prepare('UPDATE orgs SET balance_micro = ?, updated_at = ? WHERE id = ?')
      .run(micro, isoTime(this.clock()), orgId)
  }
}

import { createHmac, randomBytes } from 'node:crypto'
import { SandboxError } from '../errors'
import type { RecordStore } from '../store'
import type { DeliveryQueries } from './queries'
import { COLLECTIONS, type CallbackSecret, type SigningKey } from './records'

/** Lowercase hex HMAC-SHA256 of the exact body bytes: the `Service-Signature` header. */
export function sign(material: string, body: Buffer): string {
  return createHmac('sha256', material).update(body).digest('hex')
}

/**
 * Refuses a dispatch that names a callback secret this organization does not have (another
 * organization's, or none at all), before anything is stored or charged. Signing with another
 * secret instead would make every callback fail the receiver's check, far from the request that
 * caused it. The contract has no way to revoke or delete a callback secret, so existing is enough.
 */
export function requireCallbackSecret(
  store: RecordStore,
  orgId: string,
  secretId: string | null | undefined,
): void {
  if (secretId === null || secretId === undefined) return
  if (store.get<CallbackSecret>(COLLECTIONS.callbackSecrets, secretId, orgId)) return
  const message = `callback_secret_id ${secretId} is not a callback secret of this organization. Use the id that POST /v1/callback-secrets answered, or leave callback_secret_id out to sign with the organization's newest secret.`
  throw new SandboxError(422, 'VALIDATION_FAILED', message, [
    { field: 'callback_secret_id', code: 'unknown_callback_secret', message },
  ])
}

export interface Signer {
  /** The callback secret (or webhook) whose key signs. */
  id: string
  material: string
}

const SANDBOX_DEFAULT_LABEL =
  'Sandbox default (its value is never shown; create your own with POST /v1/callback-secrets to verify signatures)'

/**
 * Callback secrets and the key material behind them and behind webhooks. The material lives in
 * `signing_keys`, apart from every record an operation answers with, so no list or get can show
 * it by accident; `plain_secret` appears once, in the creation answer.
 */
export class Secrets {
  constructor(
    private readonly store: RecordStore,
    private readonly queries: DeliveryQueries,
  ) {}

  createCallbackSecret(
    orgId: string,
    label: string,
    sandboxDefault = false,
  ): { secret: CallbackSecret; plain: string } {
    const plain = `cbsec_${randomBytes(32).toString('base64url')}`
    const now = this.store.now()
    const secret: CallbackSecret = {
      id: this.store.newId(),
      label,
      // The last four characters, so a person can tell which saved secret this is.
      fingerprint: plain.slice(-4),
      is_sandbox_default: sandboxDefault,
      created_at: now,
      updated_at: now,
    }
    this.store.transaction(() => {
      this.store.insert(COLLECTIONS.callbackSecrets, orgId, secret)
      this.setKey(orgId, secret.id, plain)
    })
    return { secret, plain }
  }

  /**
   * The key that signs a run or batch callback: the secret the dispatch named while it exists,
   * else the organization's newest. An organization without any gets a sandbox-made default,
   * so that every delivery is still signed and `signing_secret_id` still names a secret.
   */
  callbackSigner(orgId: string, preferredId: string | null | undefined): Signer {
    const named = preferredId
      ? this.store.get<CallbackSecret>(COLLECTIONS.callbackSecrets, preferredId, orgId)
      : undefined
    const secret =
      named ??
      this.queries.newest<CallbackSecret>(COLLECTIONS.callbackSecrets, orgId) ??
      this.createCallbackSecret(orgId, SANDBOX_DEFAULT_LABEL, true).secret
    const material = this.material(orgId, secret.id)
    if (material === undefined) {
      throw new Error(`callback secret ${secret.id} has no key material`)
    }
    return { id: secret.id, material }
  }

  material(orgId: string, ownerId: string): string | undefined {
    return this.store.get<SigningKey>(COLLECTIONS.signingKeys, ownerId, orgId)?.material
  }

  /** Stores (or replaces) the key of a callback secret or a webhook. */
  setKey(orgId: string, ownerId: string, material: string): void {
    if (this.store.get<SigningKey>(COLLECTIONS.signingKeys, ownerId, orgId)) {
      this.store.update<SigningKey>(COLLECTIONS.signingKeys, ownerId, orgId, (key) => ({
        ...key,
        material,
      }))
      return
    }
    const now = this.store.now()
    this.store.insert<SigningKey>(COLLECTIONS.signingKeys, orgId, {
      id: ownerId,
      material,
      created_at: now,
      updated_at: now,
    })
  }

  /** Deletions are soft, so the material is blanked first: a removed key is gone for good. */
  removeKey(orgId: string, ownerId: string): void {
    if (!this.store.get(COLLECTIONS.signingKeys, ownerId, orgId)) return
    this.store.update<SigningKey>(COLLECTIONS.signingKeys, ownerId, orgId, (key) => ({
      ...key,
      material: '',
    }))
    this.store.remove(COLLECTIONS.signingKeys, ownerId, orgId)
  }
}

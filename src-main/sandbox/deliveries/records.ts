import type { components } from '../../../src-shared/api'

type Schemas = components['schemas']

export type Run = Schemas['Run']
export type Batch = Schemas['Batch']
export type EventType = Schemas['EventType']
export type RunCallbackPayload = Schemas['RunCallbackPayload']
export type BatchCallbackPayload = Schemas['BatchCallbackPayload']
export type DeliveryStatus = Schemas['CallbackDeliveryStatusCode']
export type FailureReason = Schemas['CallbackFailureReasonCode']
export type DeliveryAttempt = Schemas['DeliveryAttempt']
export type WebhookDeliveryAttempt = Schemas['WebhookDeliveryAttempt']
export type RunCallbackDelivery = Schemas['RunCallbackDelivery']
export type BatchCallbackDelivery = Schemas['BatchCallbackDelivery']
export type WebhookDelivery = Schemas['WebhookDelivery']
export type Webhook = Schemas['Webhook']

/**
 * The dispatch's `callback_secret_id` is not part of the contract's `Run` (or `Batch`) shape, so
 * the run engine keeps it on the stored record: at the top level or under its private
 * `_sandbox` block. Either is honoured.
 */
export interface SecretNaming {
  callback_secret_id?: string | null
  _sandbox?: { callback_secret_id?: string | null }
}

export function namedSecretId(...records: (SecretNaming | undefined)[]): string | null {
  for (const record of records) {
    const id = record?.callback_secret_id ?? record?._sandbox?.callback_secret_id
    if (id) return id
  }
  return null
}

export const COLLECTIONS = {
  runCallbacks: 'run_callback_deliveries',
  batchCallbacks: 'batch_callback_deliveries',
  webhookDeliveries: 'webhook_deliveries',
  webhookAttempts: 'webhook_delivery_attempts',
  webhooks: 'webhooks',
  callbackSecrets: 'callback_secrets',
  signingKeys: 'signing_keys',
} as const

export type DeliveryCollection =
  | typeof COLLECTIONS.runCallbacks
  | typeof COLLECTIONS.batchCallbacks
  | typeof COLLECTIONS.webhookDeliveries

/** What the engine reads and writes of any delivery, whichever of the three kinds it is. */
export interface DeliveryCore {
  id: string
  payload_bytes: string
  status_code: DeliveryStatus
  failure_reason_code: FailureReason | null
  failure_detail: string | null
  attempt_count: number
  max_attempts: number
  next_attempt_at: string | null
  created_at: string
  updated_at: string
  completed_at: string | null
  attempts: (DeliveryAttempt | WebhookDeliveryAttempt)[]
}

/** Deliveries in these states still have an attempt to make; a restart picks them up. */
export const OPEN_STATES: readonly DeliveryStatus[] = ['pending', 'queued', 'processing']

/** A callback secret as stored; the key material is kept apart, in `signing_keys`. */
export interface CallbackSecret {
  id: string
  label: string
  fingerprint: string
  /** True for the secret the sandbox made itself for an organization that had none. */
  is_sandbox_default: boolean
  created_at: string
  updated_at: string
}

/** HMAC key material, stored under the id of its owner (a callback secret or a webhook). */
export interface SigningKey {
  id: string
  material: string
  created_at: string
  updated_at: string
}

export const TERMINAL_RUN_STATUSES = ['succeeded', 'failed', 'canceled'] as const
export type TerminalRunStatus = (typeof TERMINAL_RUN_STATUSES)[number]

export function isTerminalRunStatus(status: string): status is TerminalRunStatus {
  return (TERMINAL_RUN_STATUSES as readonly string[]).includes(status)
}

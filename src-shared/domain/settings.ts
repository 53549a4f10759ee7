import { z } from 'zod'
import type { components } from '../api/schema.gen'

/**
 * The Settings section: profiles, the local sandbox, webhooks, callback secrets, what the mirror
 * keeps, storage. The schemas are the channels' arguments and the window's form checks alike, so
 * a field's message is the same whichever side finds the problem. No key ever appears in an
 * answer, and a plain secret only in the answer that made it.
 */

// The same rules as `src-main/secrets/profile.ts`, which checks again before anything is kept.
const PROFILE_NAME = /^[A-Za-z0-9._-]{1,64}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const profileName = z
  .string()
  .regex(PROFILE_NAME, 'Use 1 to 64 letters, digits, "-", "_" or ".", without spaces.')

export const profileAddSchema = z.strictObject({
  name: profileName,
  baseUrl: z
    .url({
      protocol: /^https?$/,
      error: 'Give the service address, starting with https:// (e.g. https://api.example.com).',
    })
    .max(2048, 'The address is too long.'),
  organizationId: z
    .string()
    .regex(UUID, 'An organization id looks like 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.')
    .optional(),
  apiKey: z
    .string()
    .trim()
    .min(1, 'Paste the API key.')
    .max(4096, 'This is longer than any API key.')
    .refine((key) => !/\s/.test(key), 'An API key has no spaces or line breaks inside.'),
})
export type ProfileAddInput = z.input<typeof profileAddSchema>

export const profileNameSchema = z.strictObject({ name: profileName })
export type ProfileRef = z.output<typeof profileNameSchema>

/** `name: null` is the local sandbox, the choice that needs no profile. */
export const profileSwitchSchema = z.strictObject({ name: profileName.nullable() })
export type ProfileSwitch = z.output<typeof profileSwitchSchema>

/** Destructive calls say they were confirmed, so that a stray call cannot wipe anything. */
export const confirmedSchema = z.strictObject({
  confirmed: z.literal(true, 'Confirm first: this cannot be undone.'),
})
export type Confirmed = z.output<typeof confirmedSchema>

/** The events a webhook can subscribe to, as the service names them. */
export type WebhookEvent = components['schemas']['EventType']
export const WEBHOOK_EVENTS = [
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.partial_succeeded',
  'batch.succeeded',
] as const satisfies readonly WebhookEvent[]

export const webhookCreateSchema = z.strictObject({
  url: z
    .url({
      protocol: /^https?$/,
      error: 'Give the address that receives the events, starting with https://.',
    })
    .max(2048, 'The address is too long.'),
  events: z
    .array(z.enum(WEBHOOK_EVENTS))
    .min(1, 'Pick at least one event: a webhook without any never fires.')
    .refine((events) => new Set(events).size === events.length, 'Each event once.'),
})
export type WebhookCreateInput = z.input<typeof webhookCreateSchema>
export type WebhookCreate = z.output<typeof webhookCreateSchema>

// Only the shape: not every id of the service sets the RFC version bits.
export const webhookIdSchema = z.strictObject({ id: z.string().regex(UUID, 'Not a webhook id.') })
export type WebhookRef = z.output<typeof webhookIdSchema>

/**
 * A callback secret's name (the service's `label`): required and not blank there; the length
 * cap is Atelier's own (the spec gives none), long enough for "the render farm's receiver".
 */
export const callbackSecretCreateSchema = z.strictObject({
  label: z
    .string()
    .trim()
    .min(1, 'Give the secret a name you will recognise, e.g. the service that receives the calls.')
    .max(200, 'At most 200 characters.'),
})
export type CallbackSecretCreateInput = z.input<typeof callbackSecretCreateSchema>
export type CallbackSecretCreate = z.output<typeof callbackSecretCreateSchema>

export const callbackSecretIdSchema = z.strictObject({
  id: z.string().regex(UUID, 'Not a callback secret id.'),
})
export type CallbackSecretRef = z.output<typeof callbackSecretIdSchema>

const MIB = 1024 * 1024

/** What the user chose; the core reads it at open and follows changes at once. */
export const appSettingsSchema = z.strictObject({
  /** Minutes between background syncs (a sync also runs on demand and at start). */
  syncIntervalMinutes: z
    .int('Whole minutes.')
    .min(1, 'At least 1 minute.')
    .max(24 * 60, 'At most 1,440 minutes (a day).'),
  /** Which of the large collections the mirror keeps; catalogs, models and flows always. */
  mirror: z.strictObject({
    runs: z.boolean(),
    evaluations: z.boolean(),
    assets: z.boolean(),
  }),
  /** Outputs and thumbnails downloaded after each sync, for offline viewing. */
  mediaDownloads: z.boolean(),
  /** The output store's cap; the least recently used files beyond it are removed. */
  mediaCapMiB: z
    .int('Whole MiB.')
    .min(100, 'At least 100 MiB.')
    .max(1024 * 1024, 'At most 1 TiB (1,048,576 MiB).'),
})
export type AppSettings = z.output<typeof appSettingsSchema>

export const DEFAULT_APP_SETTINGS: AppSettings = {
  syncIntervalMinutes: 5,
  mirror: { runs: true, evaluations: true, assets: true },
  mediaDownloads: true,
  mediaCapMiB: (2 * 1024 ** 3) / MIB,
}

/** A profile as the window sees it: never its key. */
export interface ProfileItem {
  name: string
  baseUrl: string
  organizationId: string | null
  /** ISO 8601. */
  createdAt: string
  /** Atelier works with this one now. */
  inUse: boolean
}

export interface ProfilesView {
  profiles: ProfileItem[]
  /** The profile in use; null: the local sandbox. */
  inUse: string | null
}

export interface SandboxStatus {
  running: boolean
  /** The app works with it now (no profile in use). */
  inUse: boolean
  /** Where it listens while running. */
  url: string | null
  /** What its data takes on disk. */
  dataBytes: number
}

export interface WebhookItem {
  id: string
  url: string
  events: string[]
  /** The last characters of the secret, to tell secrets apart; never the secret. */
  fingerprint: string
  active: boolean
  /** ISO 8601. */
  createdAt: string
}

export interface CreatedWebhook {
  webhook: WebhookItem
  /** The signing secret, in this answer only: it is never shown again. */
  secret: string
}

/**
 * A callback secret as the service described it when it was made: never the secret itself. The
 * service has no list of them (only `POST /v1/callback-secrets`), so these are the ones made
 * in Atelier on this computer, for the service and organization in use.
 */
export interface CallbackSecretItem {
  id: string
  /** The name given when it was made (the service's `label`). */
  label: string
  /** The secret's last four characters, to tell secrets apart; never the secret. */
  fingerprint: string
  /** ISO 8601, the service's. */
  createdAt: string
}

export interface CreatedCallbackSecret {
  callbackSecret: CallbackSecretItem
  /** The plain secret (the service's `plain_secret`), in this answer only: never shown again. */
  secret: string
}

export interface StorageFigures {
  /** The local copy of the service (mirror.sqlite and its journal). */
  mirrorBytes: number
  /** Downloaded outputs and thumbnails. */
  mediaBytes: number
  mediaCapBytes: number
  /** What only this computer knows: unsent changes, run intents, upload progress. */
  ledgerBytes: number
  sandboxBytes: number
}

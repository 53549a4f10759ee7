import { z } from 'zod'
import type { SyncStatus } from '../../domain/sync'
import {
  appSettingsSchema,
  callbackSecretCreateSchema,
  callbackSecretIdSchema,
  confirmedSchema,
  profileAddSchema,
  profileNameSchema,
  profileSwitchSchema,
  webhookCreateSchema,
  webhookIdSchema,
  type AppSettings,
  type CallbackSecretItem,
  type CreatedCallbackSecret,
  type CreatedWebhook,
  type ProfilesView,
  type SandboxStatus,
  type StorageFigures,
  type WebhookItem,
} from '../../domain/settings'
import { channel } from '../channel'

const noArgs = z.undefined()

/**
 * The Settings section's channels (issue 8), spread into `ipcContract`. Keys go in (`profiles.add`)
 * and never come out; destructive calls take `{ confirmed: true }`.
 */
export const settingsContract = {
  'profiles.list': channel<ProfilesView>()(noArgs),
  /**
   * Checks the key against the service, then keeps it in the OS keychain and the profile in
   * `profiles.json`. KEY_REJECTED, SERVICE_UNREACHABLE, PROFILE_EXISTS, KEYCHAIN_UNAVAILABLE.
   */
  'profiles.add': channel<ProfilesView>()(profileAddSchema),
  /** Reopens Atelier's data and sync with that profile's service; `name: null`: the sandbox. */
  'profiles.switch': channel<ProfilesView>()(profileSwitchSchema),
  /** Deletes the key from the keychain and the profile; PROFILE_IN_USE for the one in use. */
  'profiles.remove': channel<ProfilesView>()(profileNameSchema),
  'sandbox.status': channel<SandboxStatus>()(noArgs),
  /** Starts the local sandbox beside a profile in use (it always runs when it is the backend). */
  'sandbox.start': channel<SandboxStatus>()(noArgs),
  /** Also while Atelier works with it: the app is then offline on purpose until `sandbox.start`. */
  'sandbox.stop': channel<SandboxStatus>()(noArgs),
  /** Wipes the sandbox's data and starts it again empty when it was running. */
  'sandbox.reset': channel<SandboxStatus>()(confirmedSchema),
  /** Online only (OFFLINE otherwise): webhooks live on the service. */
  'webhooks.list': channel<WebhookItem[]>()(noArgs),
  /** The answer holds the signing secret, this once. */
  'webhooks.create': channel<CreatedWebhook>()(webhookCreateSchema),
  'webhooks.delete': channel<null>()(webhookIdSchema),
  /**
   * The callback secrets made in Atelier for the service and organization in use, newest first:
   * the service has no list of them. Local, so it answers offline too.
   */
  'callbackSecrets.list': channel<CallbackSecretItem[]>()(noArgs),
  /** Made on the service (OFFLINE when it cannot be reached); the answer holds the plain secret, this once. */
  'callbackSecrets.create': channel<CreatedCallbackSecret>()(callbackSecretCreateSchema),
  /**
   * Takes it off Atelier's list. The service has no way to delete or revoke a callback secret,
   * so it keeps it; answers null whether or not it was on the list.
   */
  'callbackSecrets.remove': channel<null>()(callbackSecretIdSchema),
  'settings.get': channel<AppSettings>()(noArgs),
  /** Saved, then followed at once: the next sync uses them. */
  'settings.set': channel<AppSettings>()(appSettingsSchema),
  'settings.storage': channel<StorageFigures>()(noArgs),
  /** Starts an empty mirror and refills it from the service; answers when the refill ended. */
  'settings.rebuildMirror': channel<SyncStatus>()(confirmedSchema),
} as const

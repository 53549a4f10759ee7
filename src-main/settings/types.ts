import type {
  AppSettings,
  CallbackSecretCreate,
  CallbackSecretItem,
  CallbackSecretRef,
  Confirmed,
  CreatedCallbackSecret,
  CreatedWebhook,
  ProfileAddInput,
  ProfileRef,
  ProfileSwitch,
  ProfilesView,
  SandboxStatus,
  StorageFigures,
  WebhookCreate,
  WebhookItem,
  WebhookRef,
} from '../../src-shared/domain/settings'
import type { SyncStatus } from '../../src-shared/domain/sync'
import type { Backend, Core } from '../core'
import type { Keychain } from '../secrets'

type Awaitable<T> = T | Promise<T>

/**
 * The Settings section's services, one method per channel, taking the domain's requests. A
 * refusal is a `SettingsError` (or the keychain's `SecretsError`), which reaches the window as
 * its code and message.
 */
export interface Settings {
  profiles: {
    list(): Awaitable<ProfilesView>
    add(request: ProfileAddInput): Awaitable<ProfilesView>
    switch(request: ProfileSwitch): Awaitable<ProfilesView>
    remove(request: ProfileRef): Awaitable<ProfilesView>
  }
  sandbox: {
    status(): Awaitable<SandboxStatus>
    start(): Awaitable<SandboxStatus>
    stop(): Awaitable<SandboxStatus>
    reset(request: Confirmed): Awaitable<SandboxStatus>
  }
  webhooks: {
    list(): Awaitable<WebhookItem[]>
    create(request: WebhookCreate): Awaitable<CreatedWebhook>
    delete(request: WebhookRef): Awaitable<null>
  }
  callbackSecrets: {
    list(): Awaitable<CallbackSecretItem[]>
    create(request: CallbackSecretCreate): Awaitable<CreatedCallbackSecret>
    remove(request: CallbackSecretRef): Awaitable<null>
  }
  settings: {
    get(): Awaitable<AppSettings>
    set(request: AppSettings): Awaitable<AppSettings>
    storage(): Awaitable<StorageFigures>
    rebuildMirror(request: Confirmed): Awaitable<SyncStatus>
  }
}

/**
 * What Settings asks of the workspace (`src-main/workspace`, whose `CoreHost` fits): the
 * backend and core in use, and the switches that close the core and open another. Declared
 * here, so that Settings is a feature like the others and the workspace depends on it, not the
 * other way round.
 */
export interface SettingsWorkspace {
  readonly home: string
  readonly keychain: Keychain
  backend(): Backend | null
  openedCore(): Core | null
  /** The profile in use; null: the local sandbox (or nothing yet). */
  inUse(): string | null
  /** The local sandbox while it runs. */
  sandbox(): { url: string } | null
  switchTo(name: string | null): Promise<void>
  rebuildMirror(): Promise<Core>
  startSandbox(): Promise<void>
  stopSandbox(): Promise<void>
  resetSandbox(): Promise<void>
  applySettings(settings: AppSettings): void
}

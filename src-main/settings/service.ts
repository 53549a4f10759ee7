import {
  DEFAULT_APP_SETTINGS,
  type AppSettings,
  type ProfileAddInput,
  type ProfilesView,
  type SandboxStatus,
} from '../../src-shared/domain/settings'
import type { SyncStatus } from '../../src-shared/domain/sync'
import { sandboxDir } from '../app/paths'
import type { Backend, Core } from '../core'
import type { Logger } from '../log'
import {
  checkKey,
  parseApiKey,
  parseBaseUrl,
  parseProfileInput,
  Profiles,
  readProfiles,
  SecretsError,
  type Profile,
} from '../secrets'
import { writeProfiles } from '../secrets/profiles-file'
import { createServiceClient, isServiceError } from '../service'
import { coreSettingsOf, readAppSettings, writeAppSettings } from './app-settings'
import { CallbackSecretList, callbackSecretsOwner, createCallbackSecret } from './callback-secrets'
import { SettingsError } from './errors'
import { folderBytes, storageFigures } from './storage'
import type { Settings, SettingsWorkspace } from './types'
import { createWebhook, deleteWebhook, listWebhooks } from './webhooks'

export interface SettingsServiceOptions {
  /** The workspace: the backend and core in use, and the switches between them. */
  host: SettingsWorkspace
  logger: Logger
}

function openedCore(host: SettingsWorkspace): Core {
  const core = host.openedCore()
  if (!core) {
    throw new SettingsError(
      'UNAVAILABLE',
      'Atelier is still opening its local data. Try again in a moment.',
    )
  }
  return core
}

function backendOf(host: SettingsWorkspace): Backend {
  const backend = host.backend()
  if (!backend) {
    throw new SettingsError(
      'UNAVAILABLE',
      'Atelier is still opening its local data. Try again in a moment.',
    )
  }
  return backend
}

/**
 * The key's organization, asked once when the profile is added: with it in the profile, the
 * app opens (and browses its mirror) without the service, offline included. A key the service
 * refuses gets checkKey's words (KEY_REJECTED, SERVICE_UNREACHABLE…).
 */
async function organizationOf(baseUrl: string, apiKey: string): Promise<string> {
  const profile = { base_url: baseUrl, organization_id: null }
  await checkKey(profile, apiKey)
  const client = createServiceClient({
    baseUrl,
    apiKey,
    timeoutMs: 15_000,
    retry: { maxAttempts: 3 },
  })
  try {
    return (await client.get('/v1/account')).organization.id
  } catch (error) {
    throw new SecretsError(
      'SERVICE_ERROR',
      `The service at ${baseUrl} accepted the key but would not say its organization${isServiceError(error) ? ` (${error.code})` : ''}. Give the organization id yourself.`,
    )
  }
}

/**
 * Profiles, the sandbox, webhooks, callback secrets, what the mirror keeps and the storage it
 * takes: what the Settings section's channels call. It lives as long as the host, across
 * switches of profile.
 */
export function createSettingsService({ host, logger }: SettingsServiceOptions): Settings {
  const { home, keychain } = host
  const profiles = new Profiles({ home, keychain })
  const log = logger.child({ component: 'settings' })
  const callbackSecrets = new CallbackSecretList(home)

  const view = async (): Promise<ProfilesView> => {
    const state = await readProfiles(home)
    const inUse = host.inUse()
    return {
      inUse,
      profiles: state.profiles.map((p: Profile) => ({
        name: p.name,
        baseUrl: p.base_url,
        organizationId: p.organization_id,
        createdAt: p.created_at,
        inUse: p.name === inUse,
      })),
    }
  }

  const sandboxStatus = async (): Promise<SandboxStatus> => {
    const running = host.sandbox()
    return {
      running: running !== null,
      inUse: host.backend()?.info.kind === 'sandbox',
      url: running?.url ?? null,
      dataBytes: await folderBytes(sandboxDir(home)),
    }
  }

  const add = async (input: ProfileAddInput): Promise<ProfilesView> => {
    // The input first, then the name, then the service: nothing is sent for a form that is wrong.
    const fields = parseProfileInput(input)
    const apiKey = parseApiKey(input.apiKey)
    logger.addSecret(apiKey)
    const taken = (await readProfiles(home)).profiles.find(
      (p) => p.name.toLowerCase() === fields.name.toLowerCase(),
    )
    if (taken) {
      throw new SecretsError(
        'PROFILE_EXISTS',
        `A profile named ${taken.name} already exists. Pick another name, or remove that one first.`,
      )
    }
    await keychain.check(fields.name)
    const organizationId =
      fields.organization_id ?? (await organizationOf(parseBaseUrl(input.baseUrl), apiKey))
    const before = (await readProfiles(home)).current
    const added = await profiles.add({ ...input, organizationId }, apiKey)
    // The first profile becomes `current` for the command line; the app keeps what it uses
    // until the user switches, so the file says the same as the window.
    if (added.current && before !== added.profile.name) {
      const state = await readProfiles(home)
      await writeProfiles(home, { ...state, current: host.inUse() })
    }
    log.info('profile added', { profile: added.profile.name, url: added.profile.base_url })
    return view()
  }

  return {
    profiles: {
      list: view,
      add,
      switch: async ({ name }) => {
        await host.switchTo(name)
        return view()
      },
      remove: async ({ name }) => {
        if (name === host.inUse()) {
          throw new SettingsError(
            'PROFILE_IN_USE',
            `Atelier is working with profile ${name}. Switch to another profile or to the local sandbox first, then remove it.`,
          )
        }
        const removed = await profiles.remove(name)
        log.info('profile removed', { profile: name, keyDeleted: removed.keyDeleted })
        return view()
      },
    },
    sandbox: {
      status: sandboxStatus,
      start: async () => {
        await host.startSandbox()
        return sandboxStatus()
      },
      // In use too: Atelier then works offline until it is started again.
      stop: async () => {
        await host.stopSandbox()
        return sandboxStatus()
      },
      reset: async () => {
        await host.resetSandbox()
        // The reset sandbox is a new organization: the secrets listed for the old one are gone.
        await callbackSecrets.forgetSandboxes().catch((error: unknown) => {
          log.warn('the callback secrets of the reset sandbox stay listed', { err: error })
        })
        return sandboxStatus()
      },
    },
    webhooks: {
      list: () => listWebhooks(openedCore(host).client),
      create: (input) => createWebhook(openedCore(host).client, input),
      delete: ({ id }) => deleteWebhook(openedCore(host).client, id),
    },
    callbackSecrets: {
      list: () => callbackSecrets.list(callbackSecretsOwner(backendOf(host))),
      create: async ({ label }) => {
        const core = openedCore(host)
        const owner = callbackSecretsOwner(backendOf(host))
        // A damaged list refuses before the service makes a secret that it could not then list.
        await callbackSecrets.check()
        const created = await createCallbackSecret(core.client, label)
        logger.addSecret(created.secret)
        const { id } = created.callbackSecret
        try {
          await callbackSecrets.add(owner, created.callbackSecret)
          log.info('callback secret created', { id })
        } catch (error) {
          // The secret exists on the service: this answer is the only chance to copy it.
          log.warn('callback secret created, but not listed', { id, err: error })
        }
        return created
      },
      remove: async ({ id }) => {
        const removed = await callbackSecrets.remove(callbackSecretsOwner(backendOf(host)), id)
        if (removed) log.info('callback secret taken off the list', { id })
        return null
      },
    },
    settings: {
      get: () => readAppSettings(home),
      set: async (settings: AppSettings) => {
        await writeAppSettings(home, settings)
        host.applySettings(settings)
        log.info('settings saved', { ...settings })
        return settings
      },
      storage: async () => {
        const settings = await readAppSettings(home).catch(() => DEFAULT_APP_SETTINGS)
        return storageFigures(home, coreSettingsOf(settings).mediaCapBytes)
      },
      rebuildMirror: async (): Promise<SyncStatus> => {
        const core = await host.rebuildMirror()
        // The first sync of the new core started as it opened: this joins it.
        return core.syncNow()
      },
    },
  }
}

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import Database from 'better-sqlite3'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MIRROR_FILE } from '../../src-main/db'
import { createHandlers, dispatchIpc, type IpcHandlers } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import type { SigningKey } from '../../src-main/sandbox/deliveries/records'
import {
  CALLBACK_SECRETS_FILE,
  createSettingsService,
  SETTINGS_FILE,
} from '../../src-main/settings'
import { CoreHost } from '../../src-main/workspace'
import type { CallbackSecretItem, CreatedCallbackSecret } from '../../src-shared/domain/settings'
import type { IpcResult } from '../../src-shared/ipc'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const tools = secretServiceAvailability()
const scratch = mkdtempSync(join(tmpdir(), 'atelier-settings-'))

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

interface App {
  home: string
  host: CoreHost
  logger: Logger
  handlers: IpcHandlers
  /** A channel call as the window makes it: validated, then handled. */
  call: (channel: string, args?: unknown) => Promise<IpcResult<unknown>>
  /** The value of a call that must succeed. */
  value: <T>(channel: string, args?: unknown) => Promise<T>
  close: () => Promise<void>
}

/** The app as the browser mode opens it: a host on a home, its settings service, the handlers. */
async function openApp(home = mkdtempSync(join(scratch, 'home-'))): Promise<App> {
  const logger = openLogger({ home })
  // One attempt per request: the offline test must not wait out the client's backoff.
  const host = new CoreHost({
    home,
    logger,
    core: { afterSync: [], client: { retry: { maxAttempts: 1 }, timeoutMs: 5_000 } },
  })
  await host.open()
  const handlers = createHandlers({
    platform: process.platform,
    backend: () => host.backend()?.info ?? null,
    openExternal: () => Promise.resolve(),
    core: () => host.core(),
    settings: createSettingsService({ host, logger }),
  })
  const call = (channel: string, args?: unknown) =>
    dispatchIpc(handlers, channel, args, { shell: 'web' })
  const value = async <T>(channel: string, args?: unknown): Promise<T> => {
    const result = await call(channel, args)
    if (!result.ok) throw new Error(`${channel}: ${result.error.code} ${result.error.message}`)
    return result.value as T
  }
  return {
    home,
    host,
    logger,
    handlers,
    call,
    value,
    close: async () => {
      await host.close()
      logger.close()
    },
  }
}

function errorOf(result: IpcResult<unknown>): { code: string; message: string } {
  if (result.ok) throw new Error('expected a failure')
  return result.error
}

describe.skipIf(!tools.available)(
  'Settings: profiles in a real keychain, the sandbox, webhooks, callback secrets, settings',
  { timeout: 90_000 },
  () => {
    let keyring: SecretServiceSession
    let service: TestSandbox
    let app: App

    beforeAll(async () => {
      keyring = await startSecretService()
      // The keychain binding finds the Secret Service on this process's session bus.
      process.env.DBUS_SESSION_BUS_ADDRESS = keyring.env.DBUS_SESSION_BUS_ADDRESS
      service = await startTestSandbox()
      app = await openApp()
    })

    afterAll(async () => {
      await app.close()
      await service.close()
      await keyring.close()
    })

    it('starts on the local sandbox with no profile', async () => {
      const profiles = await app.value<{ inUse: string | null; profiles: unknown[] }>(
        'profiles.list',
      )
      expect(profiles).toEqual({ inUse: null, profiles: [] })
      const sandbox = await app.value<{ running: boolean; inUse: boolean; url: string }>(
        'sandbox.status',
      )
      expect(sandbox).toMatchObject({ running: true, inUse: true })
      expect(app.host.backend()?.info).toEqual({
        kind: 'sandbox',
        label: 'Local sandbox',
        url: sandbox.url,
      })
    })

    it('refuses a wrong key and a bad form before keeping anything', async () => {
      const wrong = await app.call('profiles.add', {
        name: 'studio',
        baseUrl: service.url,
        apiKey: 'sk_not_a_real_key',
      })
      expect(errorOf(wrong).code).toBe('KEY_REJECTED')
      expect(errorOf(wrong).message).not.toContain('sk_not_a_real_key')
      expect(keyring.lookup('studio')).toBeNull()

      const form = await app.call('profiles.add', {
        name: 'has space',
        baseUrl: 'ftp://example.com',
        apiKey: '',
      })
      expect(errorOf(form).code).toBe('INVALID_ARGUMENT')
      const issues = form.ok ? [] : (form.error.issues ?? [])
      expect(issues.map((i) => i.path).sort()).toEqual(['apiKey', 'baseUrl', 'name'])
      expect((await app.value<{ profiles: unknown[] }>('profiles.list')).profiles).toEqual([])
    })

    it('adds a profile: the key in the keychain only, the organization asked once', async () => {
      const view = await app.value<{
        inUse: string | null
        profiles: { name: string; organizationId: string; inUse: boolean }[]
      }>('profiles.add', { name: 'studio', baseUrl: `${service.url}/`, apiKey: service.keys.admin })
      expect(view.inUse).toBeNull()
      expect(view.profiles).toEqual([
        expect.objectContaining({
          name: 'studio',
          baseUrl: service.url,
          organizationId: service.orgId,
          inUse: false,
        }),
      ])
      expect(keyring.lookup('studio')).toBe(service.keys.admin)
      // Adding never switches: the app, and the file the command line reads, stay on the sandbox.
      const file = JSON.parse(readFileSync(join(app.home, 'profiles.json'), 'utf8')) as {
        current: string | null
      }
      expect(file.current).toBeNull()

      const again = await app.call('profiles.add', {
        name: 'Studio',
        baseUrl: service.url,
        apiKey: service.keys.admin,
      })
      expect(errorOf(again).code).toBe('PROFILE_EXISTS')

      for (const file of filesUnder(app.home)) {
        expect(readFileSync(file).includes(service.keys.admin), file).toBe(false)
      }
    })

    it('switches to the profile: the core talks to its service; the one in use stays', async () => {
      const view = await app.value<{ inUse: string | null }>('profiles.switch', {
        name: 'studio',
      })
      expect(view.inUse).toBe('studio')
      expect(app.host.backend()?.info).toEqual({
        kind: 'service',
        label: 'studio',
        url: service.url,
      })
      // The local sandbox is stopped once a profile is in use.
      expect(await app.value('sandbox.status')).toMatchObject({ running: false, inUse: false })
      const account = await app.value<{ profileName: string; organization: { id: string } }>(
        'account.summary',
      )
      expect(account.profileName).toBe('studio')
      expect(account.organization.id).toBe(service.orgId)
      const status = await app.value<{ state: string; last: { outcome: string } }>('sync.start')
      expect(status.last.outcome).toBe('ok')

      const removing = await app.call('profiles.remove', { name: 'studio' })
      expect(errorOf(removing).code).toBe('PROFILE_IN_USE')
      expect(keyring.lookup('studio')).toBe(service.keys.admin)
    })

    it('creates, lists and deletes webhooks on the service, the secret shown once', async () => {
      const created = await app.value<{
        webhook: { id: string; url: string; events: string[]; fingerprint: string }
        secret: string
      }>('webhooks.create', {
        url: 'https://hooks.example.com/atelier',
        events: ['run.completed', 'run.failed'],
      })
      expect(created.secret).toMatch(/^whsec_[\w-]{40,}$/)
      expect(created.webhook.fingerprint).toBe(created.secret.slice(-4))
      expect(created.webhook.events).toEqual(['run.completed', 'run.failed'])

      // It is on the service the profile points at, not anywhere local.
      const onService = await service.call('GET', '/v1/webhooks')
      expect(JSON.stringify(onService.body)).toContain(created.webhook.id)

      const listed = await app.value<{ id: string }[]>('webhooks.list')
      expect(listed.map((w) => w.id)).toContain(created.webhook.id)
      expect(JSON.stringify(listed)).not.toContain(created.secret)

      const none = await app.call('webhooks.create', { url: 'https://a.example.com', events: [] })
      expect(errorOf(none).code).toBe('INVALID_ARGUMENT')

      expect(await app.value('webhooks.delete', { id: created.webhook.id })).toBeNull()
      const after = await app.value<{ id: string }[]>('webhooks.list')
      expect(after.map((w) => w.id)).not.toContain(created.webhook.id)
    })

    it('creates callback secrets on the service, the secret shown once; lists and removes them', async () => {
      const created = await app.value<CreatedCallbackSecret>('callbackSecrets.create', {
        label: '  Render farm  ',
      })
      expect(created.secret).toMatch(/^cbsec_[\w-]{40,}$/)
      expect(created.callbackSecret).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        label: 'Render farm',
        fingerprint: created.secret.slice(-4),
        createdAt: expect.any(String),
      })
      // Made on the service the profile points at, in its organization, with that very key.
      const { store } = service.services
      expect(store.get('callback_secrets', created.callbackSecret.id, service.orgId)).toMatchObject(
        { label: 'Render farm', fingerprint: created.secret.slice(-4) },
      )
      expect(
        store.get<SigningKey>('signing_keys', created.callbackSecret.id, service.orgId)?.material,
      ).toBe(created.secret)

      const second = await app.value<CreatedCallbackSecret>('callbackSecrets.create', {
        label: 'Archive receiver',
      })
      expect(second.secret).not.toBe(created.secret)
      const listed = await app.value<CallbackSecretItem[]>('callbackSecrets.list')
      // Newest first; only what the creation answers said, never a plain secret.
      expect(listed).toEqual([second.callbackSecret, created.callbackSecret])
      expect(JSON.stringify(listed)).not.toContain(created.secret)
      expect(JSON.stringify(listed)).not.toContain(second.secret)

      const blank = await app.call('callbackSecrets.create', { label: '   ' })
      expect(errorOf(blank).code).toBe('INVALID_ARGUMENT')
      expect(blank.ok ? [] : blank.error.issues?.map((i) => i.path)).toEqual(['label'])

      // Removing takes it off Atelier's list; the service, which has no delete, keeps it.
      expect(
        await app.value('callbackSecrets.remove', { id: created.callbackSecret.id }),
      ).toBeNull()
      expect(await app.value('callbackSecrets.list')).toEqual([second.callbackSecret])
      expect(store.get('callback_secrets', created.callbackSecret.id, service.orgId)).toBeDefined()
      // Again, or one never listed: no error.
      expect(
        await app.value('callbackSecrets.remove', { id: created.callbackSecret.id }),
      ).toBeNull()
      const bad = await app.call('callbackSecrets.remove', { id: 'not-an-id' })
      expect(errorOf(bad).code).toBe('INVALID_ARGUMENT')

      // The list is kept per service and organization: the sandbox has its own, empty one.
      await app.value('profiles.switch', { name: null })
      expect(await app.value('callbackSecrets.list')).toEqual([])
      await app.value('profiles.switch', { name: 'studio' })
      expect(await app.value('callbackSecrets.list')).toEqual([second.callbackSecret])

      // The plain secrets reached the window once: no file (the list, the mirror, the ledger, the
      // log) holds either of them, in any form.
      expect(readFileSync(join(app.home, CALLBACK_SECRETS_FILE), 'utf8')).toContain(
        second.callbackSecret.id,
      )
      for (const file of filesUnder(app.home)) {
        const bytes = readFileSync(file)
        for (const secret of [created.secret, second.secret]) {
          expect(bytes.includes(secret), file).toBe(false)
          expect(bytes.includes(Buffer.from(secret).toString('base64')), file).toBe(false)
        }
      }
    })

    it('switches back to the sandbox and removes the profile with its key', async () => {
      const back = await app.value<{ inUse: string | null }>('profiles.switch', { name: null })
      expect(back.inUse).toBeNull()
      expect(app.host.backend()?.info.kind).toBe('sandbox')
      const removed = await app.value<{ profiles: unknown[] }>('profiles.remove', {
        name: 'studio',
      })
      expect(removed.profiles).toEqual([])
      expect(keyring.lookup('studio')).toBeNull()
      expect(keyring.accounts()).not.toContain('studio')
    })

    it('says OFFLINE with what to do when the service cannot be reached', async () => {
      const gone = await startTestSandbox()
      await app.value('profiles.add', { name: 'gone', baseUrl: gone.url, apiKey: gone.keys.admin })
      await app.value('profiles.switch', { name: 'gone' })
      await gone.close()
      const listed = await app.call('webhooks.list')
      expect(errorOf(listed).code).toBe('OFFLINE')
      expect(errorOf(listed).message).toContain('try again once Atelier is back online')
      const secret = await app.call('callbackSecrets.create', { label: 'Offline receiver' })
      expect(errorOf(secret).code).toBe('OFFLINE')
      expect(errorOf(secret).message).toBe(
        'The service cannot be reached, so the callback secret was not created. Callback secrets are made on the service, not on this computer: check the connection and try again once Atelier is back online.',
      )
      // Atelier's own list answers offline, with nothing added.
      expect(await app.value('callbackSecrets.list')).toEqual([])
      // Offline, the profile still opens: its organization was kept when it was added.
      await app.value('profiles.switch', { name: null })
      await app.value('profiles.switch', { name: 'gone' })
      expect(app.host.backend()?.organizationId).toBe(gone.orgId)
      await app.value('profiles.switch', { name: null })
      await app.value('profiles.remove', { name: 'gone' })
    })
  },
)

describe('Settings: what the mirror keeps, storage, rebuild and reset', { timeout: 90_000 }, () => {
  let app: App

  beforeAll(async () => {
    app = await openApp()
    await app.value('sync.start')
  })

  afterAll(async () => {
    await app.close()
  })

  it('saves settings, refuses bad ones field by field, and keeps them across a reopen', async () => {
    const defaults = await app.value<{ syncIntervalMinutes: number }>('settings.get')
    expect(defaults.syncIntervalMinutes).toBe(5)
    const chosen = {
      syncIntervalMinutes: 30,
      mirror: { runs: true, evaluations: false, assets: true },
      mediaDownloads: false,
      mediaCapMiB: 512,
    }
    expect(await app.value('settings.set', chosen)).toEqual(chosen)

    const bad = await app.call('settings.set', { ...chosen, syncIntervalMinutes: 0 })
    expect(errorOf(bad).code).toBe('INVALID_ARGUMENT')
    expect(bad.ok ? [] : bad.error.issues).toEqual([
      { path: 'syncIntervalMinutes', message: 'At least 1 minute.' },
    ])

    // The running core plans its next sync with the new interval.
    const status = await app.value<{ nextAt: number | null; lastOkAt: number }>('sync.start')
    expect(status.nextAt).not.toBeNull()
    expect((status.nextAt ?? 0) - status.lastOkAt).toBeGreaterThanOrEqual(30 * 60_000 - 1_000)

    await app.close()
    app = await openApp(app.home)
    expect(await app.value('settings.get')).toEqual(chosen)
    expect(JSON.parse(readFileSync(join(app.home, SETTINGS_FILE), 'utf8'))).toEqual(chosen)
  })

  it('tells what the local data takes', async () => {
    const figures = await app.value<Record<string, number>>('settings.storage')
    expect(figures.mirrorBytes).toBeGreaterThan(0)
    expect(figures.ledgerBytes).toBeGreaterThan(0)
    expect(figures.sandboxBytes).toBeGreaterThan(0)
    expect(figures.mediaBytes).toBe(0)
    expect(figures.mediaCapBytes).toBe(512 * 1024 * 1024)
  })

  it('rebuilds the mirror only when confirmed, and refills it', async () => {
    const refused = await app.call('settings.rebuildMirror', {})
    expect(errorOf(refused).code).toBe('INVALID_ARGUMENT')
    const mirror = join(app.home, MIRROR_FILE)
    // A mark only the old file holds: a new file could reuse the old one's inode.
    const old = new Database(mirror)
    old.exec('CREATE TABLE rebuild_mark (x)')
    old.close()
    const status = await app.value<{ state: string; last: { outcome: string; fetched: number } }>(
      'settings.rebuildMirror',
      { confirmed: true },
    )
    expect(status.last.outcome).toBe('ok')
    expect(status.last.fetched).toBeGreaterThan(0)
    const rebuilt = new Database(mirror, { readonly: true })
    const marks = rebuilt
      .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'rebuild_mark'")
      .pluck()
      .get()
    rebuilt.close()
    expect(marks).toBe(0)
  })

  it('stops and starts the sandbox in use (offline on purpose), and resets it only when confirmed', async () => {
    const stopped = await app.value<{ running: boolean; inUse: boolean }>('sandbox.stop')
    expect(stopped).toMatchObject({ running: false, inUse: true })
    // The core stays open on the sandbox's address, and knows at once that it is gone.
    const offline = await app.value<{ state: string }>('sync.getStatus')
    expect(offline.state).toBe('offline')
    const started = await app.value<{ running: boolean; inUse: boolean }>('sandbox.start')
    expect(started).toMatchObject({ running: true, inUse: true })
    // Joins the sync the start asked for: the app is back without waiting for a probe.
    const back = await app.value<{ state: string; last: { outcome: string } }>('sync.start')
    expect(back).toMatchObject({ state: 'idle', last: { outcome: 'ok' } })
    expect(errorOf(await app.call('sandbox.reset', { confirmed: false })).code).toBe(
      'INVALID_ARGUMENT',
    )
    const orgBefore = app.host.backend()?.organizationId
    const made = await app.value<CreatedCallbackSecret>('callbackSecrets.create', {
      label: 'Sandbox receiver',
    })
    expect(await app.value('callbackSecrets.list')).toEqual([made.callbackSecret])
    const status = await app.value<{ running: boolean; inUse: boolean }>('sandbox.reset', {
      confirmed: true,
    })
    expect(status).toMatchObject({ running: true, inUse: true })
    // A new sandbox: new organization, and the core opened again on it.
    expect(app.host.backend()?.organizationId).not.toBe(orgBefore)
    const account = await app.value<{ organization: { id: string } }>('account.summary')
    expect(account.organization.id).toBe(app.host.backend()?.organizationId)
    // Its secrets went with the old organization: the list forgets them.
    expect(await app.value('callbackSecrets.list')).toEqual([])
    expect(readFileSync(join(app.home, CALLBACK_SECRETS_FILE), 'utf8')).not.toContain(
      made.callbackSecret.id,
    )
  })
})

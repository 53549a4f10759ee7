import type { AsyncEntry, EntryOptions } from '@napi-rs/keyring'
import { redact } from '../service'
import { SecretsError } from './errors'

/** Where API keys live: one entry per profile, under the service name below. */
export interface Keychain {
  /** The store in the user's words, for messages. */
  readonly storeName: string
  /**
   * Proves the store is there and answers (and, on Linux, that it is the Secret Service),
   * so that a caller can refuse before it sends or writes anything.
   */
  check(account: string): Promise<void>
  get(account: string): Promise<string | null>
  /** Saves, then reads back: a store that did not really keep the key is an error. */
  set(account: string, key: string): Promise<void>
  /** True when an entry was there to delete. */
  delete(account: string): Promise<boolean>
}

export const KEYCHAIN_SERVICE = 'Atelier'

type Action = 'save' | 'read' | 'delete' | 'check'

export interface KeychainPlatform {
  storeName: string
  /** Pins the binding to the real store; null when this platform has none we trust. */
  options: EntryOptions | undefined | null
  advice: (detail: string) => string
}

/** How the binding is used on a platform: exported so that a test can hold the pin in place. */
export function keychainPlatform(platform: NodeJS.Platform): KeychainPlatform {
  if (platform === 'linux') {
    return {
      storeName: 'Secret Service',
      // Left to itself the binding falls back to the kernel keyring when no Secret Service
      // answers: that one lives in memory and is gone at reboot, so a key "saved" there would
      // silently vanish. Pinned, the binding throws instead, and we refuse.
      options: { linux: { store: 'secret-service' } },
      advice: (detail) =>
        /prompt|locked|dismiss/i.test(detail)
          ? 'The keyring is locked and no unlock prompt could be shown. Unlock it (log in to the desktop session, or `gnome-keyring-daemon --unlock` on a headless machine) and try again.'
          : 'Install and start one: GNOME Keyring (package gnome-keyring) or KWallet in a desktop session. On a headless machine, run inside a D-Bus session with an unlocked keyring, e.g. `dbus-run-session -- sh -c \'printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets >/dev/null; exec atelier …\'`.',
    }
  }
  if (platform === 'darwin') {
    return {
      storeName: 'macOS Keychain',
      options: undefined,
      advice: () => 'Unlock the login keychain and allow Atelier to use it, then try again.',
    }
  }
  if (platform === 'win32') {
    return {
      storeName: 'Windows Credential Manager',
      options: undefined,
      advice: () => 'Check that Credential Manager works for this user, then try again.',
    }
  }
  return {
    storeName: 'system keychain',
    // The binding's defaults elsewhere are not ones we have checked for a silent fallback.
    options: null,
    advice: () => 'Use Atelier on Linux (with a Secret Service), macOS or Windows.',
  }
}

const VERB: Record<Action, string> = {
  save: 'save the API key',
  read: 'read the API key',
  delete: 'delete the API key',
  check: 'keep the API key',
}

function unavailable(
  platform: KeychainPlatform,
  action: Action,
  error: unknown,
  secrets: readonly string[],
): SecretsError {
  const raw = error instanceof Error ? error.message : String(error)
  // The binding's messages come from D-Bus and the OS; they should never hold the key, but it
  // costs nothing to make sure.
  const detail = redact(raw, secrets).replace(/\s+/g, ' ').trim().slice(0, 300)
  return new SecretsError(
    'KEYCHAIN_UNAVAILABLE',
    `The ${platform.storeName} is not available, so Atelier cannot ${VERB[action]}${detail ? ` (${detail})` : ''}. Atelier keeps API keys only in the system keychain, never in a file. ${platform.advice(detail)}`,
  )
}

type Binding = typeof import('@napi-rs/keyring')

let binding: Promise<Binding> | undefined

// Loaded on first use, so that commands without keys start without the native module, and a
// machine where it failed to install still runs them.
function loadBinding(): Promise<Binding> {
  binding ??= import('@napi-rs/keyring')
  return binding
}

/** The platform's own credential store, through @napi-rs/keyring, with no fallback of any kind. */
export function osKeychain(nodePlatform: NodeJS.Platform = process.platform): Keychain {
  const platform = keychainPlatform(nodePlatform)

  async function entry(account: string, action: Action, secrets: string[]): Promise<AsyncEntry> {
    if (platform.options === null) {
      throw unavailable(platform, action, `${nodePlatform} is not supported`, secrets)
    }
    let module: Binding
    try {
      module = await loadBinding()
    } catch (error) {
      binding = undefined
      throw unavailable(platform, action, error, secrets)
    }
    try {
      // On Linux this throws when no Secret Service owns org.freedesktop.secrets on the session
      // bus (or there is no session bus): the proof we ask for before trusting it with a key.
      return new module.AsyncEntry(KEYCHAIN_SERVICE, account, platform.options)
    } catch (error) {
      throw unavailable(platform, action, error, secrets)
    }
  }

  async function attempt<T>(action: Action, secrets: string[], work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (error instanceof SecretsError) throw error
      throw unavailable(platform, action, error, secrets)
    }
  }

  return {
    storeName: platform.storeName,
    async check(account) {
      const found = await entry(account, 'check', [])
      // A read goes through the whole store (and a locked one asks to be unlocked), which
      // proves more than a connection does.
      await attempt('check', [], () => found.getPassword())
    },
    async get(account) {
      const found = await entry(account, 'read', [])
      return attempt('read', [], () => found.getPassword())
    },
    async set(account, key) {
      const found = await entry(account, 'save', [key])
      await attempt('save', [key], () => found.setPassword(key))
      const stored = await attempt('save', [key], () => found.getPassword())
      if (stored !== key) {
        await found.deleteCredential().catch(() => false)
        throw unavailable(platform, 'save', 'the key read back differs from the key saved', [key])
      }
    },
    async delete(account) {
      const found = await entry(account, 'delete', [])
      return attempt('delete', [], () => found.deleteCredential())
    },
  }
}

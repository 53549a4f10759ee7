import { sandboxDir } from '../app/paths'
import type { Backend } from '../core'
import { startSandboxThread, type LocalSandbox } from './sandbox-thread'
import { Profiles, type Keychain } from '../secrets'
import { createServiceClient } from '../service'

/** The sandbox's mirror cursors go under this name, which no profile can take (":" is refused). */
export const SANDBOX_PROFILE = ':sandbox'

/** The backend of a running sandbox: its admin key, in its main organization. */
export function sandboxBackend(sandbox: LocalSandbox): Backend {
  return {
    info: { kind: 'sandbox', label: 'Local sandbox', url: sandbox.url },
    apiKey: sandbox.keys.admin,
    organizationId: sandbox.orgId,
    profile: SANDBOX_PROFILE,
    close: () => sandbox.close(),
  }
}

/**
 * A local sandbox as a backend, its data in `dataDir`: in a thread of its own, as the app runs
 * it (`startHomeSandbox`), so that a test or a bench given this drives the app's own path.
 */
export async function startLocalSandbox(dataDir: string): Promise<Backend> {
  return sandboxBackend(await startSandboxThread(dataDir))
}

/**
 * The sandbox on a free loopback port, its data in `<home>/sandbox`, in a thread of its own
 * (`sandbox-thread/`): answering the sync's requests must not hold the window's calls.
 */
export function startHomeSandbox(home: string, port = 0): Promise<LocalSandbox> {
  return startSandboxThread(sandboxDir(home), port)
}

/**
 * A profile's service with its key from the keychain. Its `close` leaves nothing running: the
 * service is someone else's. Throws the SecretsError of a missing key or profile.
 */
export async function openProfileBackend(
  home: string,
  name: string,
  keychain: Keychain,
): Promise<Backend> {
  const { profile, apiKey } = await new Profiles({ home, keychain }).resolve(name)
  // Profiles added from Settings carry their organization; one added by `atelier profile add`
  // without it asks the service whose key it is (the mirror is kept per organization).
  const organizationId =
    profile.organization_id ??
    (await createServiceClient({ baseUrl: profile.base_url, apiKey }).get('/v1/account'))
      .organization.id
  return {
    info: { kind: 'service', label: profile.name, url: profile.base_url },
    apiKey,
    organizationId,
    profile: profile.name,
    close: () => Promise.resolve(),
  }
}

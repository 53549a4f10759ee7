import { join } from 'node:path'
import type { Backend } from '../app/backend'
import type { RunningSandbox } from '../sandbox'
import { Profiles, type Keychain } from '../secrets'
import { createServiceClient } from '../service'

/** The local sandbox's data, under the app's home: what `sandbox.reset` wipes, and nothing else. */
export const SANDBOX_DIR = 'sandbox'

export function sandboxDir(home: string): string {
  return join(home, SANDBOX_DIR)
}

/** The sandbox on a free loopback port, its data in `<home>/sandbox`. */
export async function startHomeSandbox(home: string): Promise<RunningSandbox> {
  // Loaded on demand: Fastify and sharp are only needed when the sandbox runs.
  const { startSandbox } = await import('../sandbox')
  return startSandbox({ dataDir: sandboxDir(home), port: 0 })
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

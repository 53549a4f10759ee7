import { join } from 'node:path'
import { startLocalSandbox, type Backend } from '../app/backend'
import { readProfiles, resolveProfile } from '../secrets'
import { createServiceClient } from '../service'

/**
 * The service the browser mode talks to: the named profile, else the current one, else (no
 * profile at all) the local sandbox in `<home>/sandbox`, as the desktop app does. Profile
 * problems (no key in the keychain, a damaged profiles file) throw their `SecretsError`, so that
 * the command can say what to do before anything is served.
 */
export async function openWebBackend(home: string, profileName?: string): Promise<Backend> {
  if (profileName === undefined && (await readProfiles(home)).current === null) {
    return startLocalSandbox(join(home, 'sandbox'))
  }
  const { profile, apiKey } = await resolveProfile(home, profileName)
  // The mirror is kept per organization, so a profile without one asks the service whose key it is.
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

import { osKeychain } from './keychain'
import { Profiles, type ResolvedProfile } from './profiles'

export { checkKey, type Balance, type CheckKeyOptions } from './check-key'
export { isSecretsError, SecretsError, type SecretsErrorCode } from './errors'
export { KEYCHAIN_SERVICE, osKeychain, type Keychain } from './keychain'
export {
  isLoopbackUrl,
  parseApiKey,
  parseBaseUrl,
  parseOrganizationId,
  parseProfileInput,
  parseProfileName,
  type Profile,
  type ProfileInput,
} from './profile'
export {
  Profiles,
  type AddedProfile,
  type ProfileListing,
  type ProfilesOptions,
  type RemovedProfile,
  type ResolvedProfile,
} from './profiles'
export { PROFILES_FILE, profilesFilePath, readProfiles, type ProfilesState } from './profiles-file'

/**
 * The profile a command works with (the named one, else the current one) and its key from the
 * OS keychain, ready for `createServiceClient`.
 */
export function resolveProfile(home: string, name?: string): Promise<ResolvedProfile> {
  return new Profiles({ home, keychain: osKeychain() }).resolve(name)
}

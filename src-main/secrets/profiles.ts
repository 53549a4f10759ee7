import { checkKey as checkKeyWithService, type Balance } from './check-key'
import { SecretsError } from './errors'
import type { Keychain } from './keychain'
import {
  parseApiKey,
  parseProfileInput,
  parseProfileName,
  type Profile,
  type ProfileInput,
} from './profile'
import { readProfiles, writeProfiles, type ProfilesState } from './profiles-file'

export interface ProfilesOptions {
  /** The folder that holds `profiles.json` (the `--home` of the command). */
  home: string
  keychain: Keychain
  /** Proves a key against the service before it is kept; tests may count the calls. */
  checkKey?: (profile: Profile, apiKey: string) => Promise<Balance>
  now?: () => Date
}

export interface ProfileListing {
  current: string | null
  profiles: Profile[]
}

export interface AddedProfile {
  profile: Profile
  /** True when it became the current profile (it was the first one). */
  current: boolean
  balance: Balance
}

export interface RemovedProfile {
  profile: Profile
  /** False when the keychain had no key for it any more. */
  keyDeleted: boolean
  /** It was the current profile, so now none is. */
  wasCurrent: boolean
  current: string | null
}

export interface ResolvedProfile {
  profile: Profile
  /** Keep it in memory only: never in a file, a log line, an error message or an IPC answer. */
  apiKey: string
}

/** Profiles on disk, their keys in the keychain, and the rules that keep the two in step. */
export class Profiles {
  readonly #home: string
  readonly #keychain: Keychain
  readonly #checkKey: (profile: Profile, apiKey: string) => Promise<Balance>
  readonly #now: () => Date

  constructor(options: ProfilesOptions) {
    this.#home = options.home
    this.#keychain = options.keychain
    this.#checkKey = options.checkKey ?? ((profile, apiKey) => checkKeyWithService(profile, apiKey))
    this.#now = options.now ?? (() => new Date())
  }

  async list(): Promise<ProfileListing> {
    return readProfiles(this.#home)
  }

  /**
   * Adds a profile once its key has proved itself against the service. The order matters:
   * nothing leaves the machine unless the keychain can keep the key, and nothing is written
   * unless the service accepted it.
   */
  async add(input: ProfileInput, rawKey: string): Promise<AddedProfile> {
    const fields = parseProfileInput(input)
    const apiKey = parseApiKey(rawKey)
    this.#assertFree(await readProfiles(this.#home), fields.name)
    await this.#keychain.check(fields.name)
    const profile: Profile = { ...fields, created_at: this.#now().toISOString() }
    const balance = await this.#checkKey(profile, apiKey)

    // Read again: another command may have changed the file while the service answered.
    const state = await readProfiles(this.#home)
    this.#assertFree(state, fields.name)
    await this.#keychain.set(fields.name, apiKey)
    const current = state.current ?? profile.name
    try {
      await writeProfiles(this.#home, { current, profiles: [...state.profiles, profile] })
    } catch (error) {
      // A key with no profile would be invisible to `list` and `remove`.
      await this.#keychain.delete(fields.name).catch(() => false)
      throw error
    }
    return { profile, current: current === profile.name, balance }
  }

  async use(name: string): Promise<Profile> {
    const state = await readProfiles(this.#home)
    const profile = this.#find(state, name)
    await writeProfiles(this.#home, { ...state, current: profile.name })
    return profile
  }

  /** Deletes the key first: if the keychain cannot, the profile stays so that a retry can. */
  async remove(name: string): Promise<RemovedProfile> {
    const state = await readProfiles(this.#home)
    const profile = this.#find(state, name)
    const keyDeleted = await this.#keychain.delete(profile.name)
    const latest = await readProfiles(this.#home)
    const wasCurrent = latest.current === profile.name
    const current = wasCurrent ? null : latest.current
    await writeProfiles(this.#home, {
      current,
      profiles: latest.profiles.filter((p) => p.name !== profile.name),
    })
    return { profile, keyDeleted, wasCurrent, current }
  }

  /** The named profile, or the current one, with its key from the keychain. */
  async resolve(name?: string): Promise<ResolvedProfile> {
    const state = await readProfiles(this.#home)
    const wanted = name ?? state.current
    if (wanted === null) {
      throw new SecretsError(
        'NO_PROFILE',
        state.profiles.length === 0
          ? 'There is no profile yet. Add one: atelier profile add NAME --base-url URL (the key is read from stdin).'
          : 'No profile is selected. Pick one with `atelier profile use NAME`, or pass --profile NAME.',
      )
    }
    const profile = this.#find(state, wanted)
    const apiKey = await this.#keychain.get(profile.name)
    if (apiKey === null) {
      throw new SecretsError(
        'KEY_MISSING',
        `The ${this.#keychain.storeName} holds no key for profile ${profile.name}. Remove the profile and add it again with its key.`,
      )
    }
    return { profile, apiKey }
  }

  /** Checks the stored key of a profile against the service again. */
  async check(name?: string): Promise<{ profile: Profile; balance: Balance }> {
    const { profile, apiKey } = await this.resolve(name)
    return { profile, balance: await this.#checkKey(profile, apiKey) }
  }

  // Compared without case: Windows Credential Manager matches target names without case, so
  // "Work" and "work" would share one key there.
  #assertFree(state: ProfilesState, name: string): void {
    const taken = state.profiles.find((p) => p.name.toLowerCase() === name.toLowerCase())
    if (taken) {
      throw new SecretsError(
        'PROFILE_EXISTS',
        `A profile named ${taken.name} already exists. Pick another name, or remove it first with \`atelier profile remove ${taken.name}\`.`,
      )
    }
  }

  #find(state: ProfilesState, name: string): Profile {
    parseProfileName(name)
    const profile = state.profiles.find((p) => p.name === name)
    if (!profile) {
      const known = state.profiles.map((p) => p.name)
      throw new SecretsError(
        'PROFILE_NOT_FOUND',
        `There is no profile named ${name}. ${known.length > 0 ? `The profiles are: ${known.join(', ')}.` : 'There are no profiles yet.'}`,
      )
    }
    return profile
  }
}

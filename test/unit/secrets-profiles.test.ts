import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  isLoopbackUrl,
  parseApiKey,
  parseBaseUrl,
  parseOrganizationId,
  parseProfileName,
  profilesFilePath,
  readProfiles,
  SecretsError,
  type Profile,
} from '../../src-main/secrets'
import { keychainPlatform } from '../../src-main/secrets/keychain'
import { writeProfiles } from '../../src-main/secrets/profiles-file'

const scratch = mkdtempSync(join(tmpdir(), 'atelier-secrets-unit-'))
let homes = 0
const newHome = () => join(scratch, `home-${++homes}`)
const KEY = 'sk_live_SENTINEL_0c9f4e1b'
const ORG = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

function codeOf(work: () => unknown): string {
  try {
    work()
  } catch (error) {
    if (error instanceof SecretsError) return error.code
    throw error
  }
  throw new Error('expected a SecretsError')
}

async function codeOfAsync(work: () => Promise<unknown>): Promise<SecretsError> {
  try {
    await work()
  } catch (error) {
    if (error instanceof SecretsError) return error
    throw error
  }
  throw new Error('expected a SecretsError')
}

describe('profile fields', () => {
  it('accepts plain names of 1 to 64 characters and nothing else', () => {
    for (const name of ['a', 'work', 'Team-2.prod_eu', 'x'.repeat(64)]) {
      expect(parseProfileName(name)).toBe(name)
    }
    for (const name of ['', 'x'.repeat(65), 'with space', 'a/b', '../up', 'café', 'a:b', '-\n']) {
      expect(codeOf(() => parseProfileName(name))).toBe('INVALID_PROFILE_NAME')
    }
  })

  it('gives base URLs one form and refuses credentials, queries and other schemes', () => {
    expect(parseBaseUrl('https://api.example.com/')).toBe('https://api.example.com')
    expect(parseBaseUrl(' https://api.example.com/prefix// ')).toBe(
      'https://api.example.com/prefix',
    )
    expect(parseBaseUrl('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787')
    for (const url of [
      'api.example.com',
      'ftp://example.com',
      'file:///etc/passwd',
      'https://user:pass@example.com',
      'https://user@example.com',
      'https://example.com/?key=1',
      'https://example.com/#x',
      'not a url',
    ]) {
      expect(codeOf(() => parseBaseUrl(url))).toBe('INVALID_BASE_URL')
    }
  })

  it('tells loopback addresses from the network', () => {
    expect(isLoopbackUrl('http://127.0.0.1:1')).toBe(true)
    expect(isLoopbackUrl('http://localhost:8787')).toBe(true)
    expect(isLoopbackUrl('http://[::1]:8787')).toBe(true)
    expect(isLoopbackUrl('http://10.0.0.2')).toBe(false)
    expect(isLoopbackUrl('http://127.0.0.1.example.com')).toBe(false)
  })

  it('takes organization ids as UUIDs, in lower case', () => {
    expect(parseOrganizationId(ORG.toUpperCase())).toBe(ORG)
    for (const id of ['', 'acme', `${ORG}0`, ORG.replaceAll('-', '')]) {
      expect(codeOf(() => parseOrganizationId(id))).toBe('INVALID_ORGANIZATION_ID')
    }
  })

  it('strips the newline around a pasted key and refuses what cannot be a key, without quoting it', () => {
    expect(parseApiKey(`${KEY}\n`)).toBe(KEY)
    expect(parseApiKey(`  ${KEY}\r\n`)).toBe(KEY)
    for (const raw of [
      '',
      ' \n',
      `${KEY}\n${KEY}\n`,
      `${KEY} ${KEY}`,
      `${KEY}é`,
      `${KEY}\u0000`,
      'k'.repeat(4097),
    ]) {
      let error: unknown
      try {
        parseApiKey(raw)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(SecretsError)
      expect((error as SecretsError).code).toBe('INVALID_API_KEY')
      expect((error as SecretsError).message).not.toContain(KEY)
    }
  })
})

describe('the profiles file', () => {
  const profile: Profile = {
    name: 'work',
    base_url: 'https://api.example.com',
    organization_id: ORG,
    created_at: '2026-11-21T10:00:00.000Z',
  }

  it('is empty before the first profile and round-trips what is written', async () => {
    const home = newHome()
    expect(await readProfiles(home)).toEqual({ current: null, profiles: [] })
    await writeProfiles(home, { current: 'work', profiles: [profile] })
    expect(await readProfiles(home)).toEqual({ current: 'work', profiles: [profile] })
    // Only the file itself is left: the temp file was renamed onto it.
    expect(readdirSync(home)).toEqual(['profiles.json'])
    if (process.platform !== 'win32') {
      expect(statSync(profilesFilePath(home)).mode & 0o777).toBe(0o600)
      expect(statSync(home).mode & 0o777).toBe(0o700)
    }
  })

  it('names the file and what is wrong with it when it is damaged', async () => {
    const home = newHome()
    await writeProfiles(home, { current: null, profiles: [profile] })
    const path = profilesFilePath(home)
    const good = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
    const cases: [string, string][] = [
      ['{"version": 1, "current": null, "profiles": [', 'not valid JSON'],
      ['', 'not valid JSON'],
      ['[]', 'the file'],
      [
        JSON.stringify({ ...good, profiles: [{ ...profile, base_url: 'ftp://x' }] }),
        'profiles.0.base_url',
      ],
      [JSON.stringify({ ...good, profiles: [{ ...profile, name: 'a b' }] }), 'profiles.0.name'],
      [
        JSON.stringify({ ...good, profiles: [{ ...profile, organization_id: 'acme' }] }),
        'profiles.0.organization_id',
      ],
      [JSON.stringify({ ...good, current: 'ghost' }), 'current names no profile'],
      [
        JSON.stringify({ ...good, profiles: [profile, { ...profile, name: 'WORK' }] }),
        'repeats the profile name',
      ],
      [JSON.stringify({ ...good, version: 0 }), 'version'],
    ]
    for (const [text, why] of cases) {
      writeFileSync(path, text)
      const error = await codeOfAsync(() => readProfiles(home))
      expect(error.code).toBe('PROFILES_FILE_DAMAGED')
      expect(error.message).toContain(path)
      expect(error.message).toContain(why)
    }
  })

  it('refuses a file from a newer Atelier instead of calling it damaged', async () => {
    const home = newHome()
    await writeProfiles(home, { current: null, profiles: [] })
    writeFileSync(
      profilesFilePath(home),
      JSON.stringify({ version: 2, current: null, profiles: [] }),
    )
    const error = await codeOfAsync(() => readProfiles(home))
    expect(error.message).toContain('newer Atelier')
  })
})

describe('the keychain binding', () => {
  it('is pinned to the Secret Service on Linux, so it can never fall back to kernel memory', () => {
    expect(keychainPlatform('linux').options).toEqual({ linux: { store: 'secret-service' } })
    expect(keychainPlatform('linux').storeName).toBe('Secret Service')
  })

  it('refuses platforms whose default store has not been checked', () => {
    expect(keychainPlatform('freebsd').options).toBeNull()
    expect(keychainPlatform('darwin').storeName).toBe('macOS Keychain')
  })
})

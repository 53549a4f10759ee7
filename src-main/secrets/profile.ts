import { z } from 'zod'
import { SecretsError } from './errors'

/** What Atelier keeps about a profile on disk. The key is never part of it. */
export interface Profile {
  name: string
  /** Normalised: no trailing slash, no query or fragment. */
  base_url: string
  /** Sent as `X-Organization-Id`; null lets the service pick the key's own organization. */
  organization_id: string | null
  created_at: string
}

export interface ProfileInput {
  name: string
  baseUrl: string
  organizationId?: string | undefined
}

// Names become keychain account names and command-line words, so they stay plain.
const NAME = /^[A-Za-z0-9._-]{1,64}$/
// The service's ids are UUIDs, but not every one sets the RFC version bits, so only the shape
// is checked.
const ORGANIZATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const API_KEY_MAX = 4096

export function parseProfileName(name: string): string {
  if (!NAME.test(name)) {
    throw new SecretsError(
      'INVALID_PROFILE_NAME',
      `A profile name is 1 to 64 letters, digits, "-", "_" or "." (got ${JSON.stringify(name.slice(0, 80))}).`,
    )
  }
  return name
}

/** Checks a service address and gives it the one form the client and the file use. */
export function parseBaseUrl(value: string): string {
  const fail = (why: string) =>
    new SecretsError(
      'INVALID_BASE_URL',
      `The base URL ${why}. Give the service address, e.g. https://api.example.com.`,
    )
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    throw fail('is not a valid URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw fail('must start with https:// or http://')
  }
  // Credentials in the URL would be a second secret outside the keychain, printed by `list`.
  if (url.username !== '' || url.password !== '') {
    throw fail('must not contain a user name or password (the API key goes to the keychain)')
  }
  if (url.search !== '' || url.hash !== '') {
    throw fail('must not have a query (?…) or fragment (#…)')
  }
  // Every path the client calls starts with /v1, so an address copied from API docs that ends
  // in /v1 would reach /v1/v1/… and be told NOT_FOUND for everything. Saved without it instead:
  // the address means the same service either way, so nothing needs asking.
  return url.href.replace(/\/+$/, '').replace(/\/v1$/i, '')
}

export function parseOrganizationId(value: string): string {
  const id = value.trim()
  if (!ORGANIZATION_ID.test(id)) {
    throw new SecretsError(
      'INVALID_ORGANIZATION_ID',
      `The organization id must be a UUID such as 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b (got ${JSON.stringify(id.slice(0, 80))}).`,
    )
  }
  return id.toLowerCase()
}

/** Validates what a user typed for a new profile; every message names the faulty field. */
export function parseProfileInput(
  input: ProfileInput,
): Pick<Profile, 'name' | 'base_url' | 'organization_id'> {
  return {
    name: parseProfileName(input.name),
    base_url: parseBaseUrl(input.baseUrl),
    organization_id:
      input.organizationId === undefined ? null : parseOrganizationId(input.organizationId),
  }
}

/**
 * Checks a key as read from stdin or a form: surrounding whitespace (a pasted newline) goes,
 * and what is left must be something an HTTP header can carry. The messages never quote it.
 */
export function parseApiKey(value: string): string {
  const key = value.trim()
  if (key === '') {
    throw new SecretsError('INVALID_API_KEY', 'The API key is empty.')
  }
  if (/[\r\n]/.test(key)) {
    throw new SecretsError(
      'INVALID_API_KEY',
      'The API key must be a single line; the input held more than one.',
    )
  }
  if (key.length > API_KEY_MAX) {
    throw new SecretsError(
      'INVALID_API_KEY',
      `The API key is longer than ${API_KEY_MAX} characters; check what was pasted.`,
    )
  }
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new SecretsError(
      'INVALID_API_KEY',
      'The API key may only hold printable ASCII characters without spaces; check what was pasted.',
    )
  }
  return key
}

/** True for hosts where plain http never leaves the machine. */
export function isLoopbackUrl(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host)
}

export const profileSchema = z.object({
  name: z.string().regex(NAME, 'is not a valid profile name'),
  // A profile saved before /v1 was dropped (see parseBaseUrl) reads in the form saved today.
  base_url: z
    .string()
    .refine((value) => {
      try {
        parseBaseUrl(value)
        return true
      } catch {
        return false
      }
    }, 'is not a valid base URL (https://host, no credentials, no query)')
    .transform((value) => parseBaseUrl(value)),
  organization_id: z.string().regex(ORGANIZATION_ID, 'is not a UUID').nullable(),
  created_at: z.iso.datetime({ offset: true }),
}) satisfies z.ZodType<Profile>

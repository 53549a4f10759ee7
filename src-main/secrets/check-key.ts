import type { components } from '../../src-shared/api/schema.gen'
import { createServiceClient, isServiceError, redact, type ServiceClientOptions } from '../service'
import { SecretsError } from './errors'
import type { Profile } from './profile'

export type Balance = components['schemas']['Balance']

export type CheckKeyOptions = Pick<ServiceClientOptions, 'fetch' | 'timeoutMs' | 'retry'>

// A person is waiting at a prompt: fail in seconds, not after the full backoff a sync may use.
const DEFAULTS: CheckKeyOptions = { timeoutMs: 15_000, retry: { maxAttempts: 3 } }

/**
 * Asks the service for the balance with this key: the cheapest call that proves the key, its
 * organization and the address all work. Failures come back as plain sentences, keyed by
 * what the user should fix.
 */
export async function checkKey(
  profile: Pick<Profile, 'base_url' | 'organization_id'>,
  apiKey: string,
  options: CheckKeyOptions = {},
): Promise<Balance> {
  const client = createServiceClient({
    ...DEFAULTS,
    ...options,
    baseUrl: profile.base_url,
    apiKey,
    organizationId: profile.organization_id ?? undefined,
  })
  try {
    return await client.get('/v1/billing/balance')
  } catch (error) {
    throw describeFailure(profile, apiKey, error)
  }
}

function describeFailure(
  profile: Pick<Profile, 'base_url' | 'organization_id'>,
  apiKey: string,
  error: unknown,
): SecretsError {
  const clean = (text: string) => redact(text, [apiKey])
  if (!isServiceError(error)) {
    const message = error instanceof Error ? error.message : String(error)
    return new SecretsError('SERVICE_ERROR', clean(`Could not check the key: ${message}`))
  }
  if (error.status === 401) {
    return new SecretsError(
      'KEY_REJECTED',
      clean(
        `The service at ${profile.base_url} rejected this key (${error.code}): it is not a valid key there. Check that you copied the whole key, for this service.`,
      ),
    )
  }
  if (error.status === 403) {
    const organization = profile.organization_id
      ? `organization ${profile.organization_id}`
      : "the key's organization"
    return new SecretsError(
      'KEY_FORBIDDEN',
      clean(
        `The service at ${profile.base_url} knows this key but refused it for ${organization}: ${error.message}`,
      ),
    )
  }
  if (error.status === 0 && (error.code === 'NETWORK_ERROR' || error.code === 'TIMEOUT')) {
    return new SecretsError(
      'SERVICE_UNREACHABLE',
      clean(`Could not reach ${profile.base_url}: ${error.message}`),
    )
  }
  return new SecretsError(
    'SERVICE_ERROR',
    clean(`The service at ${profile.base_url} could not check the key: ${error.message}`),
  )
}

import { isServiceError, type ServiceClient } from '../service'
import { EXIT } from './exit-codes'
import { CliError } from './errors'

/**
 * The organization a command works in: the one the profile names, or else the key's own, which
 * only the service knows. Commands that can work offline look in their local data first and ask
 * this only when that has no answer.
 */
export async function organizationOf(client: ServiceClient, named: string | null): Promise<string> {
  if (named !== null) return named
  try {
    const account = await client.get('/v1/account')
    return account.organization.id
  } catch (error) {
    if (isServiceError(error) && error.status === 0) {
      throw new CliError(
        "The service cannot be reached, so the organization of this profile's key cannot be looked up; nothing was changed, and the local data is still usable. Try again when the connection is back, or give the profile an organization (`atelier profile add NAME --org ID`).",
        EXIT.failed,
        'OFFLINE',
      )
    }
    throw error
  }
}

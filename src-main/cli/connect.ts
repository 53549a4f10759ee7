import { openLogger, requestLogger, type Logger } from '../log'
import { isSecretsError, resolveProfile, type Profile } from '../secrets'
import { createServiceClient, type ServiceClient } from '../service'
import { EXIT } from './exit-codes'
import type { CommandContext } from './context'
import { CliError } from './errors'

export interface Connection {
  profile: Profile
  client: ServiceClient
  /** The command's log, which knows the key so that no line can carry it; close it at the end. */
  logger: Logger
}

/**
 * The profile a command talks to the service with, its client and its log. Keychain problems
 * become usage or failure exits; the key itself stays inside the client and the log's masking.
 */
export async function connect(
  context: CommandContext,
  options: { command: string; attempts?: number },
): Promise<Connection> {
  const globals = context.globals()
  let resolved
  try {
    resolved = await resolveProfile(globals.home, globals.profile)
  } catch (error) {
    if (!isSecretsError(error)) throw error
    throw new CliError(error.message, error.isInputError ? EXIT.usage : EXIT.failed, error.code)
  }
  const { profile, apiKey } = resolved
  const logger = openLogger({
    home: globals.home,
    level: globals.logLevel,
    secrets: [apiKey],
    bindings: { command: options.command, profile: profile.name },
  })
  const client = createServiceClient({
    baseUrl: profile.base_url,
    apiKey,
    organizationId: profile.organization_id ?? undefined,
    log: requestLogger(logger),
    ...(options.attempts === undefined ? {} : { retry: { maxAttempts: options.attempts } }),
  })
  return { profile, client, logger }
}

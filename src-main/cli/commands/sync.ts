import type { Command } from 'commander'
import { openDatabases } from '../../db'
import { isSecretsError, resolveProfile } from '../../secrets'
import { createServiceClient, isServiceError, type ServiceClient } from '../../service'
import {
  SYNC_COLLECTIONS,
  SyncEngine,
  type SyncCollection,
  type SyncProgress,
  type SyncResult,
} from '../../sync'
import { EXIT } from '../exit-codes'
import { CliError, type CommandContext } from '../program'

function parseCollections(value: string | undefined): SyncCollection[] | undefined {
  if (value === undefined) return undefined
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const known = new Set<string>(SYNC_COLLECTIONS)
  const unknown = names.filter((name) => !known.has(name))
  if (names.length === 0 || unknown.length > 0) {
    throw new CliError(
      `Unknown collection ${unknown.length > 0 ? `"${unknown.join('", "')}"` : '(none given)'}; choose from ${SYNC_COLLECTIONS.join(', ')}.`,
      EXIT.usage,
      'USAGE',
    )
  }
  return names as SyncCollection[]
}

/** The organization the profile names, or else the key's own, which only the service knows. */
async function organizationOf(client: ServiceClient, named: string | null): Promise<string> {
  if (named !== null) return named
  try {
    const account = await client.get('/v1/account')
    return account.organization.id
  } catch (error) {
    if (isServiceError(error) && error.status === 0) {
      throw new CliError(
        'The service cannot be reached, so nothing was synced; the local mirror is unchanged and still usable. Sync again when the connection is back.',
        EXIT.failed,
        'OFFLINE',
      )
    }
    throw error
  }
}

function summary(result: SyncResult): string {
  const rows = result.collections.map(
    (c) =>
      `${c.collection.padEnd(14)} ${String(c.fetched).padStart(8)} fetched ${String(c.written).padStart(8)} written ${String(c.tombstones).padStart(6)} deleted`,
  )
  return [...rows, `${result.state} in ${(result.elapsedMs / 1000).toFixed(1)} s`].join('\n')
}

export function registerSync(program: Command, context: CommandContext): void {
  program
    .command('sync')
    .description('bring the local mirror up to date with the service (incremental, resumable)')
    .option('--collections <names>', `comma-separated, from: ${SYNC_COLLECTIONS.join(', ')}`)
    .action(async (flags: { collections?: string }) => {
      const collections = parseCollections(flags.collections)
      const globals = context.globals()
      let resolved
      try {
        resolved = await resolveProfile(globals.home, globals.profile)
      } catch (error) {
        if (!isSecretsError(error)) throw error
        throw new CliError(error.message, error.isInputError ? EXIT.usage : EXIT.failed, error.code)
      }
      const { profile, apiKey } = resolved
      const client = createServiceClient({
        baseUrl: profile.base_url,
        apiKey,
        organizationId: profile.organization_id ?? undefined,
      })
      const orgId = await organizationOf(client, profile.organization_id)
      const dbs = openDatabases(globals.home)
      try {
        const onProgress = (p: SyncProgress) => {
          if (p.phase !== 'start') {
            context.io.stderr(`${p.collection}: ${p.done} records, ${p.pages} pages\n`)
          }
        }
        const controller = new AbortController()
        // Ctrl-C stops after the page being written; the next sync resumes there.
        const stop = () => {
          controller.abort()
        }
        process.once('SIGINT', stop)
        let result: SyncResult
        try {
          result = await new SyncEngine({
            client,
            mirror: dbs.mirror,
            profileName: profile.name,
            orgId,
            onProgress,
          }).syncAll({ signal: controller.signal, ...(collections ? { collections } : {}) })
        } finally {
          process.off('SIGINT', stop)
        }
        if (result.state !== 'ok') {
          throw new CliError(
            result.message ?? result.state,
            EXIT.failed,
            result.code ?? result.state.toUpperCase(),
          )
        }
        context.print(result, summary(result))
      } finally {
        dbs.close()
      }
    })
}

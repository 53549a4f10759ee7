import type { Command } from 'commander'
import { SYNC_COLLECTIONS, type SyncCollection } from '../../sync/collections'
import { EXIT } from '../exit-codes'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

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

export function registerSync(program: Command, context: CommandContext): void {
  program
    .command('sync')
    .description('bring the local mirror up to date with the service (incremental, resumable)')
    .option(
      '--collections <names>',
      `comma-separated, from: ${SYNC_COLLECTIONS.join(', ')} (a partial pull: no outbox, no media)`,
    )
    .option('--no-media', "skip downloading finished runs' outputs and assets' thumbnails")
    .action(async (flags: { collections?: string; media: boolean }) => {
      const collections = parseCollections(flags.collections)
      const { sync } = await import('../actions/sync')
      await sync(context, collections, flags)
    })
}

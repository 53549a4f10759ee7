import { Option, type Command } from 'commander'
import type { SearchQueryInput } from '../../../src-shared/domain/search'
import {
  FILTER_KINDS,
  MEDIA_TYPES,
  SEARCH_KINDS,
  SEARCH_LIMIT_MAX,
  type SearchFilter,
  type SearchKind,
} from '../../../src-shared/domain/search-filters'
import { EXIT } from '../exit-codes'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

interface SearchFlags {
  kind?: SearchKind
  status?: string
  model?: string
  from?: string
  to?: string
  verdict?: 'passed' | 'failed'
  feedback?: 'positive' | 'negative' | 'none'
  folder?: string
  mediaType?: string
  limit?: string
  cursor?: string
}

const FLAG: Record<SearchFilter, string> = {
  status: '--status',
  model: '--model',
  from: '--from',
  to: '--to',
  verdict: '--verdict',
  feedback: '--feedback',
  folder: '--folder',
  mediaType: '--media-type',
}

function flagsByKind(): string {
  return SEARCH_KINDS.map(
    (kind) =>
      `${kind}: ${(Object.keys(FLAG) as SearchFilter[])
        .filter((filter) => FILTER_KINDS[filter].includes(kind))
        .map((filter) => FLAG[filter])
        .join(' ')}`,
  ).join('; ')
}

const usage = (message: string, code = 'USAGE') => new CliError(message, EXIT.usage, code)

/**
 * The same check the search makes, in flag names: which flag goes with which kind is what
 * people get wrong, so the message lists them all.
 */
function checkFlagsForKind(flags: SearchFlags): void {
  const given = (Object.keys(FLAG) as SearchFilter[]).filter((f) => flags[f] !== undefined)
  const wrong = given.filter(
    (filter) => flags.kind !== undefined && !FILTER_KINDS[filter].includes(flags.kind),
  )
  if (wrong.length > 0) {
    throw usage(
      `${wrong.map((f) => FLAG[f]).join(', ')} ${wrong.length === 1 ? 'does' : 'do'} not go with --kind ${String(flags.kind)}. The flags of each kind are ${flagsByKind()}.`,
    )
  }
  if (!SEARCH_KINDS.some((kind) => given.every((filter) => FILTER_KINDS[filter].includes(kind)))) {
    throw usage(
      `${given.map((f) => FLAG[f]).join(', ')} do not go together: no kind takes them all. The flags of each kind are ${flagsByKind()}.`,
    )
  }
}

function queryOf(words: readonly string[], flags: SearchFlags): SearchQueryInput {
  checkFlagsForKind(flags)
  let limit: number | undefined
  if (flags.limit !== undefined) {
    limit = Number(flags.limit)
    if (!/^\d+$/.test(flags.limit) || limit < 1 || limit > SEARCH_LIMIT_MAX) {
      throw usage(`--limit must be a whole number from 1 to ${SEARCH_LIMIT_MAX}.`)
    }
  }
  const { limit: _limit, ...rest } = flags
  return {
    // Commander leaves flags not given out; the search checks the values.
    ...(rest as Omit<SearchQueryInput, 'text' | 'limit'>),
    text: words.join(' '),
    ...(limit === undefined ? {} : { limit }),
  }
}

export function registerSearch(program: Command, context: CommandContext): void {
  program
    .command('search')
    .description('search the local mirror, offline: runs, evaluations and assets')
    .argument('[words...]', 'words to look for (leave out to list, newest first)')
    .addOption(new Option('--kind <kind>', 'only this kind').choices(SEARCH_KINDS))
    .option('--status <status>', 'runs, evaluations: a status, e.g. failed')
    .option('--model <provider/model>', 'runs, evaluations: the model, e.g. atelier/upscale')
    .option('--from <date>', 'created on or after: 2026-03-01 or 2026-03-01T09:30:00Z (UTC)')
    .option('--to <date>', 'created before; a day counts whole: --to 2026-03-31')
    .addOption(new Option('--verdict <verdict>', 'evaluations').choices(['passed', 'failed']))
    .addOption(
      new Option('--feedback <feedback>', 'evaluations').choices(['positive', 'negative', 'none']),
    )
    .option('--folder <path-or-id>', 'assets: a folder, e.g. /Clients/Nordlys; / for the root')
    .addOption(new Option('--media-type <type>', 'assets').choices(MEDIA_TYPES))
    .option('--limit <n>', `results per page, 1 to ${SEARCH_LIMIT_MAX} (default 20)`)
    .option('--cursor <cursor>', 'the next page, as the previous page printed it')
    .addHelpText(
      'after',
      `\nFlags per kind: ${flagsByKind()}.\nWorks offline, from what \`atelier sync\` brought in.`,
    )
    .action(async (words: string[], flags: SearchFlags) => {
      const query = queryOf(words, flags)
      const { search } = await import('../actions/search')
      await search(context, words, query)
    })
}

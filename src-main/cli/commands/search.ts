import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Option, type Command } from 'commander'
import { MIRROR_FILE, openDatabases, type Mirror } from '../../db'
import { isSecretsError, readProfiles } from '../../secrets'
import { isSearchError, MirrorSearch, syncedOrganizations, syncedProfiles } from '../../search'
import {
  FILTER_KINDS,
  MEDIA_TYPES,
  SEARCH_KINDS,
  SEARCH_LIMIT_MAX,
  type SearchFilter,
  type SearchKind,
  type SearchQueryInput,
  type SearchResult,
  type SearchResultItem,
  type SearchSnippet,
} from '../../../src-shared/domain/search'
import { EXIT } from '../exit-codes'
import { CliError, type CommandContext } from '../program'

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

const nothingSynced = (profile: string | null) =>
  new CliError(
    `Nothing synced yet${profile === null ? '' : ` for profile ${profile}`}; run \`atelier sync\` first, then search again.`,
    EXIT.failed,
    'NOTHING_SYNCED',
  )

/**
 * The profile whose synced records are searched (named, current, or the only one the mirror
 * holds) and its organization, from the mirror's sync cursors: no keychain, no service.
 */
async function organizationOf(home: string, named: string | undefined, mirror: Mirror) {
  let name = named ?? null
  let organization: string | null = null
  try {
    const state = await readProfiles(home)
    name ??= state.current
    organization = state.profiles.find((p) => p.name === name)?.organization_id ?? null
  } catch (error) {
    if (!isSecretsError(error)) throw error
    throw new CliError(error.message, EXIT.failed, error.code)
  }
  if (name === null) {
    const synced = syncedProfiles(mirror)
    if (synced[0] === undefined) throw nothingSynced(null)
    if (synced.length > 1) {
      throw usage(
        `No profile is selected and the mirror holds several (${synced.join(', ')}). Pass --profile NAME.`,
        'NO_PROFILE',
      )
    }
    name = synced[0]
  }
  const synced = syncedOrganizations(mirror, name)
  // The profile's own organization when it names one; else the one synced last.
  const chosen = synced.find((s) => s.orgId === organization) ?? synced[0]
  return { profile: name, orgId: chosen?.orgId ?? null }
}

function highlighted(snippet: SearchSnippet, bold: boolean): string {
  const [open, close] = bold ? ['\u001b[1m', '\u001b[22m'] : ['[', ']']
  let text = ''
  let at = 0
  for (const [start, end] of snippet.highlights) {
    text += snippet.text.slice(at, start) + open + snippet.text.slice(start, end) + close
    at = end
  }
  return text + snippet.text.slice(at)
}

const cut = (text: string, width: number) =>
  text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`

function stateOf(item: SearchResultItem): string {
  if (item.kind === 'run') return item.status
  if (item.kind === 'evaluation') return item.verdict ?? item.status ?? ''
  return item.mediaType
}

function table(result: SearchResult, words: string, bold: boolean): string {
  if (result.items.length === 0) {
    return words === ''
      ? 'Nothing in the mirror passes these filters.'
      : `Nothing in the mirror matches "${words}".`
  }
  const lines = result.items.map((item) => {
    const date = item.createdAt.slice(0, 16).replace('T', ' ')
    const title =
      item.kind === 'asset' && item.folderPath ? `${item.folderPath}/${item.title}` : item.title
    const match =
      item.snippet === null ? '' : `  ${item.matchedIn ?? ''}: ${highlighted(item.snippet, bold)}`
    return `${cut(item.kind, 10)} ${date}  ${cut(stateOf(item), 9)}  ${cut(title, 40)}${match}`
  })
  const notes = [
    `${result.items.length} ${result.mode === 'ranked' ? 'best matches' : 'newest first'} (times in UTC).`,
  ]
  if (result.bounded) {
    notes.push('Only the newest matches were ranked: add a word or a filter to reach older ones.')
  }
  if (result.next !== null) notes.push(`Next page: add --cursor ${result.next}`)
  return [
    `${'KIND'.padEnd(10)} ${'CREATED'.padEnd(16)}  ${'STATE'.padEnd(9)}  TITLE`,
    ...lines,
    '',
    ...notes,
  ].join('\n')
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
      const globals = context.globals()
      if (!existsSync(join(globals.home, MIRROR_FILE))) throw nothingSynced(globals.profile ?? null)
      const dbs = openDatabases(globals.home)
      try {
        const { profile, orgId } = await organizationOf(globals.home, globals.profile, dbs.mirror)
        if (orgId === null) throw nothingSynced(profile)
        let result: SearchResult
        try {
          result = new MirrorSearch(dbs.mirror).search({ orgId }, query)
        } catch (error) {
          if (!isSearchError(error)) throw error
          throw new CliError(error.message, EXIT.usage, error.code)
        }
        const bold = process.stdout.isTTY && process.env.NO_COLOR === undefined
        context.print(result, table(result, words.join(' ').trim(), bold))
      } finally {
        dbs.close()
      }
    })
}
